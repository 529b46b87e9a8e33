// The colours both heatmap draw paths share — the rectangles of heatmap_widget.cpp and the
// texture and shader of heatmap_texture.cpp — so the two give a cell the same colour.
#pragma once

#include <imgui.h>

#include <array>
#include <string>

namespace attn {

struct ColorScale;

// The map's 256-entry table (cached; the UI thread only).
const std::array<ImU32, 256>& colormap_table(const std::string& map);
// The colour of t in [0, 1]: the table's nearest entry.
ImU32 colormap_u32(const std::string& map, float t);
// Where value x falls on a scale, 0..1 (clamped).
float scale_position(const ColorScale& s, float x);
// Hidden-cell hatch colours for the theme: 0 the ground, 1 the lines.
ImU32 hatch_color(bool light, int which);

}  // namespace attn
