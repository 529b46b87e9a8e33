// The one drawing path of every exported picture: a page is a list of shapes and text in page
// units (pixels for PNG and SVG, points for PDF), drawn by cairo with text shaped by pango
// (HarfBuzz shaping, fontconfig fallback for CJK, right-to-left scripts and emoji). PNG, SVG and
// PDF come from the same code; the result is the file's bytes (io/ writes files).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "render/colormap.h"
#include "render/image_format.h"

namespace attn {

struct PixelRect {
  int x = 0, y = 0, w = 0, h = 0;
  int right() const { return x + w; }
  int bottom() const { return y + h; }
};

enum class TextAnchor { kStart, kMiddle, kEnd };

// A font: DejaVu Sans (or DejaVu Sans Mono), with fontconfig's fallback for glyphs it lacks.
// `size` is the em size in page units, as SVG's font-size.
struct Font {
  double size = 12;
  bool bold = false;
  bool mono = false;
  bool italic = false;
};

// One thing to draw.
struct SceneItem {
  enum class Kind {
    kRect,       // filled rectangle (rect, color)
    kFrame,      // rectangle outline (rect, color, line_width), drawn inside the rectangle
    kHatch,      // diagonal lines color2 over color, spacing hatch_spacing: a hidden cell
    kColorBar,   // a colour map's gradient, t = 0 at the bottom (or left when horizontal)
    kLine,       // from (x, y) to (x2, y2)
    kPolyline,   // through points (x, y pairs), with a dot on each when dots > 0
    kText,       // one line anchored at (x, y) on its baseline, rotated by angle (degrees, ccw)
    kParagraph,  // text wrapped to width wrap, its first line's top at (x, y)
    kImage,      // pixels (image_w × image_h) stretched over rect, each a sharp-edged block
  };
  Kind kind = Kind::kRect;
  PixelRect rect;
  Rgb color{0, 0, 0};
  Rgb color2{0, 0, 0};
  double hatch_spacing = 6;
  double line_width = 1;
  bool dashed = false;
  bool horizontal = false;  // colour bar
  std::string colormap;     // colour bar
  double x = 0, y = 0, x2 = 0, y2 = 0;
  std::vector<double> points;
  double dots = 0;  // polyline marker radius
  std::string text;
  Font font;
  TextAnchor anchor = TextAnchor::kStart;
  double angle = 0;
  double wrap = 0;          // paragraph width
  double hang = 0;          // paragraph: lines after the first start this much further right
  double line_spacing = 1;  // paragraph: factor on the font's natural line height
  // The item's role ("cell", "num", "label", "title", "tick-label", ...): tests find items by
  // it, and the SVG's text layer writes it as the class of each <text>.
  std::string cls;
  int row = -1, col = -1;  // for cells and their numbers
  // kImage: premultiplied 0xAARRGGBB, row by row; shared so copying an item stays cheap.
  std::shared_ptr<const std::vector<std::uint32_t>> pixels;
  int image_w = 0, image_h = 0;
};

struct ScenePage {
  double width = 0, height = 0;  // page units
  std::vector<SceneItem> items;
};

// Text measurement with the fonts the pages are drawn with. Widths are those of unhinted
// glyphs, so a layout is the same in PNG, SVG and PDF.
class TextEngine {
 public:
  // Null with `error` naming the Debian package to install when no font can draw Latin text.
  static std::unique_ptr<TextEngine> create(std::string& error);
  ~TextEngine();

  double width(const std::string& utf8, const Font& f) const;
  // The font's ascent and descent (positive), and the height of one line.
  double ascent(const Font& f) const;
  double descent(const Font& f) const;
  double line_height(const Font& f) const { return ascent(f) + descent(f); }
  // Height of a paragraph wrapped to `wrap` units.
  double paragraph_height(const std::string& utf8, const Font& f, double wrap,
                          double line_spacing = 1, double hang = 0) const;
  // How many glyphs of `utf8` no installed font has (drawn as boxes).
  int missing_glyphs(const std::string& utf8, const Font& f) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  TextEngine() = default;
  std::unique_ptr<Impl> impl_;
};

// Draws the pages and encodes them: PNG and SVG take exactly one page, PDF any number. PNG pixels
// are page units times `pixel_scale`. Returns false with `error` when the pages cannot be drawn.
// Text that no installed font can draw is listed in `warnings` (one line each, naming the font
// package that would draw it), when given.
struct RenderOptions {
  double pixel_scale = 1;
  std::string title;  // PDF metadata
  std::vector<std::string>* warnings = nullptr;
};
bool render_pages(const std::vector<ScenePage>& pages, ImageFormat format, std::string& bytes,
                  std::string& error, const RenderOptions& options = {});
// A PDF of `count` pages made one at a time by `page_at` (false with `error` stops it), so only
// one page's shapes are held at once: the pages of a long trace's stages can be hundreds of MB.
bool render_pdf_pages(int count, const std::function<bool(int, ScenePage&, std::string&)>& page_at,
                      std::string& bytes, std::string& error, const RenderOptions& options = {});

// Text colour that reads on a background: near-black on light colours, white on dark ones.
Rgb text_color_on(Rgb background);

// Helpers to build items.
SceneItem rect_item(PixelRect r, Rgb color, const std::string& cls);
SceneItem frame_item(PixelRect r, Rgb color, double line_width, const std::string& cls);
SceneItem text_item(const std::string& s, double x, double y, const Font& f, TextAnchor anchor,
                    Rgb color, const std::string& cls, double angle = 0);
SceneItem line_item(double x, double y, double x2, double y2, Rgb color, double width,
                    const std::string& cls);
SceneItem paragraph_item(const std::string& s, double x, double y, double wrap, const Font& f,
                         Rgb color, const std::string& cls, double hang = 0);

// Moves every item of a page by (dx, dy).
void shift_items(std::vector<SceneItem>& items, double dx, double dy);
// Scales every item by k about the page's origin: positions, sizes, fonts and line widths.
// Rectangles are rounded to whole units.
void scale_items(std::vector<SceneItem>& items, double k);

}  // namespace attn
