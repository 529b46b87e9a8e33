// What the drawing widgets (heatmap_widget.h, chart_widget.h) use of the app, and nothing more:
// the theme and the cells' precision, the cell font, the GPU renderer, each heatmap's pan, zoom
// and last layout by id, the test probes' text log and the trace's serial. ui.h's
// widgets(ui) makes one from the app's state; a test can make one without a Ui.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn {

class HeatmapRenderer;

// Pan and zoom of one heatmap, and where its cells were drawn last frame (tests, screenshots).
struct HeatmapViewport {
  float zoom = 1.0f;
  ImVec2 pan{0, 0};  // pixels
  // Last layout, in screen pixels.
  ImVec2 origin{0, 0};  // top-left of cell (0, 0) before clipping
  float cell_w = 0, cell_h = 0;
  ImVec4 clip{0, 0, 0, 0};  // visible area x0, y0, x1, y1
  int rows = 0, cols = 0;
  bool drawn = false;
  bool dragged = false;  // the current press became a pan, so its release is not a click
  // Measured once per trace, font and precision (not every frame): the widest row label, column
  // label and number at the font size, and whether any cell is hidden.
  std::string measured_for;
  float row_label_w = 0, col_label_w = 0, number_w = 0;
  bool any_hidden = false;
  // How the last frame laid the labels out (tests read it): labels drawn turned upright,
  // shortened with an ellipsis, or left out because there was no room.
  bool col_labels_vertical = false;
  int labels_abbreviated = 0, labels_dropped = 0;
  bool numbers_shown = false;
  float number_px = 0;                 // the size the cell numbers were drawn at
  int hover_row = -1, hover_col = -1;  // the cell under the pointer last frame (-1: none)
  bool row_stats_shown = false;
  ImVec2 cell_min(int i, int j) const { return {origin.x + j * cell_w, origin.y + i * cell_h}; }
  ImVec2 cell_center(int i, int j) const {
    return {origin.x + (j + 0.5f) * cell_w, origin.y + (i + 0.5f) * cell_h};
  }
};

// Text a panel drew straight into a draw list, with the clip rectangle it was drawn under (layout
// tests check that nothing is cut).
struct PlacedText {
  ImVec2 min, max;                // the text's box on screen
  ImVec2 clip_min, clip_max;      // the draw list's clip rectangle at the time
  ImVec2 window_min, window_max;  // the window's own clip rectangle
  // The window scrolls to what its edges cut: down, or across with a scrollbar to show it.
  bool scrolls_x = false, scrolls_y = false;
  std::string text;
};

struct WidgetContext {
  bool light_theme = true;
  int decimals = 2;                     // numbers in cells, unless a spec says otherwise
  ImFont* cell_font = nullptr;          // large digits for cell numbers (null: the current font)
  HeatmapRenderer* renderer = nullptr;  // null when headless: cells are drawn as rectangles
  std::map<std::string, HeatmapViewport>* views = nullptr;  // by heatmap id (must be set)
  std::vector<PlacedText>* text_log = nullptr;              // tests: text drawn into draw lists
  uint64_t trace_serial = 0;  // the texture cache key's serial for a spec without its own
};

}  // namespace attn
