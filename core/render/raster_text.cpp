// Text rasterisation for the PNG exporter with stb_truetype (implementation from Debian's
// libstb) and the DejaVu Sans files of fonts-dejavu-core.
#include "render/raster_text.h"

#include <stb/stb_truetype.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace attn {

namespace {
// Debian's fonts-dejavu-core; ATTN_FONT_DIR overrides it (for other systems, and for the test of
// the missing-font error).
std::string font_dir() {
  const char* env = std::getenv("ATTN_FONT_DIR");
  std::string dir = env && *env ? env : "/usr/share/fonts/truetype/dejavu";
  return dir.back() == '/' ? dir : dir + "/";
}
}  // namespace

// ---- Canvas ----

Canvas::Canvas(int w, int h, Rgb background) : width(w), height(h) {
  rgb.resize(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = background.r;
    rgb[i + 1] = background.g;
    rgb[i + 2] = background.b;
  }
}

void Canvas::fill_rect(int x, int y, int w, int h, Rgb color) {
  int x0 = std::max(0, x), y0 = std::max(0, y);
  int x1 = std::min(width, x + w), y1 = std::min(height, y + h);
  for (int yy = y0; yy < y1; ++yy) {
    uint8_t* p = &rgb[(static_cast<size_t>(yy) * width + x0) * 3];
    for (int xx = x0; xx < x1; ++xx, p += 3) {
      p[0] = color.r;
      p[1] = color.g;
      p[2] = color.b;
    }
  }
}

void Canvas::blend(int x, int y, Rgb color, double alpha) {
  if (x < 0 || y < 0 || x >= width || y >= height || alpha <= 0.0) return;
  alpha = std::min(alpha, 1.0);
  uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  auto mix = [alpha](uint8_t dst, uint8_t src) {
    return static_cast<uint8_t>(std::lround(dst + (static_cast<double>(src) - dst) * alpha));
  };
  p[0] = mix(p[0], color.r);
  p[1] = mix(p[1], color.g);
  p[2] = mix(p[2], color.b);
}

Rgb Canvas::at(int x, int y) const {
  const uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
  return {p[0], p[1], p[2]};
}

// ---- UTF-8 ----

std::vector<uint32_t> decode_utf8(const std::string& s) {
  std::vector<uint32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    bool ok = len > 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) ok = false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

// ---- Fonts ----

struct Fonts::Face {
  std::string data;  // stb_truetype reads the file in place
  stbtt_fontinfo info{};
  int ascent = 0, descent = 0;
  float scale(double size) const {
    return stbtt_ScaleForMappingEmToPixels(&info, static_cast<float>(size));
  }
};

Fonts::~Fonts() = default;

namespace {

std::unique_ptr<Fonts::Face> load_face(const std::string& file, std::string& error) {
  auto face = std::make_unique<Fonts::Face>();
  std::string path = font_dir() + file;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "font " + path + " not found (" + std::strerror(errno) +
            "); install the fonts-dejavu-core package";
    return nullptr;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  face->data = buffer.str();
  const auto* bytes = reinterpret_cast<const unsigned char*>(face->data.data());
  int offset = stbtt_GetFontOffsetForIndex(bytes, 0);
  if (offset < 0 || !stbtt_InitFont(&face->info, bytes, offset)) {
    error = "font " + path + " is not a TrueType font; reinstall fonts-dejavu-core";
    return nullptr;
  }
  int gap = 0;
  stbtt_GetFontVMetrics(&face->info, &face->ascent, &face->descent, &gap);
  return face;
}

// Glyph coverage of a string, laid out horizontally, in a small 8-bit buffer.
struct Coverage {
  int w = 0, h = 0;
  std::vector<uint8_t> a;
  double origin_x = 0, baseline = 0;     // where the pen started, in buffer pixels
  double at(double x, double y) const {  // bilinear, pixel centres at i + 0.5
    x -= 0.5;
    y -= 0.5;
    int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
    double fx = x - x0, fy = y - y0;
    auto px = [this](int i, int j) -> double {
      if (i < 0 || j < 0 || i >= w || j >= h) return 0.0;
      return a[static_cast<size_t>(j) * w + i];
    };
    double top = px(x0, y0) * (1 - fx) + px(x0 + 1, y0) * fx;
    double bottom = px(x0, y0 + 1) * (1 - fx) + px(x0 + 1, y0 + 1) * fx;
    return (top * (1 - fy) + bottom * fy) / 255.0;
  }
};

constexpr int kPad = 2;

Coverage rasterize(const Fonts::Face& f, const std::vector<uint32_t>& cps, double size,
                   double width, double start_fraction) {
  float scale = f.scale(size);
  Coverage c;
  int asc = static_cast<int>(std::ceil(f.ascent * scale));
  int desc = static_cast<int>(std::ceil(-f.descent * scale));
  c.w = static_cast<int>(std::ceil(width + start_fraction)) + 2 * kPad + 2;
  c.h = asc + desc + 2 * kPad;
  c.a.assign(static_cast<size_t>(c.w) * c.h, 0);
  c.origin_x = kPad + start_fraction;
  c.baseline = kPad + asc;
  double pen = c.origin_x;
  int prev = 0;
  std::vector<unsigned char> glyph;
  for (uint32_t cp : cps) {
    int g = stbtt_FindGlyphIndex(&f.info, static_cast<int>(cp));
    if (prev) pen += scale * stbtt_GetGlyphKernAdvance(&f.info, prev, g);
    int advance = 0, lsb = 0;
    stbtt_GetGlyphHMetrics(&f.info, g, &advance, &lsb);
    int ix = static_cast<int>(std::floor(pen));
    float fx = static_cast<float>(pen - ix);
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphBitmapBoxSubpixel(&f.info, g, scale, scale, fx, 0.0f, &x0, &y0, &x1, &y1);
    int gw = x1 - x0, gh = y1 - y0;
    if (gw > 0 && gh > 0) {
      glyph.assign(static_cast<size_t>(gw) * gh, 0);
      stbtt_MakeGlyphBitmapSubpixel(&f.info, glyph.data(), gw, gh, gw, scale, scale, fx, 0.0f, g);
      int bx = ix + x0, by = static_cast<int>(c.baseline) + y0;
      for (int yy = 0; yy < gh; ++yy)
        for (int xx = 0; xx < gw; ++xx) {
          int tx = bx + xx, ty = by + yy;
          if (tx < 0 || ty < 0 || tx >= c.w || ty >= c.h) continue;
          uint8_t& dst = c.a[static_cast<size_t>(ty) * c.w + tx];
          dst = std::max(dst, glyph[static_cast<size_t>(yy) * gw + xx]);
        }
    }
    pen += scale * advance;
    prev = g;
  }
  return c;
}

}  // namespace

const Fonts* Fonts::system(std::string& error) {
  struct Loaded {
    std::unique_ptr<Fonts> fonts;
    std::string error;
  };
  static const Loaded loaded = [] {
    Loaded l;
    std::unique_ptr<Fonts> f(new Fonts());
    f->regular_ = load_face("DejaVuSans.ttf", l.error);
    if (f->regular_) f->bold_ = load_face("DejaVuSans-Bold.ttf", l.error);
    if (f->regular_ && f->bold_) l.fonts = std::move(f);
    return l;
  }();
  if (!loaded.fonts) error = loaded.error;
  return loaded.fonts.get();
}

double Fonts::text_width(const std::string& utf8, double size, bool bold) const {
  const Face& f = bold ? *bold_ : *regular_;
  double units = 0;
  int prev = 0;
  for (uint32_t cp : decode_utf8(utf8)) {
    int g = stbtt_FindGlyphIndex(&f.info, static_cast<int>(cp));
    if (prev) units += stbtt_GetGlyphKernAdvance(&f.info, prev, g);
    int advance = 0, lsb = 0;
    stbtt_GetGlyphHMetrics(&f.info, g, &advance, &lsb);
    units += advance;
    prev = g;
  }
  return units * f.scale(size);
}

double Fonts::descent(double size) const { return -regular_->descent * regular_->scale(size); }

void Fonts::draw(Canvas& canvas, const std::string& utf8, double x, double y, double size,
                 bool bold, TextAnchor anchor, double angle_deg, Rgb color) const {
  const Face& f = bold ? *bold_ : *regular_;
  std::vector<uint32_t> cps = decode_utf8(utf8);
  double width = text_width(utf8, size, bold);
  double shift = anchor == TextAnchor::kStart    ? 0.0
                 : anchor == TextAnchor::kMiddle ? width / 2
                                                 : width;
  if (angle_deg == 0.0) {
    // Upright text: rendered at its sub-pixel position and copied, so it stays crisp.
    double start = x - shift;
    int ix = static_cast<int>(std::floor(start));
    Coverage c = rasterize(f, cps, size, width, start - ix);
    int ox = ix - kPad, oy = static_cast<int>(std::lround(y)) - static_cast<int>(c.baseline);
    for (int j = 0; j < c.h; ++j)
      for (int i = 0; i < c.w; ++i) {
        uint8_t a = c.a[static_cast<size_t>(j) * c.w + i];
        if (a) canvas.blend(ox + i, oy + j, color, a / 255.0);
      }
    return;
  }
  // Rotated text: each canvas pixel samples the upright rendering through the inverse rotation.
  Coverage c = rasterize(f, cps, size, width, 0.0);
  double ax = c.origin_x + shift, ay = c.baseline;  // the anchor in buffer pixels
  double th = angle_deg * 3.14159265358979323846 / 180.0;
  double cs = std::cos(th), sn = std::sin(th);
  double min_x = 1e30, min_y = 1e30, max_x = -1e30, max_y = -1e30;
  for (double bx : {0.0, static_cast<double>(c.w)})
    for (double by : {0.0, static_cast<double>(c.h)}) {
      double u = bx - ax, v = by - ay;
      double sx = x + u * cs + v * sn, sy = y - u * sn + v * cs;
      min_x = std::min(min_x, sx);
      max_x = std::max(max_x, sx);
      min_y = std::min(min_y, sy);
      max_y = std::max(max_y, sy);
    }
  for (int py = static_cast<int>(std::floor(min_y)); py <= static_cast<int>(std::ceil(max_y)); ++py)
    for (int px = static_cast<int>(std::floor(min_x)); px <= static_cast<int>(std::ceil(max_x));
         ++px) {
      double vx = px + 0.5 - x, vy = py + 0.5 - y;
      double u = vx * cs - vy * sn, v = vx * sn + vy * cs;
      double a = c.at(ax + u, ay + v);
      if (a > 0.0) canvas.blend(px, py, color, a);
    }
}

}  // namespace attn
