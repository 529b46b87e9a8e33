// Colour maps shared by the exporters and the app: colour-blind-safe sequential maps (viridis
// default, cividis, magma, grayscale) and a diverging map for signed scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// Names: "viridis", "cividis", "magma", "grayscale", "diverging".
const std::vector<std::string>& colormap_names();
bool is_colormap(const std::string& name);
bool is_diverging(const std::string& name);
// Colour at t in [0, 1] (clamped); the diverging map has its neutral colour at t = 0.5.
Rgb colormap_color(const std::string& name, double t);
// The map an exporter uses for a stage when none is asked for: diverging for signed data
// (scores, scaled, masked, projections), viridis for weights and other non-negative data.
std::string default_colormap_for(const std::string& step_id, double min_value);

// The values a stage's colours span, one rule for the app and the exporter so a slide matches the
// screen. Weights over at most kWeightsFullRangeKeys keys span [0, 1], so 0.5 always looks the
// same; with more keys every weight is small and [0, largest] keeps the pattern visible. A
// diverging map is symmetric around 0 (its neutral colour means 0); anything else spans
// [smallest, largest], widened by 1 each way when they are equal. `mn` and `mx` are the smallest
// and largest finite values shown (mn > mx: none).
constexpr int kWeightsFullRangeKeys = 32;
struct ValueRange {
  double lo = 0, hi = 1;
};
ValueRange stage_value_range(const std::string& step_id, long long cols, bool diverging, double mn,
                             double mx);

}  // namespace attn
