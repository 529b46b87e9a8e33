// The geometry of an exported heatmap: a scene of rectangles and text in pixels, built once and
// drawn by both the PNG and the SVG writer, so the two images are identical. Tests and the app
// use HeatmapLayout to find where each cell is.
#pragma once

#include <string>
#include <vector>

#include "attention/attention.h"
#include "render/colormap.h"
#include "render/heatmap_export.h"
#include "render/raster_text.h"

namespace attn {

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
  int right() const { return x + w; }
  int bottom() const { return y + h; }
};

struct HeatmapLayout {
  int width = 0, height = 0;  // the whole image
  int rows = 0, cols = 0;     // of the matrix drawn
  int cell = 0;       // grid pitch: cell (i, j) starts at grid.x + j·cell, grid.y + i·cell
  int separator = 0;  // white gap at the right and bottom of every cell
  PixelRect grid;     // rows·cell × cols·cell
  PixelRect colorbar;
  bool annotate = false;  // numbers in the cells
  std::string colormap;   // the map actually used
  // Values map to t = (v − lo) / (hi − lo) in the colour map. Diverging maps use lo = −hi, so 0 is
  // the neutral colour; weights use [0, max]; other data [min, max].
  double lo = 0, hi = 1;
  std::string step;
  int matrix_index = 0;  // which entry of the step's heads is drawn

  // The coloured area of cell (i, j), without its separator.
  PixelRect cell_rect(int i, int j) const {
    return {grid.x + j * cell, grid.y + i * cell, cell - separator, cell - separator};
  }
  double value_to_t(double v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }
};

// One thing to draw. The writers know nothing about attention, only these.
struct SceneItem {
  enum class Kind { kRect, kHatch, kText, kColorBar };
  Kind kind = Kind::kRect;
  PixelRect rect;       // rect, hatch, colour bar
  Rgb color{0, 0, 0};   // fill, text colour, hatch background
  Rgb color2{0, 0, 0};  // hatch lines
  int hatch_spacing = 6, hatch_width = 1;
  std::string text;                           // text: anchored at (x, y) on the baseline
  double x = 0, y = 0, size = 12, angle = 0;  // angle: degrees counter-clockwise
  bool bold = false;
  TextAnchor anchor = TextAnchor::kStart;
  std::string cls;         // role, written as the SVG class: "cell", "num", "label", ...
  int row = -1, col = -1;  // for cells and their numbers
};

struct HeatmapScene {
  HeatmapLayout layout;
  std::vector<SceneItem> items;
};

// "" when the options suit the trace, else an error naming the flag (--step, --head,
// --colormap, --width) that lists what is valid.
std::string check_heatmap_options(const AttentionTrace& trace, const HeatmapOptions& options);

// Lays out and composes the picture. False with `error` for bad options or missing fonts.
bool build_heatmap_scene(const AttentionTrace& trace, const HeatmapOptions& options,
                         HeatmapScene& scene, std::string& error);
bool layout_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    HeatmapLayout& layout, std::string& error);

// The writers: an SVG document, and PNG file bytes.
std::string render_heatmap_svg(const HeatmapScene& scene);
bool render_heatmap_png(const HeatmapScene& scene, std::string& png, std::string& error);

}  // namespace attn
