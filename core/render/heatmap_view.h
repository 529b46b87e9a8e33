// What an exported heatmap shows, before any pixel size is chosen: the matrix of one stage and
// head, its labels, masked cells, numbers, row sums, colour scale and captions. Internal to the
// exporter (heatmap_layout.cpp places it on the page).
#pragma once

#include <string>
#include <vector>

#include "attention/attention.h"
#include "render/heatmap_export.h"

namespace attn {

// Everything about the stage that does not depend on pixel sizes.
struct HeatmapView {
  const TraceStep* step = nullptr;
  const Matrix* m = nullptr;  // the matrix drawn: step->heads[index]
  int index = 0;
  std::string head_text;   // "head 1 (kv 0)", "kv head 1 (used by head 3)" or ""
  bool attention = false;  // rows are queries and columns keys (scores … weights)
  std::vector<std::string> row_labels, col_labels;
  std::string row_axis, col_axis;    // "queries ↓", "keys →", "dimensions →"
  std::string noun_rows, noun_cols;  // "queries", "keys", "dimensions", "tokens"
  std::vector<uint8_t> hidden;       // per cell (row-major): drawn as a masked cell
  bool any_hidden = false;
  std::vector<std::string> numbers;  // per cell (row-major), as printed in the cell
  std::vector<std::string> sums;     // per row, "Σ = 1.00" (weights only)
  std::string title, formula, note;  // "Attention weights", "weights = softmax(masked)", note
  std::string colormap;
  double lo = 0, hi = 1;  // value range of the colour map (see HeatmapLayout)
  std::vector<double> ticks;
  int tick_decimals = 2;
  std::string legend;  // what a hatched cell means, when there is one
  std::string name, mask_text;
  std::string subtitle;  // head · example · shape · mask · note
};

// The options must have passed check_heatmap_options.
HeatmapView make_heatmap_view(const AttentionTrace& trace, const HeatmapOptions& options);

}  // namespace attn
