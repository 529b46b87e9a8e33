// Writes a heatmap scene as an SVG document: cells as <rect>, labels as <text> in DejaVu Sans,
// the hatch of masked cells as a <pattern>, the colour bar as a <linearGradient>.
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "render/heatmap_layout.h"

namespace attn {
namespace {

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// Text content and attribute values: XML escapes, and no control characters (not allowed in XML).
std::string escape(const std::string& s) {
  std::string out;
  for (uint32_t cp : decode_utf8(s)) {
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) cp = 0xFFFD;
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xF0 | (cp >> 18));
          out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }
  }
  return out;
}

std::string rect_attrs(const PixelRect& r) {
  return "x=\"" + std::to_string(r.x) + "\" y=\"" + std::to_string(r.y) + "\" width=\"" +
         std::to_string(r.w) + "\" height=\"" + std::to_string(r.h) + "\"";
}

std::string cell_attrs(const SceneItem& it) {
  if (it.row < 0) return "";
  return " data-row=\"" + std::to_string(it.row) + "\" data-col=\"" + std::to_string(it.col) + "\"";
}

}  // namespace

std::string render_heatmap_svg(const HeatmapScene& scene) {
  const HeatmapLayout& L = scene.layout;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << L.width << "\" height=\"" << L.height
    << "\" viewBox=\"0 0 " << L.width << ' ' << L.height
    << "\" font-family=\"DejaVu Sans, sans-serif\" xml:space=\"preserve\">\n";

  // Definitions: one pattern per kind of hatch, one gradient per colour bar. Patterns are in
  // page coordinates, as the PNG's hatch is: pixel (x, y) is on a line when (x + y) mod
  // spacing < width.
  using HatchKey = std::tuple<int, int, int, int>;
  std::map<HatchKey, std::string> hatches;
  std::map<std::string, std::string> gradients;
  o << "<defs>\n";
  for (const SceneItem& it : scene.items) {
    if (it.kind == SceneItem::Kind::kHatch) {
      HatchKey key{it.hatch_spacing, it.hatch_width,
                   (it.color.r << 16) | (it.color.g << 8) | it.color.b,
                   (it.color2.r << 16) | (it.color2.g << 8) | it.color2.b};
      if (hatches.count(key)) continue;
      std::string id = "hatch" + std::to_string(hatches.size());
      hatches[key] = id;
      int sp = it.hatch_spacing;
      double w = it.hatch_width;
      // The PNG marks pixels with (x + y) mod sp < w: bands centred on x + y = (w + 1)/2 (+ sp),
      // w/√2 wide across; anti-aliased SVG strokes of 0.75 w look the same.
      double c1 = w / 2.0 + 0.5, c2 = sp + w / 2.0 + 0.5;
      o << "<pattern id=\"" << id << "\" patternUnits=\"userSpaceOnUse\" width=\"" << sp
        << "\" height=\"" << sp << "\"><rect width=\"" << sp << "\" height=\"" << sp << "\" fill=\""
        << hex(it.color) << "\"/><path d=\"M0," << num(c1) << " L" << num(c1) << ",0 M0," << num(c2)
        << " L" << num(c2) << ",0\" stroke=\"" << hex(it.color2) << "\" stroke-width=\""
        << num(w * 0.75) << "\" stroke-linecap=\"square\"/></pattern>\n";
    } else if (it.kind == SceneItem::Kind::kColorBar && !gradients.count(it.text)) {
      std::string id = "bar-" + it.text;
      gradients[it.text] = id;
      o << "<linearGradient id=\"" << id << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
      constexpr int kStops = 64;
      for (int k = 0; k <= kStops; ++k) {
        double t = static_cast<double>(k) / kStops;
        char offset[16];
        std::snprintf(offset, sizeof offset, "%.4f", t);
        o << "<stop offset=\"" << offset << "\" stop-color=\"" << hex(colormap_color(it.text, t))
          << "\"/>\n";
      }
      o << "</linearGradient>\n";
    }
  }
  o << "</defs>\n";
  o << "<rect width=\"" << L.width << "\" height=\"" << L.height << "\" fill=\"#ffffff\"/>\n";

  for (const SceneItem& it : scene.items) {
    switch (it.kind) {
      case SceneItem::Kind::kRect:
        o << "<rect class=\"" << it.cls << "\"" << cell_attrs(it) << ' ' << rect_attrs(it.rect)
          << " fill=\"" << hex(it.color) << "\"/>\n";
        break;
      case SceneItem::Kind::kHatch: {
        HatchKey key{it.hatch_spacing, it.hatch_width,
                     (it.color.r << 16) | (it.color.g << 8) | it.color.b,
                     (it.color2.r << 16) | (it.color2.g << 8) | it.color2.b};
        o << "<rect class=\"" << it.cls << "\"" << cell_attrs(it) << ' ' << rect_attrs(it.rect)
          << " fill=\"url(#" << hatches[key] << ")\"/>\n";
        break;
      }
      case SceneItem::Kind::kColorBar:
        o << "<rect class=\"" << it.cls << "\" " << rect_attrs(it.rect) << " fill=\"url(#"
          << gradients[it.text] << ")\"/>\n";
        break;
      case SceneItem::Kind::kText: {
        const char* anchor = it.anchor == TextAnchor::kStart    ? "start"
                             : it.anchor == TextAnchor::kMiddle ? "middle"
                                                                : "end";
        o << "<text class=\"" << it.cls << "\"" << cell_attrs(it) << " x=\"" << num(it.x)
          << "\" y=\"" << num(it.y) << "\" font-size=\"" << num(it.size) << "\"";
        if (it.bold) o << " font-weight=\"bold\"";
        if (it.anchor != TextAnchor::kStart) o << " text-anchor=\"" << anchor << "\"";
        o << " fill=\"" << hex(it.color) << "\"";
        if (it.angle != 0)
          o << " transform=\"rotate(" << num(-it.angle) << ' ' << num(it.x) << ' ' << num(it.y)
            << ")\"";
        o << ">" << escape(it.text) << "</text>\n";
        break;
      }
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace attn
