// Seq2seq pictures for the CLI: alignment plots as in Figure 3 of Bahdanau et al. (output
// characters down the side, input characters along the top, one cell per attention weight, a
// colour bar), drawn as labelled matrices; and accuracy-by-length charts as in their Figure 2.
// PNG, SVG or PDF bytes through the one drawing path (render/scene.h).
#pragma once

#include <string>
#include <vector>

#include "attention/matrix.h"
#include "render/image_format.h"
#include "render/labelled_matrix.h"

namespace attn {

struct AlignmentPlot {
  std::string title;
  std::string subtitle;           // a grey line under the title, e.g. "after 200 batches"
  std::vector<std::string> rows;  // output characters (</s> last)
  std::vector<std::string> cols;  // input characters
  Matrix weights;                 // (rows, cols), each in [0, 1]
  Matrix visible;                 // optional (rows, cols): 0 = outside a local window (hatched)
  std::string colormap = "viridis";
};

// The plot as a labelled matrix (a worksheet draws it as a figure among its questions).
LabelledMatrix alignment_matrix(const AlignmentPlot& p);

// Several plots one above the other (e.g. two score functions on the same input).
bool render_alignment_plots(const std::vector<AlignmentPlot>& plots, ImageFormat format,
                            std::string& bytes, std::string& error);

// Accuracy against input length, one line per model: the analogue of Bahdanau et al.'s Figure 2.
struct AccuracyChart {
  std::string title;
  std::vector<std::string> buckets;           // x axis labels, e.g. "6-10"
  std::vector<std::string> series;            // one name per model
  std::vector<std::vector<double>> accuracy;  // [series][bucket], each in [0, 1]
};
bool render_accuracy_chart(const AccuracyChart& chart, ImageFormat format, std::string& bytes,
                           std::string& error);

}  // namespace attn
