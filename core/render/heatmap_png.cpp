// Rasterises a heatmap scene to PNG bytes: rectangles and hatches pixel-exact, text through
// stb_truetype, encoded by stb_image_write into memory (the caller writes the file atomically).
#include <stb/stb_image_write.h>

#include <algorithm>

#include "render/heatmap_layout.h"

namespace attn {
namespace {

void append_bytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                             static_cast<size_t>(size));
}

}  // namespace

bool render_heatmap_png(const HeatmapScene& scene, std::string& png, std::string& error) {
  const Fonts* fonts = Fonts::system(error);
  if (!fonts) return false;
  const HeatmapLayout& L = scene.layout;
  Canvas canvas(L.width, L.height, {255, 255, 255});
  for (const SceneItem& it : scene.items) {
    const PixelRect& r = it.rect;
    switch (it.kind) {
      case SceneItem::Kind::kRect:
        canvas.fill_rect(r.x, r.y, r.w, r.h, it.color);
        break;
      case SceneItem::Kind::kHatch:
        // Diagonal lines through page coordinates, as the SVG pattern draws them.
        canvas.fill_rect(r.x, r.y, r.w, r.h, it.color);
        for (int y = std::max(0, r.y); y < std::min(canvas.height, r.bottom()); ++y)
          for (int x = std::max(0, r.x); x < std::min(canvas.width, r.right()); ++x)
            if ((x + y) % it.hatch_spacing < it.hatch_width)
              canvas.fill_rect(x, y, 1, 1, it.color2);
        break;
      case SceneItem::Kind::kColorBar:
        for (int y = r.y; y < r.bottom(); ++y) {
          double t = 1.0 - (y - r.y + 0.5) / r.h;
          canvas.fill_rect(r.x, y, r.w, 1, colormap_color(it.text, t));
        }
        break;
      case SceneItem::Kind::kText:
        fonts->draw(canvas, it.text, it.x, it.y, it.size, it.bold, it.anchor, it.angle, it.color);
        break;
    }
  }
  png.clear();
  if (!stbi_write_png_to_func(append_bytes, &png, canvas.width, canvas.height, 3, canvas.rgb.data(),
                              canvas.width * 3)) {
    error = "cannot encode the PNG image";
    return false;
  }
  return true;
}

}  // namespace attn
