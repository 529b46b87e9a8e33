// Draws one stage of a trace as a heatmap image (PNG or SVG) for slides: title with formula,
// query tokens down the side, key tokens along the top, colour bar with its scale, numbers in
// the cells, masked cells marked −∞. The CLI's `export` and the app's export use this code; they
// write the bytes with io/atomic_file.h.
#pragma once

#include <optional>
#include <string>

#include "attention/attention.h"
#include "render/image_format.h"

namespace attn {

struct HeatmapOptions {
  std::string step = "weights";
  int head = 0;
  std::string colormap;          // "" = default_colormap_for(step)
  std::optional<bool> annotate;  // numbers in cells; default on up to 16×16
  int width = 0;                 // image width in pixels; 0 = automatic
  int precision = 2;             // decimals in the cells
};

// Encodes the heatmap as PNG or SVG file bytes. Returns false with `error` naming the option
// (--step, --head, --colormap, --width) when it cannot, or when the fonts are missing.
bool render_heatmap(const AttentionTrace& trace, const HeatmapOptions& options, ImageFormat format,
                    std::string& bytes, std::string& error);

}  // namespace attn
