// The heatmap widget every panel uses: axis titles ("queries ↓", "keys →"), query tokens down the
// side, key tokens along the top (smaller, turned upright or abbreviated before any is dropped),
// numbers in the cells sized to the cells, hidden cells hatched, row sums and entropy when there is
// room, a colour bar, zoom (wheel) and pan (drag), hover tooltips and clicks; and what a lesson
// adds on top: cells hidden until a prediction is revealed, a stage change's animation, and the
// cells an edit just changed.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/matrix.h"
#include "gui/heatmap_colors.h"
#include "gui/widget_context.h"
#include "render/color_scale.h"

namespace attn {

struct AnimatedFrame;

struct HeatmapSpec {
  std::string id;           // view id in the context's views (zoom and pan)
  std::string texture_key;  // the renderer's texture cache key; "" = id
  uint64_t serial = 0;      // when the matrix changes for the texture cache; 0 = the trace's
  const Matrix* m = nullptr;
  const ReasonMatrix* hidden = nullptr;  // cells hidden by the mask (hatched), or null
  const char* matrix_name = "";          // for tooltips, e.g. "weights"
  bool hidden_are_zero = false;  // hidden cells are weights of 0 (after a softmax), not −∞
  std::vector<std::string> row_labels, col_labels;  // empty = indices
  std::string row_axis, col_axis;                   // "queries ↓", "keys →"; "" = none
  ColorScale scale;
  int selected_row = -1, selected_col = -1;
  bool row_stats = false;  // Σ and entropy of each row (weights), when there is room
  bool color_bar = true;
  bool labels = true;            // token labels and row statistics (off for thumbnails)
  bool interactive = true;       // tooltips, clicks, zoom and pan
  bool row_labels_shown = true;  // off when a neighbour heatmap already names the rows
  bool cell_text = true;         // grid lines and numbers in the cells (off: colours only)
  float cell = 0;           // fixed cell size in pixels at zoom 1 (side-by-side matrices); 0 = fit
  float max_cell = 150.0f;  // pixels at zoom 1, times the font scale; 0 = as large as the room
  float min_number_px = 0;  // numbers no smaller than this, else left out (0: the layout's rule)
  // Presentation: the cells' size comes before the extras (heatmap_layout's `cells_first`).
  bool cells_first = false;
  ImVec2 size{0, 0};  // 0 = the rest of the window
  int decimals = -1;  // numbers in the cells; -1 = the user's setting
  // A lesson's overlays (all optional).
  std::function<bool(int, int)> concealed;  // cell hidden until a prediction is revealed
  // A label that would tell a hidden cell's value (the colour bar's extremes): drawn as "?".
  std::function<bool(const std::string&)> hides_label;
  std::function<float(int, int)> flash;  // 0..1: the cell changed in the latest edit
  const AnimatedFrame* anim = nullptr;   // a stage change in progress
  ColorScale anim_from_scale;            // the colours `anim->from` is drawn with
};

struct HeatmapEvent {
  int row = -1, col = -1;  // a click on a cell (col = -1: on a row label)
  bool clicked = false;
  int picked_col = -1;  // a click on a key label (top)
};

HeatmapEvent draw_heatmap(const WidgetContext& ctx, const HeatmapSpec& spec);

// What the heatmap's layout depends on: the room, the font size, the matrix's shape, the view's
// zoom and pan, the spec's choices and the text widths the caller measured (at the font size).
struct HeatmapLayoutInput {
  ImVec2 pos{0, 0}, avail{0, 0};  // top-left corner and room on screen
  float font = 20;                // font size in pixels
  int rows = 0, cols = 0;
  float zoom = 1;
  ImVec2 pan{0, 0};
  bool labels = true, row_labels_shown = true, row_stats = false, color_bar = true;
  bool cell_text = true;
  bool row_axis = false, col_axis = false;  // axis titles given
  bool legend = false;                      // a hidden-cell legend (some cell is hidden)
  float cell = 0, max_cell = 150.0f;        // as in HeatmapSpec
  float min_number_px = 0;                  // as in HeatmapSpec
  // The cells before the extras (presentation): no axis-title line, row statistics only where
  // they cost the cells nothing, the colour bar where it leaves the larger cells.
  bool cells_first = false;
  // With cells_first, rows or columns too many for 16 px labels show a window of them around
  // these (the selected query and key; -1: the first) instead of leaving labels out.
  int focus_row = -1, focus_col = -1;
  // Widest row label, column label and cell number at the font size.
  float row_label_w = 0, col_label_w = 0, number_w = 0;
  float row_axis_w = 0;     // the row axis title at 0.85 × the font size
  float stats_text_w = 0;   // a row's statistics ("Σ 1.00  H 10.00") at the font size
  float bar_tick_w = 0;     // the colour bar's widest tick label (for a bar standing right)
  float legend_text_w = 0;  // the legend's text
};

// Where everything goes, in screen pixels. A pure function of its input (no ImGui calls), so a
// headless test can check it.
struct HeatmapLayout {
  float pad = 0, min_lf = 0, axis_size = 0;  // padding; smallest label font; axis title font
  bool row_names = false;                    // query tokens down the left
  float row_axis_w = 0;
  float label_w = 0;  // the row labels' column, left of the grid
  float cap_h = 0;    // the axis titles' line, above everything
  float band = 0;     // the key labels' band, above the grid
  float bottom = 0;   // under the grid: colour bar and legend
  float stats_w = 0;  // the row statistics' column, when shown
  bool show_stats = false;
  bool bar_right = false;     // the colour bar stands right of the grid (else lies under it)
  bool legend_below = false;  // the hidden-cell legend on a line of its own
  float bar_w = 0;    // a lying bar shortened to keep the legend beside it (0: the grid's width)
  ImVec2 base{0, 0};  // cell size at zoom 1
  float col_lf = 0;   // key label font size
  bool vertical = false;                       // key labels turned upright
  int col_every = 1, row_every = 1;            // a label every so many columns / rows
  float row_lf = 0;                            // query label font size
  float cell_w = 0, cell_h = 0;                // cell size at the zoom
  ImVec2 vp0{0, 0}, vp_size{0, 0}, vp1{0, 0};  // the grid's viewport
  ImVec2 pan{0, 0};                            // the pan, kept so the matrix covers the viewport
  ImVec2 origin{0, 0};                         // cell (0, 0)'s top-left corner
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0;          // rows and columns in view
  bool small = false;                          // few enough cells in view to draw each one's text
  bool windowed = false;  // presentation: a window of the rows or columns, each labelled
  float number_size = 0;  // cell numbers' font size
  bool numbers_shown = false;
};

HeatmapLayout heatmap_layout(const HeatmapLayoutInput& in);

// Text drawn straight into a draw list, recorded in the context's text_log when a test asks (so a
// layout test can check it against the clip rectangle). `vertical` turns it 90° to read bottom to
// top, starting at `pos` (the bottom-left corner of the turned text).
void draw_text(const WidgetContext& ctx, ImDrawList* dl, ImFont* font, float size, ImVec2 pos,
               ImU32 col, const std::string& text, bool vertical = false);
// The width of text at a font size (CalcTextSize of another font and size).
float text_width(ImFont* font, float size, const std::string& text);
// The longest prefix of `text` that fits `width` with an ellipsis, or `text` when it fits.
std::string abbreviate(ImFont* font, float size, const std::string& text, float width);

// A colour bar (the map from t = 0 to 1) with tick values under it, `width` wide at the cursor's
// line; returns its height. Used by heatmaps and the seq2seq alignment plot.
// A tick label `hide` holds is drawn as "?" (it would tell a hidden value).
using LabelFilter = std::function<bool(const std::string&)>;
float draw_color_bar(const WidgetContext& ctx, ImDrawList* dl, ImVec2 pos, float width,
                     const ColorScale& scale, const LabelFilter& hide = {});

}  // namespace attn
