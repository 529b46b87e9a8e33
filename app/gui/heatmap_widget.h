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

#include "gui/ui.h"

namespace attn {

struct AnimatedFrame;

struct HeatmapSpec {
  std::string id;           // view id in Ui::views (zoom and pan)
  std::string texture_key;  // the renderer's texture cache key; "" = id
  uint64_t serial = 0;      // when the matrix changes for the texture cache; 0 = the trace's
  const Matrix* m = nullptr;
  const ReasonMatrix* hidden = nullptr;             // cells hidden by the mask (hatched), or null
  const char* matrix_name = "";                     // for tooltips, e.g. "weights"
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
  ImVec2 size{0, 0};        // 0 = the rest of the window
  int decimals = -1;        // numbers in the cells; -1 = the user's setting
  // A lesson's overlays (all optional).
  std::function<bool(int, int)> concealed;  // cell hidden until a prediction is revealed
  std::function<float(int, int)> flash;     // 0..1: the cell changed in the latest edit
  const AnimatedFrame* anim = nullptr;      // a stage change in progress
  ColorScale anim_from_scale;               // the colours `anim->from` is drawn with
};

struct HeatmapEvent {
  int row = -1, col = -1;  // a click on a cell (col = -1: on a row label)
  bool clicked = false;
  int picked_col = -1;  // a click on a key label (top)
};

HeatmapEvent draw_heatmap(Ui& ui, const HeatmapSpec& spec);

// The colour the shader and the rectangle path both give t in [0, 1]: the map's 256-entry table
// at the nearest entry.
ImU32 colormap_u32(const std::string& map, float t);
// Where value x falls on a scale, 0..1 (clamped).
float scale_position(const ColorScale& s, float x);
// Hidden-cell hatch colours for the theme.
ImU32 hatch_color(bool light, int which);

// Text drawn straight into a draw list, recorded in Ui::text_log when a test asks (so a layout
// test can check it against the clip rectangle). `vertical` turns it 90° to read bottom to top,
// starting at `pos` (the bottom-left corner of the turned text).
void draw_text(Ui& ui, ImDrawList* dl, ImFont* font, float size, ImVec2 pos, ImU32 col,
               const std::string& text, bool vertical = false);
// The width of text at a font size (CalcTextSize of another font and size).
float text_width(ImFont* font, float size, const std::string& text);
// The longest prefix of `text` that fits `width` with an ellipsis, or `text` when it fits.
std::string abbreviate(ImFont* font, float size, const std::string& text, float width);

// A colour bar (the map from t = 0 to 1) with tick values under it, `width` wide at the cursor's
// line; returns its height. Used by heatmaps and the seq2seq alignment plot.
float draw_color_bar(Ui& ui, ImDrawList* dl, ImVec2 pos, float width, const ColorScale& scale);

}  // namespace attn
