// Decoding PNGs with stb_image (Debian's libstb) for pixel checks.
#include "png_image.h"

#include <stb_image.h>

#include <algorithm>
#include <cstdlib>

namespace attn::test {

RgbImage load_png_rgb(const std::string& path) {
  RgbImage img;
  int channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &channels, 3);
  if (!data) return RgbImage{};
  img.px.assign(data, data + static_cast<size_t>(img.w) * img.h * 3);
  stbi_image_free(data);
  return img;
}

int max_channel_diff(Rgb a, Rgb b) {
  return std::max({std::abs(a.r - b.r), std::abs(a.g - b.g), std::abs(a.b - b.b)});
}

}  // namespace attn::test
