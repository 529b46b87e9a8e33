#include "gui/heatmap_colors.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "render/color_scale.h"
#include "render/colormap.h"

namespace attn {

const std::array<ImU32, 256>& colormap_table(const std::string& map) {
  static std::map<std::string, std::array<ImU32, 256>> cache;
  auto it = cache.find(map);
  if (it != cache.end()) return it->second;
  std::array<ImU32, 256> t{};
  for (int i = 0; i < 256; ++i) {
    Rgb c = colormap_color(map, i / 255.0);
    t[static_cast<size_t>(i)] = IM_COL32(c.r, c.g, c.b, 255);
  }
  return cache.emplace(map, t).first->second;
}

ImU32 colormap_u32(const std::string& map, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  return colormap_table(map)[static_cast<size_t>(std::lround(t * 255.0f))];
}

float scale_position(const ColorScale& s, float x) {
  return std::clamp(static_cast<float>(s.t(x)), 0.0f, 1.0f);
}

ImU32 hatch_color(bool light, int which) {
  if (light) return which == 0 ? IM_COL32(226, 226, 230, 255) : IM_COL32(190, 190, 198, 255);
  return which == 0 ? IM_COL32(48, 48, 54, 255) : IM_COL32(78, 78, 88, 255);
}

}  // namespace attn
