// Decoded PNG pixels for the tests that check exported heatmaps and app screenshots.
#pragma once

#include <string>
#include <vector>

#include "render/colormap.h"

namespace attn::test {

struct RgbImage {
  int w = 0, h = 0;
  std::vector<unsigned char> px;  // row-major RGB, 3 bytes a pixel
  bool empty() const { return px.empty(); }
  Rgb at(int x, int y) const {
    const unsigned char* p = &px[(static_cast<size_t>(y) * w + x) * 3];
    return {p[0], p[1], p[2]};
  }
};

// The PNG at `path` as RGB (alpha dropped); empty when it cannot be read or decoded.
RgbImage load_png_rgb(const std::string& path);

// The largest difference over the three channels.
int max_channel_diff(Rgb a, Rgb b);

}  // namespace attn::test
