// The heatmap widget every panel uses: query tokens down the side, key tokens along the top,
// numbers in the cells when they fit, hidden cells hatched, row sums and entropy, a colour bar,
// zoom (wheel) and pan (drag), hover tooltips and clicks.
#pragma once

#include <string>
#include <vector>

#include "gui/ui.h"

namespace attn {

struct HeatmapSpec {
  std::string id;           // view id in Ui::views (zoom and pan)
  std::string texture_key;  // the renderer's texture cache key; "" = id
  uint64_t serial = 0;      // when the matrix changes for the texture cache; 0 = the trace's
  const Matrix* m = nullptr;
  const ReasonMatrix* hidden = nullptr;             // cells hidden by the mask (hatched), or null
  const char* matrix_name = "";                     // for tooltips, e.g. "weights"
  std::vector<std::string> row_labels, col_labels;  // empty = indices
  ColorScale scale;
  int selected_row = -1, selected_col = -1;
  bool row_stats = false;  // Σ and entropy of each row (weights)
  bool color_bar = true;
  bool labels = true;            // token labels and row statistics (off for thumbnails)
  bool interactive = true;       // tooltips, clicks, zoom and pan
  bool row_labels_shown = true;  // off when a neighbour heatmap already names the rows
  float cell = 0;           // fixed cell size in pixels at zoom 1 (side-by-side matrices); 0 = fit
  float max_cell = 150.0f;  // pixels at zoom 1, times the font scale
  ImVec2 size{0, 0};        // 0 = the rest of the window
};

struct HeatmapEvent {
  int row = -1, col = -1;  // a click on a cell (col = -1: on a row label)
  bool clicked = false;
};

HeatmapEvent draw_heatmap(Ui& ui, const HeatmapSpec& spec);

// The colour the shader and the rectangle path both give t in [0, 1]: the map's 256-entry table
// at the nearest entry.
ImU32 colormap_u32(const std::string& map, float t);
// Hidden-cell hatch colours for the theme.
ImU32 hatch_color(bool light, int which);

}  // namespace attn
