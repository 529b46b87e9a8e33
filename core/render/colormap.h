// Colour maps shared by the exporters and the app: colour-blind-safe sequential maps (viridis
// default, cividis, magma, grayscale) and a diverging map for signed scores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/stage.h"

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
std::string default_colormap_for(StageId step_id, double min_value);

}  // namespace attn
