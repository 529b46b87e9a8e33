// Alignment plots as in Figure 3 of Bahdanau et al.: output characters down the side, input
// characters along the top, one grey cell per attention weight (white = 1, black = 0), and
// accuracy-by-length charts as in their Figure 2, written as PNG or SVG. Small and
// self-contained so the CLI and tests need no GUI.
#pragma once

#include <string>
#include <vector>

#include "attention/matrix.h"
#include "render/image_format.h"

namespace attn {

struct AlignmentPlot {
  std::string title;
  std::vector<std::string> rows;  // output characters (</s> last)
  std::vector<std::string> cols;  // input characters
  Matrix weights;                 // (rows, cols), each in [0, 1]
  Matrix visible;                 // optional (rows, cols): 0 = outside a local window (drawn blue)
};

std::string alignment_svg(const AlignmentPlot& plot);
// PNG bytes (text with the exporter's DejaVu Sans, core/raster_text.h); false with error when
// the font is missing.
bool alignment_png(const AlignmentPlot& plot, std::string& png, std::string& error);
// Several plots one above the other (e.g. two score functions on the same input).
std::string alignment_svg(const std::vector<AlignmentPlot>& plots);
bool alignment_png(const std::vector<AlignmentPlot>& plots, std::string& png, std::string& error);
// PNG or SVG file bytes of the plots.
bool render_alignment_plots(const std::vector<AlignmentPlot>& plots, ImageFormat format,
                            std::string& bytes, std::string& error);

// Accuracy against input length, one line per model: the analogue of Bahdanau et al.'s Figure 2.
struct AccuracyChart {
  std::string title;
  std::vector<std::string> buckets;           // x axis labels, e.g. "6-10"
  std::vector<std::string> series;            // one name per model
  std::vector<std::vector<double>> accuracy;  // [series][bucket], each in [0, 1]
};
std::string accuracy_chart_svg(const AccuracyChart& chart);
bool accuracy_chart_png(const AccuracyChart& chart, std::string& png, std::string& error);
bool render_accuracy_chart(const AccuracyChart& chart, ImageFormat format, std::string& bytes,
                           std::string& error);

}  // namespace attn
