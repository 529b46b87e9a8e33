// TrueType text for the PNG exporter (stb_truetype with the system's DejaVu Sans), measured the
// same way for the SVG writer so both images have identical geometry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "render/colormap.h"

namespace attn {

// An RGB image, row-major, 3 bytes per pixel, that the exporter draws on.
struct Canvas {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;

  Canvas(int w, int h, Rgb background);
  // Clipped to the image.
  void fill_rect(int x, int y, int w, int h, Rgb color);
  // Mixes `color` over the pixel with opacity alpha in [0, 1]; outside pixels are ignored.
  void blend(int x, int y, Rgb color, double alpha);
  Rgb at(int x, int y) const;
};

enum class TextAnchor { kStart, kMiddle, kEnd };

// DejaVu Sans regular and bold. Sizes are em sizes in pixels, as SVG's font-size.
class Fonts {
 public:
  // DejaVuSans.ttf and DejaVuSans-Bold.ttf from fonts-dejavu-core
  // (/usr/share/fonts/truetype/dejavu, or $ATTN_FONT_DIR), loaded once; nullptr with a message
  // naming the missing file.
  static const Fonts* system(std::string& error);

  double text_width(const std::string& utf8, double size, bool bold) const;
  // Distance from the baseline up to the top of capitals, and down to the lowest descender.
  double cap_height(double size) const { return 0.73 * size; }
  double descent(double size) const;

  // Draws `utf8` with its anchor point (start, middle or end of the baseline) at (x, y), rotated
  // by angle_deg counter-clockwise about that point.
  void draw(Canvas& canvas, const std::string& utf8, double x, double y, double size, bool bold,
            TextAnchor anchor, double angle_deg, Rgb color) const;

  ~Fonts();
  struct Face;

 private:
  Fonts() = default;
  std::unique_ptr<Face> regular_, bold_;
};

// Code points of a UTF-8 string; invalid bytes become U+FFFD.
std::vector<uint32_t> decode_utf8(const std::string& s);

}  // namespace attn
