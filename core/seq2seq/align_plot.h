// Alignment plots as in Figure 3 of Bahdanau et al.: output characters down the side, input
// characters along the top, one grey cell per attention weight (white = 1, black = 0), written
// as PNG or SVG. Small and self-contained so the CLI and tests need no GUI.
#pragma once

#include <string>
#include <vector>

#include "tensor.h"

namespace attn::s2s {

struct AlignmentPlot {
  std::string title;
  std::vector<std::string> rows;  // output characters (</s> last)
  std::vector<std::string> cols;  // input characters
  Mat<float> weights;             // (rows, cols), each in [0, 1]
};

std::string alignment_svg(const AlignmentPlot& plot);
// PNG bytes (glyphs from the DejaVu font of fonts-dejavu-core); false with error when no font.
bool alignment_png(const AlignmentPlot& plot, std::string& png, std::string& error);
// Chooses PNG or SVG by the extension of `path` and writes atomically.
bool write_alignment_plot(const AlignmentPlot& plot, const std::string& path, std::string& error);

}  // namespace attn::s2s
