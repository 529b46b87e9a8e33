// Draws heatmap cells as one float texture with the colour map applied in a GLSL fragment shader
// (shaders/heatmap.frag), so 1024 x 1024 and larger matrices cost one quad per frame.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <string>

#include "attention/attention.h"

namespace attn {

struct ColorScale;

class HeatmapRenderer {
 public:
  virtual ~HeatmapRenderer() = default;
  // Queues the cells of `m` into the rectangle p0..p1 of `dl` (hidden cells hatched). The texture
  // for `key` is uploaded again only when `serial` or the shape changes. False = cannot (too big
  // for a texture), and the caller draws rectangles instead.
  virtual bool draw(ImDrawList* dl, const std::string& key, uint64_t serial, const Matrix& m,
                    const ReasonMatrix* hidden, const ColorScale& scale, bool light_theme,
                    ImVec2 p0, ImVec2 p1) = 0;
  // Called once per frame before the panels draw.
  virtual void new_frame() = 0;
};

// Needs a current OpenGL 3.3 context; null with `error` when the shaders do not compile.
std::unique_ptr<HeatmapRenderer> make_gl_heatmap_renderer(std::string& error);

}  // namespace attn
