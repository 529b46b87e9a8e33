// Draws scene pages with cairo and pango into PNG, SVG or PDF bytes (see scene.h).
#include "render/scene.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>

namespace attn {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Valid UTF-8 without control characters: pango refuses invalid UTF-8, and XML forbids controls.
std::string clean_text(const std::string& s) {
  gchar* valid = g_utf8_make_valid(s.c_str(), static_cast<gssize>(s.size()));
  std::string out;
  for (const gchar* p = valid; *p; p = g_utf8_next_char(p)) {
    gunichar c = g_utf8_get_char(p);
    if (c < 0x20 || c == 0x7F || c == 0xFFFE || c == 0xFFFF) c = c == '\n' ? '\n' : ' ';
    char buf[8];
    out.append(buf, static_cast<size_t>(g_unichar_to_utf8(c, buf)));
  }
  g_free(valid);
  return out;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

struct LayoutDeleter {
  void operator()(PangoLayout* l) const { g_object_unref(l); }
};
using LayoutPtr = std::unique_ptr<PangoLayout, LayoutDeleter>;

}  // namespace

namespace {

// The process's fonts: fontconfig's list and one pango font map, made once and kept for the
// life of the process (pango and fontconfig cache fonts in them; a font map per drawing would
// load the fonts again each time). Pango objects are not thread-safe, so every TextEngine holds
// the lock while it lives; the same thread may nest them (a page renderer measuring and drawing).
struct FontSystem {
  std::recursive_mutex mutex;
  PangoFontMap* map = nullptr;
  std::string error;  // set when the fonts the pictures need are missing

  FontSystem() {
    // Asked of fontconfig directly, before pango lays anything out: pango prints warnings on
    // stderr when it has no font at all.
    if (count_fonts(nullptr) == 0)
      error =
          "no fonts are installed; the pictures need DejaVu Sans (Debian package "
          "fonts-dejavu-core)";
    else if (count_fonts("DejaVu Sans") == 0)
      error = "the font DejaVu Sans is not installed (Debian package fonts-dejavu-core)";
    else
      map = pango_cairo_font_map_new();
  }

  static int count_fonts(const char* family) {
    FcPattern* pattern = FcPatternCreate();
    if (family) FcPatternAddString(pattern, FC_FAMILY, reinterpret_cast<const FcChar8*>(family));
    FcObjectSet* objects = FcObjectSetBuild(FC_FAMILY, nullptr);
    FcFontSet* set = FcFontList(nullptr, pattern, objects);
    const int n = set ? set->nfont : 0;
    if (set) FcFontSetDestroy(set);
    FcObjectSetDestroy(objects);
    FcPatternDestroy(pattern);
    return n;
  }

  static FontSystem& get() {
    static FontSystem* fonts = new FontSystem;  // never destroyed: see above
    return *fonts;
  }
};

}  // namespace

struct TextEngine::Impl {
  std::unique_lock<std::recursive_mutex> lock;
  PangoFontMap* map = nullptr;  // FontSystem's
  PangoContext* context = nullptr;
  cairo_font_options_t* options = nullptr;

  ~Impl() {
    if (context) g_object_unref(context);
    if (options) cairo_font_options_destroy(options);
  }

  static PangoFontDescription* describe(const Font& f) {
    PangoFontDescription* d = pango_font_description_new();
    pango_font_description_set_family(d, f.mono ? "DejaVu Sans Mono" : "DejaVu Sans");
    pango_font_description_set_absolute_size(d, std::max(0.5, f.size) * PANGO_SCALE);
    pango_font_description_set_weight(d, f.bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
    pango_font_description_set_style(d, f.italic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL);
    return d;
  }

  // A layout of clean text in font f, on `ctx` (the measuring context unless drawing).
  LayoutPtr layout(PangoContext* ctx, const std::string& clean, const Font& f, double wrap = 0,
                   double line_spacing = 1, double hang = 0) const {
    LayoutPtr l(pango_layout_new(ctx));
    PangoFontDescription* d = describe(f);
    pango_layout_set_font_description(l.get(), d);
    pango_font_description_free(d);
    if (wrap > 0) {
      pango_layout_set_width(l.get(), static_cast<int>(wrap * PANGO_SCALE));
      pango_layout_set_wrap(l.get(), PANGO_WRAP_WORD_CHAR);
      // A negative indent is pango's hanging indent: every line but the first moves right.
      if (hang > 0) pango_layout_set_indent(l.get(), -static_cast<int>(hang * PANGO_SCALE));
      if (line_spacing != 1) {
        // Extra leading between lines, as a word processor's line spacing.
        const double h = f.size * 1.17;
        pango_layout_set_spacing(l.get(), static_cast<int>((line_spacing - 1) * h * PANGO_SCALE));
      }
    }
    pango_layout_set_text(l.get(), clean.c_str(), static_cast<int>(clean.size()));
    return l;
  }
};

TextEngine::~TextEngine() = default;

std::unique_ptr<TextEngine> TextEngine::create(std::string& error) {
  FontSystem& fonts = FontSystem::get();
  std::unique_lock<std::recursive_mutex> lock(fonts.mutex);
  if (!fonts.error.empty()) {
    error = fonts.error;
    return nullptr;
  }
  std::unique_ptr<TextEngine> e(new TextEngine);
  e->impl_ = std::make_unique<Impl>();
  Impl& m = *e->impl_;
  m.lock = std::move(lock);
  m.map = fonts.map;
  m.context = pango_font_map_create_context(m.map);
  // Unhinted outlines and metrics, and glyph positions not rounded to whole units (pango rounds
  // them by default): glyph advances scale exactly with size, so text measured here has the same
  // width on a PNG, in an SVG and on a PDF page, and small text is not spread out letter by letter.
  m.options = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(m.options, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style(m.options, CAIRO_HINT_STYLE_NONE);
  cairo_font_options_set_antialias(m.options, CAIRO_ANTIALIAS_GRAY);
  pango_cairo_context_set_font_options(m.context, m.options);
  pango_context_set_round_glyph_positions(m.context, FALSE);
  return e;
}

double TextEngine::width(const std::string& utf8, const Font& f) const {
  if (utf8.empty()) return 0;
  LayoutPtr l = impl_->layout(impl_->context, one_line(clean_text(utf8)), f);
  PangoRectangle logical;
  pango_layout_get_extents(l.get(), nullptr, &logical);
  return static_cast<double>(logical.width) / PANGO_SCALE;
}

namespace {
PangoFontMetrics* metrics_of(const TextEngine::Impl& m, const Font& f) {
  PangoFontDescription* d = TextEngine::Impl::describe(f);
  PangoFontMetrics* fm = pango_context_get_metrics(m.context, d, nullptr);
  pango_font_description_free(d);
  return fm;
}
}  // namespace

double TextEngine::ascent(const Font& f) const {
  PangoFontMetrics* fm = metrics_of(*impl_, f);
  double a = static_cast<double>(pango_font_metrics_get_ascent(fm)) / PANGO_SCALE;
  pango_font_metrics_unref(fm);
  return a;
}

double TextEngine::descent(const Font& f) const {
  PangoFontMetrics* fm = metrics_of(*impl_, f);
  double d = static_cast<double>(pango_font_metrics_get_descent(fm)) / PANGO_SCALE;
  pango_font_metrics_unref(fm);
  return d;
}

double TextEngine::paragraph_height(const std::string& utf8, const Font& f, double wrap,
                                    double line_spacing, double hang) const {
  if (utf8.empty()) return 0;
  LayoutPtr l = impl_->layout(impl_->context, clean_text(utf8), f, wrap, line_spacing, hang);
  PangoRectangle logical;
  pango_layout_get_extents(l.get(), nullptr, &logical);
  return static_cast<double>(logical.height) / PANGO_SCALE;
}

int TextEngine::missing_glyphs(const std::string& utf8, const Font& f) const {
  LayoutPtr l = impl_->layout(impl_->context, clean_text(utf8), f);
  return pango_layout_get_unknown_glyphs_count(l.get());
}

Rgb text_color_on(Rgb c) {
  double lum = (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0;
  return lum > 0.5 ? Rgb{26, 26, 26} : Rgb{255, 255, 255};
}

SceneItem rect_item(PixelRect r, Rgb color, const std::string& cls) {
  SceneItem it;
  it.kind = SceneItem::Kind::kRect;
  it.rect = r;
  it.color = color;
  it.cls = cls;
  return it;
}

SceneItem frame_item(PixelRect r, Rgb color, double line_width, const std::string& cls) {
  SceneItem it = rect_item(r, color, cls);
  it.kind = SceneItem::Kind::kFrame;
  it.line_width = line_width;
  return it;
}

SceneItem text_item(const std::string& s, double x, double y, const Font& f, TextAnchor anchor,
                    Rgb color, const std::string& cls, double angle) {
  SceneItem it;
  it.kind = SceneItem::Kind::kText;
  it.text = s;
  it.x = x;
  it.y = y;
  it.font = f;
  it.anchor = anchor;
  it.color = color;
  it.cls = cls;
  it.angle = angle;
  return it;
}

SceneItem line_item(double x, double y, double x2, double y2, Rgb color, double width,
                    const std::string& cls) {
  SceneItem it;
  it.kind = SceneItem::Kind::kLine;
  it.x = x;
  it.y = y;
  it.x2 = x2;
  it.y2 = y2;
  it.color = color;
  it.line_width = width;
  it.cls = cls;
  return it;
}

SceneItem paragraph_item(const std::string& s, double x, double y, double wrap, const Font& f,
                         Rgb color, const std::string& cls, double hang) {
  SceneItem it = text_item(s, x, y, f, TextAnchor::kStart, color, cls);
  it.kind = SceneItem::Kind::kParagraph;
  it.wrap = wrap;
  it.hang = hang;
  return it;
}

void shift_items(std::vector<SceneItem>& items, double dx, double dy) {
  const int ix = static_cast<int>(std::lround(dx)), iy = static_cast<int>(std::lround(dy));
  for (auto& it : items) {
    it.rect.x += ix;
    it.rect.y += iy;
    it.x += dx;
    it.y += dy;
    it.x2 += dx;
    it.y2 += dy;
    for (size_t k = 0; k + 1 < it.points.size(); k += 2) {
      it.points[k] += dx;
      it.points[k + 1] += dy;
    }
  }
}

void scale_items(std::vector<SceneItem>& items, double k) {
  auto round = [k](int v) { return static_cast<int>(std::lround(v * k)); };
  for (auto& it : items) {
    const int right = round(it.rect.right()), bottom = round(it.rect.bottom());
    it.rect.x = round(it.rect.x);
    it.rect.y = round(it.rect.y);
    it.rect.w = right - it.rect.x;
    it.rect.h = bottom - it.rect.y;
    for (double* v : {&it.x, &it.y, &it.x2, &it.y2, &it.line_width, &it.hatch_spacing, &it.dots,
                      &it.wrap, &it.hang, &it.font.size})
      *v *= k;
    for (double& p : it.points) p *= k;
  }
}

namespace {

void set_color(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
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
      case '\n':
        out += ' ';
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

class Painter {
 public:
  Painter(const TextEngine::Impl& text, cairo_t* cr, std::vector<std::string>* warnings,
          bool upscale_images)
      : text_(text), cr_(cr), warnings_(warnings), upscale_images_(upscale_images) {
    // A drawing context that shares the measuring context's font map and options.
    ctx_ = pango_font_map_create_context(text.map);
    pango_cairo_context_set_font_options(ctx_, text.options);
    pango_context_set_round_glyph_positions(ctx_, FALSE);
  }
  ~Painter() { g_object_unref(ctx_); }
  Painter(const Painter&) = delete;
  Painter& operator=(const Painter&) = delete;

  void draw(const SceneItem& it) {
    cairo_t* cr = cr_;
    const PixelRect& r = it.rect;
    cairo_save(cr);
    switch (it.kind) {
      case SceneItem::Kind::kRect:
        set_color(cr, it.color);
        cairo_rectangle(cr, r.x, r.y, r.w, r.h);
        cairo_fill(cr);
        break;
      case SceneItem::Kind::kFrame: {
        const double lw = it.line_width;
        set_color(cr, it.color);
        cairo_set_line_width(cr, lw);
        cairo_rectangle(cr, r.x + lw / 2, r.y + lw / 2, r.w - lw, r.h - lw);
        cairo_stroke(cr);
        break;
      }
      case SceneItem::Kind::kHatch: {
        set_color(cr, it.color);
        cairo_rectangle(cr, r.x, r.y, r.w, r.h);
        cairo_fill_preserve(cr);
        cairo_clip(cr);
        set_color(cr, it.color2);
        cairo_set_line_width(cr, it.line_width);
        // Lines x + y = k·spacing in page coordinates, so neighbouring cells join up.
        const double sp = std::max(2.0, it.hatch_spacing);
        const double first = std::floor((r.x + r.y) / sp) * sp;
        for (double c = first; c <= r.x + r.y + r.w + r.h + sp; c += sp) {
          cairo_move_to(cr, c - r.y + 1, r.y - 1);
          cairo_line_to(cr, c - (r.y + r.h) - 1, r.y + r.h + 1);
        }
        cairo_stroke(cr);
        break;
      }
      case SceneItem::Kind::kColorBar: {
        cairo_pattern_t* p = it.horizontal ? cairo_pattern_create_linear(r.x, 0, r.x + r.w, 0)
                                           : cairo_pattern_create_linear(0, r.y + r.h, 0, r.y);
        constexpr int kStops = 64;
        for (int k = 0; k <= kStops; ++k) {
          const double t = static_cast<double>(k) / kStops;
          const Rgb c = colormap_color(it.colormap, t);
          cairo_pattern_add_color_stop_rgb(p, t, c.r / 255.0, c.g / 255.0, c.b / 255.0);
        }
        cairo_set_source(cr, p);
        cairo_rectangle(cr, r.x, r.y, r.w, r.h);
        cairo_fill(cr);
        cairo_pattern_destroy(p);
        break;
      }
      case SceneItem::Kind::kLine:
        set_color(cr, it.color);
        cairo_set_line_width(cr, it.line_width);
        if (it.dashed) {
          const double d[] = {it.line_width * 4, it.line_width * 3};
          cairo_set_dash(cr, d, 2, 0);
        }
        cairo_move_to(cr, it.x, it.y);
        cairo_line_to(cr, it.x2, it.y2);
        cairo_stroke(cr);
        break;
      case SceneItem::Kind::kPolyline:
        set_color(cr, it.color);
        cairo_set_line_width(cr, it.line_width);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
        for (size_t k = 0; k + 1 < it.points.size(); k += 2)
          (k == 0 ? cairo_move_to : cairo_line_to)(cr, it.points[k], it.points[k + 1]);
        cairo_stroke(cr);
        if (it.dots > 0)
          for (size_t k = 0; k + 1 < it.points.size(); k += 2) {
            cairo_new_sub_path(cr);
            cairo_arc(cr, it.points[k], it.points[k + 1], it.dots, 0, 2 * kPi);
            cairo_fill(cr);
          }
        break;
      case SceneItem::Kind::kText:
        text(it);
        break;
      case SceneItem::Kind::kParagraph:
        paragraph(it);
        break;
      case SceneItem::Kind::kImage:
        image(it);
        break;
    }
    cairo_restore(cr);
  }

  // The text of the page, for the SVG's text layer.
  const std::string& text_layer() const { return layer_; }

 private:
  // Each pixel a block with sharp edges, not smoothed into its neighbours. PNG and PDF (where the
  // image says /Interpolate false) scale it by nearest neighbour. SVG cannot say so to every
  // viewer (librsvg smooths whatever the style says), so there each pixel is first repeated to
  // the block it fills, up to 16 M pixels.
  void image(const SceneItem& it) {
    const int w = it.image_w, h = it.image_h;
    if (!it.pixels || w <= 0 || h <= 0 || it.pixels->size() != static_cast<size_t>(w) * h) return;
    const PixelRect& r = it.rect;
    int f = 1;
    if (upscale_images_)
      while ((f + 1) * w <= r.w && (f + 1) * h <= r.h &&
             static_cast<double>((f + 1) * w) * ((f + 1) * h) <= 16e6)
        ++f;
    cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * f, h * f);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
      if (warnings_)
        warnings_->push_back("cannot draw the " + std::to_string(w) + " × " + std::to_string(h) +
                             " cells: " + cairo_status_to_string(cairo_surface_status(img)));
      cairo_surface_destroy(img);
      return;
    }
    cairo_surface_flush(img);
    unsigned char* data = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    for (int y = 0; y < h * f; ++y) {
      auto* out = reinterpret_cast<std::uint32_t*>(data + static_cast<size_t>(y) * stride);
      const std::uint32_t* in = it.pixels->data() + static_cast<size_t>(y / f) * w;
      for (int x = 0; x < w * f; ++x) out[x] = in[x / f];
    }
    cairo_surface_mark_dirty(img);
    cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
    cairo_clip(cr_);
    cairo_translate(cr_, r.x, r.y);
    cairo_scale(cr_, static_cast<double>(r.w) / (w * f), static_cast<double>(r.h) / (h * f));
    cairo_set_source_surface(cr_, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_paint(cr_);
    cairo_surface_destroy(img);
  }

  void check_glyphs(PangoLayout* l, const std::string& s) {
    if (!warnings_ || pango_layout_get_unknown_glyphs_count(l) == 0) return;
    std::string w = "no installed font can draw some characters of '" + one_line(s) +
                    "' (they show as boxes); Debian's fonts-noto-cjk, fonts-noto-color-emoji and "
                    "fonts-noto-core cover most scripts";
    if (std::find(warnings_->begin(), warnings_->end(), w) == warnings_->end())
      warnings_->push_back(w);
  }

  void record(const SceneItem& it, const std::string& s, double x, double y, const char* anchor) {
    std::ostringstream o;
    o << "<text class=\"" << xml_escape(it.cls) << "\"";
    if (it.row >= 0) o << " data-row=\"" << it.row << "\" data-col=\"" << it.col << "\"";
    o << " x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(it.font.size) << "\"";
    if (it.font.bold) o << " font-weight=\"bold\"";
    if (anchor) o << " text-anchor=\"" << anchor << "\"";
    if (it.angle != 0)
      o << " transform=\"rotate(" << num(-it.angle) << ' ' << num(x) << ' ' << num(y) << ")\"";
    o << ">" << xml_escape(s) << "</text>\n";
    layer_ += o.str();
  }

  void text(const SceneItem& it) {
    const std::string s = one_line(clean_text(it.text));
    if (s.empty()) return;
    pango_cairo_update_context(cr_, ctx_);
    LayoutPtr l = text_.layout(ctx_, s, it.font);
    check_glyphs(l.get(), s);
    PangoRectangle logical;
    pango_layout_get_extents(l.get(), nullptr, &logical);
    const double w = static_cast<double>(logical.width) / PANGO_SCALE;
    const double baseline = static_cast<double>(pango_layout_get_baseline(l.get())) / PANGO_SCALE;
    const double dx = it.anchor == TextAnchor::kStart    ? 0
                      : it.anchor == TextAnchor::kMiddle ? w / 2
                                                         : w;
    set_color(cr_, it.color);
    cairo_translate(cr_, it.x, it.y);
    if (it.angle != 0) cairo_rotate(cr_, -it.angle * kPi / 180.0);
    cairo_move_to(cr_, -dx, -baseline);
    pango_cairo_update_layout(cr_, l.get());
    pango_cairo_show_layout(cr_, l.get());
    record(it, s, it.x, it.y,
           it.anchor == TextAnchor::kStart    ? nullptr
           : it.anchor == TextAnchor::kMiddle ? "middle"
                                              : "end");
  }

  void paragraph(const SceneItem& it) {
    const std::string s = clean_text(it.text);
    if (s.empty()) return;
    pango_cairo_update_context(cr_, ctx_);
    LayoutPtr l = text_.layout(ctx_, s, it.font, it.wrap, it.line_spacing, it.hang);
    check_glyphs(l.get(), s);
    set_color(cr_, it.color);
    cairo_move_to(cr_, it.x, it.y);
    pango_cairo_update_layout(cr_, l.get());
    pango_cairo_show_layout(cr_, l.get());
    const double baseline = static_cast<double>(pango_layout_get_baseline(l.get())) / PANGO_SCALE;
    record(it, s, it.x, it.y + baseline, nullptr);
  }

  const TextEngine::Impl& text_;
  cairo_t* cr_;
  PangoContext* ctx_ = nullptr;
  std::vector<std::string>* warnings_;
  bool upscale_images_;
  std::string layer_;
};

// Draws one page onto cr (white background first); upscale_images for SVG (Painter::image).
std::string paint_page(const TextEngine& engine, cairo_t* cr, const ScenePage& page,
                       std::vector<std::string>* warnings, bool upscale_images = false) {
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_rectangle(cr, 0, 0, page.width, page.height);
  cairo_fill(cr);
  Painter p(engine.impl(), cr, warnings, upscale_images);
  for (const SceneItem& it : page.items) p.draw(it);
  return p.text_layer();
}

bool page_size_ok(const ScenePage& p, std::string& error) {
  if (p.width >= 1 && p.height >= 1 && p.width <= 32768 && p.height <= 32768) return true;
  error = "cannot draw a page of " + num(p.width) + " × " + num(p.height);
  return false;
}

bool surface_ok(cairo_surface_t* s, std::string& error, const char* what) {
  const cairo_status_t st = cairo_surface_status(s);
  if (st == CAIRO_STATUS_SUCCESS) return true;
  error = std::string("cannot draw the ") + what + ": " + cairo_status_to_string(st);
  return false;
}

}  // namespace

bool render_pages(const std::vector<ScenePage>& pages, ImageFormat format, std::string& bytes,
                  std::string& error, const RenderOptions& options) {
  bytes.clear();
  if (pages.empty()) {
    error = "nothing to draw";
    return false;
  }
  if (format != ImageFormat::kPdf && pages.size() != 1) {
    error = "PNG and SVG images hold one page; use a .pdf name for " +
            std::to_string(pages.size()) + " pages";
    return false;
  }
  for (const ScenePage& p : pages)
    if (!page_size_ok(p, error)) return false;
  if (format == ImageFormat::kPdf)
    return render_pdf_pages(
        static_cast<int>(pages.size()),
        [&pages](int k, ScenePage& page, std::string&) {
          page = pages[k];
          return true;
        },
        bytes, error, options);
  std::unique_ptr<TextEngine> engine = TextEngine::create(error);
  if (!engine) return false;

  if (format == ImageFormat::kPng) {
    const ScenePage& p = pages[0];
    const int w = static_cast<int>(std::ceil(p.width * options.pixel_scale));
    const int h = static_cast<int>(std::ceil(p.height * options.pixel_scale));
    if (static_cast<double>(w) * h > 400e6) {
      error = "the image would be too large (" + std::to_string(w) + " × " + std::to_string(h) +
              " pixels)";
      return false;
    }
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    bool ok = surface_ok(s, error, "PNG image");
    if (ok) {
      cairo_t* cr = cairo_create(s);
      cairo_scale(cr, options.pixel_scale, options.pixel_scale);
      paint_page(*engine, cr, p, options.warnings);
      cairo_destroy(cr);
      cairo_surface_flush(s);
      ok = cairo_surface_write_to_png_stream(s, append_bytes, &bytes) == CAIRO_STATUS_SUCCESS;
      if (!ok) error = "cannot encode the PNG image";
    }
    cairo_surface_destroy(s);
    return ok;
  }

  // SVG.
  const ScenePage& p = pages[0];
  std::string svg;
  cairo_surface_t* s = cairo_svg_surface_create_for_stream(append_bytes, &svg, p.width, p.height);
  cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
  std::string layer;
  bool ok = surface_ok(s, error, "SVG image");
  if (ok) {
    cairo_t* cr = cairo_create(s);
    layer = paint_page(*engine, cr, p, options.warnings, true);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    ok = surface_ok(s, error, "SVG image");
  }
  cairo_surface_destroy(s);
  if (!ok) return false;
  // Cairo does not say how to scale an image; cells must stay sharp blocks, not blur together.
  const std::string sharp =
      "<image style=\"image-rendering:optimizeSpeed;image-rendering:pixelated\" ";
  for (size_t at = svg.find("<image "); at != std::string::npos;
       at = svg.find("<image ", at + sharp.size()))
    svg.replace(at, 7, sharp);
  const size_t end = svg.rfind("</svg>");
  if (end == std::string::npos) {
    error = "cannot draw the SVG image: no closing tag";
    return false;
  }
  // Cairo draws glyphs as outlines, so the picture is the same wherever it is opened; the text
  // itself goes in a transparent layer on top, where it can be searched, selected and read aloud.
  svg.insert(end,
             "<g id=\"text-layer\" fill=\"#000000\" fill-opacity=\"0\" "
             "font-family=\"DejaVu Sans, sans-serif\">\n" +
                 layer + "</g>\n");
  bytes = std::move(svg);
  return true;
}

bool render_pdf_pages(int count, const std::function<bool(int, ScenePage&, std::string&)>& page_at,
                      std::string& bytes, std::string& error, const RenderOptions& options) {
  bytes.clear();
  if (count <= 0) {
    error = "nothing to draw";
    return false;
  }
  std::unique_ptr<TextEngine> engine = TextEngine::create(error);
  if (!engine) return false;
  // One page per scene page, each its own size (set before it is drawn).
  cairo_surface_t* s = cairo_pdf_surface_create_for_stream(append_bytes, &bytes, 100, 100);
  bool ok = surface_ok(s, error, "PDF document");
  if (ok) {
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "Attention Lab");
    if (!options.title.empty())
      cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE,
                                     clean_text(options.title).c_str());
    cairo_t* cr = cairo_create(s);
    for (int k = 0; ok && k < count; ++k) {
      ScenePage p;
      ok = page_at(k, p, error) && page_size_ok(p, error);
      if (!ok) break;
      cairo_pdf_surface_set_size(s, p.width, p.height);
      paint_page(*engine, cr, p, options.warnings);
      cairo_show_page(cr);
    }
    cairo_destroy(cr);
    cairo_surface_finish(s);
    ok = ok && surface_ok(s, error, "PDF document");
  }
  cairo_surface_destroy(s);
  if (!ok) bytes.clear();
  return ok;
}

}  // namespace attn
