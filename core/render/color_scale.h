// How a stage's values map to colours, one rule for the app and every export: which colour map,
// and the range [lo, hi] that spans it; and the colour bar's tick labels.
#pragma once

#include <string>
#include <vector>

#include "attention/matrix.h"
#include "render/colormap.h"

namespace attn {

// A colour map and the value range it spans: value v is drawn at t = (v − lo) / (hi − lo).
struct ColorScale {
  std::string map = "viridis";
  double lo = 0, hi = 1;  // hi > lo always
  double t(double v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }
  Rgb color(double v) const { return colormap_color(map, t(v)); }
};

// The maps a user has chosen: one for data that is never negative, one for signed data.
struct ColormapChoice {
  std::string sequential = "viridis";
  std::string diverging = "diverging";
  // Both the same map (the exporter's --colormap NAME).
  static ColormapChoice only(const std::string& name) { return {name, name}; }
};

// The scale of stage `step_id` drawing matrix m (non-finite values, i.e. −∞ of hidden cells,
// are ignored):
// - signed data (any value < 0), or any data drawn with a diverging map: the signed map,
//   symmetric around 0, so the neutral colour means 0;
// - weights: [0, 1] when a row has at most 32 keys, so 0.5 always looks the same; with more
//   keys every weight is small and [0, largest weight] keeps the pattern visible;
// - other data: [min, max] on the sequential map.
ColorScale color_scale_for(StageId step_id, const Matrix& m, const ColormapChoice& maps = {});

struct ColorTick {
  double value = 0;
  std::string label;  // "0", "0.25", "−0.54", "0.0123"
};

// Tick labels for a colour bar: both ends written with the precision their size needs (three
// significant digits: "0.0123", "0.67", "250"), and between them up to max_ticks − 2 round values
// (0.2, 0.4, ...) that keep clear of the ends. Labels are distinct and never all "0.00".
std::vector<ColorTick> colorbar_ticks(const ColorScale& scale, int max_ticks = 6);

}  // namespace attn
