// TEMPORARY stand-ins for core APIs other helpers are implementing (colour maps, heatmap
// export), so this branch links before they land in main. Deleted when they are merged.
#include <algorithm>
#include <cmath>

#include "colormap.h"
#include "heatmap_export.h"

namespace attn {
namespace {
struct Anchor {
  double t;
  Rgb c;
};
Rgb lerp(const std::vector<Anchor>& a, double t) {
  t = std::clamp(t, 0.0, 1.0);
  for (size_t i = 1; i < a.size(); ++i)
    if (t <= a[i].t) {
      const double u = (t - a[i - 1].t) / (a[i].t - a[i - 1].t);
      auto mix = [u](uint8_t x, uint8_t y) {
        return static_cast<uint8_t>(std::lround(x + (y - x) * u));
      };
      return {mix(a[i - 1].c.r, a[i].c.r), mix(a[i - 1].c.g, a[i].c.g),
              mix(a[i - 1].c.b, a[i].c.b)};
    }
  return a.back().c;
}
}  // namespace

const std::vector<std::string>& colormap_names() {
  static const std::vector<std::string> n = {"viridis", "cividis", "magma", "grayscale",
                                             "diverging"};
  return n;
}
bool is_colormap(const std::string& name) {
  const auto& n = colormap_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}
bool is_diverging(const std::string& name) { return name == "diverging"; }
Rgb colormap_color(const std::string& name, double t) {
  if (name == "grayscale") return lerp({{0, {0, 0, 0}}, {1, {255, 255, 255}}}, t);
  if (name == "magma")
    return lerp({{0, {0, 0, 4}},
                 {0.25, {81, 18, 124}},
                 {0.5, {183, 55, 121}},
                 {0.75, {252, 137, 97}},
                 {1, {252, 253, 191}}},
                t);
  if (name == "cividis")
    return lerp({{0, {0, 32, 77}},
                 {0.25, {64, 77, 107}},
                 {0.5, {124, 123, 120}},
                 {0.75, {188, 175, 111}},
                 {1, {255, 234, 70}}},
                t);
  if (name == "diverging")
    return lerp({{0, {5, 48, 97}},
                 {0.25, {67, 147, 195}},
                 {0.5, {247, 247, 247}},
                 {0.75, {214, 96, 77}},
                 {1, {103, 0, 31}}},
                t);
  return lerp({{0, {68, 1, 84}},
               {0.25, {59, 82, 139}},
               {0.5, {33, 145, 140}},
               {0.75, {94, 201, 98}},
               {1, {253, 231, 37}}},
              t);
}
std::string default_colormap_for(const std::string& step_id, double min_value) {
  return step_id == "weights" || min_value >= 0 ? "viridis" : "diverging";
}

bool export_heatmap(const AttentionTrace&, const HeatmapOptions&, const std::string&,
                    std::string& error) {
  error = "the heatmap exporter (core/heatmap_export.cpp) has not landed in this build yet";
  return false;
}
}  // namespace attn
