// Draws one stage of a trace as a heatmap image (PNG or SVG) for slides: title with formula,
// query tokens down the side, key tokens along the top, colour bar with its scale, numbers in
// the cells, masked cells marked −∞. The CLI's `export` and the app's export use this code.
#pragma once

#include <optional>
#include <string>

#include "attention/attention.h"

namespace attn {

struct HeatmapOptions {
  std::string step = "weights";
  int head = 0;
  std::string colormap;          // "" = default_colormap_for(step)
  std::optional<bool> annotate;  // numbers in cells; default on up to 16×16
  int width = 0;                 // image width in pixels; 0 = automatic
  int precision = 2;             // decimals in the cells
};

// Writes the heatmap to `path`, choosing PNG or SVG by its extension, atomically. Returns false
// with `error` naming the option (--step, --head, --colormap, --width, --out) when it cannot.
bool export_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    const std::string& path, std::string& error);

}  // namespace attn
