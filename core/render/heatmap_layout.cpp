// Composes the exported heatmap: chooses the matrix, colour scale and label placement, and emits
// the scene both writers draw (see heatmap_layout.h).
#include "render/heatmap_layout.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/format.h"
#include "render/heatmap_view.h"

namespace attn {
namespace {

constexpr int kMinWidth = 200, kMaxWidth = 8192;
constexpr Rgb kInk{26, 26, 26}, kGrey{90, 90, 90}, kFaint{120, 120, 120}, kWhite{255, 255, 255};
constexpr Rgb kHatchBack{236, 236, 236}, kHatchLine{190, 190, 190}, kFrame{140, 140, 140};
constexpr Rgb kMaskedInk{125, 125, 125};  // quieter than real numbers, still legible on the hatch
// Cap height and ascent of DejaVu Sans in ems: baselines sit this far below a line's top or
// this far below a row's centre, so text looks vertically centred.
constexpr double kAscent = 0.93, kCentre = 0.36;

Rgb text_on(Rgb c) {
  double lum = (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0;
  return lum > 0.5 ? kInk : kWhite;
}

SceneItem text_item(const std::string& s, double x, double y, double size, bool bold,
                    TextAnchor anchor, Rgb color, const std::string& cls, double angle = 0) {
  SceneItem it;
  it.kind = SceneItem::Kind::kText;
  it.text = s;
  it.x = x;
  it.y = y;
  it.size = size;
  it.bold = bold;
  it.anchor = anchor;
  it.color = color;
  it.cls = cls;
  it.angle = angle;
  return it;
}

SceneItem rect_item(PixelRect r, Rgb color, const std::string& cls) {
  SceneItem it;
  it.kind = SceneItem::Kind::kRect;
  it.rect = r;
  it.color = color;
  it.cls = cls;
  return it;
}

int auto_cell(int rows, int cols) {
  int n = std::max(rows, cols);
  // Up to 16×16 the cells hold numbers, so they get more room.
  int cell = std::max(1, std::min(80, (n <= 16 ? 900 : 720) / n));
  if (cell < 3 && n * 3 <= 2400) cell = 3;
  return cell;
}

// What compose() measured, so the caller can decide to put the formula on a line of its own.
struct Measures {
  double content_width = 0;   // everything but the title and subtitle
  double one_line_title = 0;  // title and formula on one line, with margins
};

// Lays the view out at scale s (1 = the automatic size) with the given cell pitch. Text wider
// than max_width shrinks. The scene's width is the natural width of what it holds.
HeatmapScene compose(const HeatmapView& v, const Fonts& f, double s, int cell, double max_width,
                     bool split_title, const HeatmapOptions& o, Measures* measures = nullptr) {
  HeatmapScene sc;
  HeatmapLayout& L = sc.layout;
  auto& items = sc.items;
  const Matrix& m = *v.m;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  auto px = [s](double x) { return static_cast<int>(std::lround(x * s)); };
  const int margin = std::max(8, px(32));
  const int gap = std::max(3, px(10));

  L.rows = rows;
  L.cols = cols;
  L.cell = cell;
  L.separator = cell >= 10 ? std::max(1, static_cast<int>(std::lround(cell / 40.0))) : 0;
  L.colormap = v.colormap;
  L.lo = v.lo;
  L.hi = v.hi;
  L.step = v.step->id;
  L.matrix_index = v.index;

  // Font sizes.
  double title_size = std::max(9.0, 24 * s), sub_size = std::max(7.0, 15 * s);
  // Labels: as large as a row allows, but not below 9 px at the automatic size (thinned instead).
  double lf = std::max(std::max(7.0, std::min(9.0, 9 * s)), std::min(16 * s, cell * 0.8));
  double cap_size = std::max(7.0, 13 * s);
  double tick_size = std::max(7.0, 14 * s);
  double sum_size = std::max(7.0, std::min(14 * s, cell * 0.7));
  bool show_sums = !v.sums.empty() && cell >= sum_size * 1.1 && sum_size >= std::min(9.0, 9 * s);

  std::string title_rest = v.formula.empty() ? "" : " — " + v.formula;
  const std::string& subtitle = v.subtitle;
  auto fit = [&](double& size, double width_at_size, double min_size) {
    double room = max_width - 2.0 * margin;
    if (width_at_size > room && width_at_size > 0)
      size = std::max(min_size, size * room / width_at_size);
  };
  double formula_size = split_title ? std::max(8.0, 19 * s) : title_size;
  double one_line = 2.0 * margin + f.text_width(v.title, title_size, true) +
                    f.text_width(title_rest, title_size, false);
  if (split_title) {
    title_rest = v.formula;
    fit(title_size, f.text_width(v.title, title_size, true), 9);
    fit(formula_size, f.text_width(title_rest, formula_size, false), 8);
  } else {
    fit(title_size,
        f.text_width(v.title, title_size, true) + f.text_width(title_rest, title_size, false), 9);
    formula_size = title_size;
  }
  fit(sub_size, f.text_width(subtitle, sub_size, false), 7);
  double title_w = split_title ? std::max(f.text_width(v.title, title_size, true),
                                          f.text_width(title_rest, formula_size, false))
                               : f.text_width(v.title, title_size, true) +
                                     f.text_width(title_rest, title_size, false);
  double sub_w = f.text_width(subtitle, sub_size, false);

  // Column labels: upright when they fit in a cell, else at 45°, else vertical and thinned.
  double max_cw = 0;
  for (const auto& l : v.col_labels) max_cw = std::max(max_cw, f.text_width(l, lf, false));
  double angle = 0, col_h = 0, col_right = 0;
  int col_step = 1;
  if (max_cw <= cell - 4 * s) {
    col_h = lf * kAscent;
  } else if (cell >= lf * 1.45) {
    angle = 45;
    col_h = (max_cw + lf * 0.5) * 0.7072;
    col_right = max_cw * 0.7072 + lf;
  } else {
    angle = 90;
    col_step = static_cast<int>(std::ceil(lf * 1.15 / cell));
    col_h = max_cw + 2;
    col_right = lf;
  }
  int row_step = static_cast<int>(std::ceil(lf * 1.15 / cell));
  double max_rw = 0;
  for (int i = 0; i < rows; i += row_step)
    max_rw = std::max(max_rw, f.text_width(v.row_labels[i], lf, false));
  double row_axis_w = f.text_width(v.row_axis, cap_size, false);
  double left_w = std::max(max_rw, row_axis_w) + gap;

  // Vertical stack: title, subtitle, axis captions, column labels, grid.
  double y = margin;
  double title_base = y + title_size * kAscent;
  y += title_size * 1.25;
  double formula_base = title_base;
  if (split_title && !title_rest.empty()) {
    formula_base = y + formula_size * kAscent;
    y += formula_size * 1.3;
  }
  double sub_base = y + sub_size * kAscent;
  y += sub_size * 1.3 + px(14);
  double caption_base = y + cap_size * kAscent;
  y += cap_size * 1.3 + px(4);
  y += col_h + px(8);
  L.grid = {margin + static_cast<int>(std::ceil(left_w)), static_cast<int>(std::ceil(y)),
            cols * cell, rows * cell};
  const PixelRect& g = L.grid;

  items.push_back(
      text_item(v.title, margin, title_base, title_size, true, TextAnchor::kStart, kInk, "title"));
  if (!title_rest.empty()) {
    // No leading space in the item: SVG would drop it, so the gap is in the position instead.
    double fx = split_title ? margin
                            : margin + f.text_width(v.title, title_size, true) +
                                  f.text_width(" ", title_size, false);
    std::string text = split_title ? title_rest : title_rest.substr(1);
    items.push_back(text_item(text, fx, formula_base, formula_size, false, TextAnchor::kStart, kInk,
                              "formula"));
  }
  items.push_back(text_item(subtitle, margin, sub_base, sub_size, false, TextAnchor::kStart, kGrey,
                            "subtitle"));
  items.push_back(text_item(v.row_axis, g.x - gap, caption_base, cap_size, false, TextAnchor::kEnd,
                            kFaint, "axis"));
  items.push_back(text_item(v.col_axis, g.x, caption_base, cap_size, false, TextAnchor::kStart,
                            kFaint, "axis"));

  // Column labels.
  for (int j = 0; j < cols; j += col_step) {
    double cx = g.x + (j + 0.5) * cell;
    if (angle == 0)
      items.push_back(text_item(v.col_labels[j], cx, g.y - px(8), lf, false, TextAnchor::kMiddle,
                                kInk, "label"));
    else if (angle == 45)
      // Shifted so the glyphs' centre line, not their baseline, starts at the column centre.
      items.push_back(text_item(v.col_labels[j], cx + lf * 0.25, g.y - px(8) + lf * 0.25, lf, false,
                                TextAnchor::kStart, kInk, "label", 45));
    else
      items.push_back(text_item(v.col_labels[j], cx + lf * kCentre, g.y - px(8), lf, false,
                                TextAnchor::kStart, kInk, "label", 90));
  }
  // Row labels.
  for (int i = 0; i < rows; i += row_step)
    items.push_back(text_item(v.row_labels[i], g.x - gap, g.y + (i + 0.5) * cell + lf * kCentre, lf,
                              false, TextAnchor::kEnd, kInk, "label"));

  // Numbers: as large as fits the widest one, default on up to 16×16.
  double unit_w = 0;
  for (const auto& n : v.numbers) unit_w = std::max(unit_w, f.text_width(n, 1.0, false));
  double inner = cell - L.separator - 2 * std::max(2.0, cell * 0.08);
  double nf = std::min({17 * s, cell * 0.36, unit_w > 0 ? inner / unit_w : 17 * s});
  L.annotate = o.annotate.value_or(rows <= 16 && cols <= 16 && nf >= 7);
  if (L.annotate) nf = std::max(nf, 5.0);

  int hatch_spacing = std::max(4, px(7)), hatch_width = std::max(1, px(1));
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      size_t k = static_cast<size_t>(i) * cols + j;
      PixelRect r = L.cell_rect(i, j);
      SceneItem c;
      Rgb fill = kHatchBack;
      if (v.hidden[k]) {
        c.kind = SceneItem::Kind::kHatch;
        c.rect = r;
        c.color = kHatchBack;
        c.color2 = kHatchLine;
        c.hatch_spacing = hatch_spacing;
        c.hatch_width = hatch_width;
        c.cls = "cell masked";
      } else {
        fill = colormap_color(v.colormap, L.value_to_t(m(i, j)));
        c = rect_item(r, fill, "cell");
      }
      c.row = i;
      c.col = j;
      items.push_back(c);
      if (L.annotate) {
        SceneItem t =
            text_item(v.numbers[k], r.x + r.w / 2.0, r.y + r.h / 2.0 + nf * kCentre, nf, false,
                      TextAnchor::kMiddle, v.hidden[k] ? kMaskedInk : text_on(fill), "num");
        t.row = i;
        t.col = j;
        items.push_back(t);
      }
    }

  // Right of the grid: row sums, then the colour bar and its scale.
  double x = g.right();
  if (show_sums) {
    x += px(14);
    double w = 0;
    for (int i = 0; i < rows; ++i) {
      items.push_back(text_item(v.sums[i], x, g.y + (i + 0.5) * cell + sum_size * kCentre, sum_size,
                                false, TextAnchor::kStart, kGrey, "sum"));
      w = std::max(w, f.text_width(v.sums[i], sum_size, false));
    }
    x += w;
  }
  x += px(28);
  int bar_h = std::max(g.h, px(160));
  L.colorbar = {static_cast<int>(std::lround(x)), g.y, std::max(8, px(20)), bar_h};
  const PixelRect& cb = L.colorbar;
  SceneItem bar;
  bar.kind = SceneItem::Kind::kColorBar;
  bar.rect = cb;
  bar.text = v.colormap;
  bar.cls = "colorbar";
  items.push_back(bar);
  int line = std::max(1, px(1));
  items.push_back(rect_item({cb.x - line, cb.y - line, cb.w + 2 * line, line}, kFrame, "frame"));
  items.push_back(rect_item({cb.x - line, cb.bottom(), cb.w + 2 * line, line}, kFrame, "frame"));
  items.push_back(rect_item({cb.x - line, cb.y, line, cb.h}, kFrame, "frame"));
  items.push_back(rect_item({cb.right(), cb.y, line, cb.h}, kFrame, "frame"));
  double tick_w = 0;
  for (double tv : v.ticks) {
    double ty = cb.y + (1.0 - L.value_to_t(tv)) * cb.h;
    int iy = std::clamp(static_cast<int>(std::lround(ty - line / 2.0)), cb.y - line, cb.bottom());
    items.push_back(rect_item({cb.right(), iy, std::max(3, px(6)), line}, kFrame, "tick"));
    std::string label = format_fixed(tv, v.tick_decimals, true);
    items.push_back(text_item(label, cb.right() + px(10), ty + tick_size * kCentre, tick_size,
                              false, TextAnchor::kStart, kInk, "tick-label"));
    tick_w = std::max(tick_w, f.text_width(label, tick_size, false));
  }
  double right = cb.right() + px(10) + tick_w + margin;

  // Legend for masked cells, under the grid.
  double bottom = std::max(g.bottom(), cb.bottom()) + px(18);
  double legend_right = 0;
  if (v.any_hidden) {
    int sw = std::max(8, px(18));
    double lsize = std::max(7.0, 14 * s);
    SceneItem sq;
    sq.kind = SceneItem::Kind::kHatch;
    sq.rect = {g.x, static_cast<int>(std::lround(bottom)), sw, sw};
    sq.color = kHatchBack;
    sq.color2 = kHatchLine;
    sq.hatch_spacing = hatch_spacing;
    sq.hatch_width = hatch_width;
    sq.cls = "legend-swatch";
    items.push_back(sq);
    items.push_back(text_item(v.legend, g.x + sw + px(8), bottom + sw / 2.0 + lsize * kCentre,
                              lsize, false, TextAnchor::kStart, kGrey, "legend"));
    legend_right = g.x + sw + px(8) + f.text_width(v.legend, lsize, false) + margin;
    bottom += sw;
  } else {
    bottom -= px(18);
  }
  L.height = static_cast<int>(std::ceil(bottom)) + margin;
  double col_extent = g.x + (cols - 0.5) * cell + col_right + margin;
  double content = std::max({right, legend_right, col_extent});
  if (measures) *measures = {content, one_line};
  L.width =
      static_cast<int>(std::ceil(std::max({content, margin * 2 + title_w, margin * 2 + sub_w})));
  return sc;
}

void shift_scene(HeatmapScene& sc, int dx) {
  if (dx == 0) return;
  for (auto& it : sc.items) {
    it.rect.x += dx;
    it.x += dx;
  }
  sc.layout.grid.x += dx;
  sc.layout.colorbar.x += dx;
}

}  // namespace

std::string check_heatmap_options(const AttentionTrace& trace, const HeatmapOptions& o) {
  const TraceStep* step = trace.find(o.step);
  if (!step) {
    std::string ids;
    for (const auto& s : trace.steps) ids += (ids.empty() ? "" : ", ") + s.id;
    return "--step: no stage '" + o.step + "' in this trace; expected one of " + ids;
  }
  if (o.head < 0 || o.head >= std::max(1, trace.num_heads)) {
    int h = std::max(1, trace.num_heads);
    return "--head: head " + std::to_string(o.head) + " is out of range; this trace has " +
           std::to_string(h) + (h == 1 ? " head (0)" : " heads (0.." + std::to_string(h - 1) + ")");
  }
  if (!o.colormap.empty() && !is_colormap(o.colormap)) {
    std::string names;
    for (const auto& n : colormap_names()) names += (names.empty() ? "" : ", ") + n;
    return "--colormap: unknown colour map '" + o.colormap + "'; expected one of " + names;
  }
  if (o.width != 0 && (o.width < kMinWidth || o.width > kMaxWidth))
    return "--width: " + std::to_string(o.width) + " pixels is out of range; expected " +
           std::to_string(kMinWidth) + " to " + std::to_string(kMaxWidth);
  if (step->num_heads() == 0 || trace.head(*step, 0).size() == 0)
    return "--step: stage '" + o.step + "' is empty in this trace";
  const Matrix& m = trace.head(*step, 0);
  if (m.rows() > 16384 || m.cols() > 16384 || m.rows() * m.cols() > 16 * 1024 * 1024)
    return "--step: stage '" + o.step + "' is too large to draw (" + std::to_string(m.rows()) +
           " × " + std::to_string(m.cols()) + ")";
  return "";
}

bool build_heatmap_scene(const AttentionTrace& trace, const HeatmapOptions& options,
                         HeatmapScene& scene, std::string& error) {
  error = check_heatmap_options(trace, options);
  if (!error.empty()) return false;
  const Fonts* fonts = Fonts::system(error);
  if (!fonts) return false;
  HeatmapView v = make_heatmap_view(trace, options);
  const int rows = static_cast<int>(v.m->rows()), cols = static_cast<int>(v.m->cols());
  int cell = auto_cell(rows, cols);
  // A title much wider than the picture puts its formula on a second line instead of leaving an
  // empty band on the right.
  auto too_wide = [](const Measures& m, double limit) {
    return m.one_line_title > std::min(limit, m.content_width * 1.35);
  };
  constexpr double kUnbounded = 1e9;
  Measures ms;
  scene = compose(v, *fonts, 1.0, cell, kUnbounded, false, options, &ms);
  if (too_wide(ms, kUnbounded)) scene = compose(v, *fonts, 1.0, cell, kUnbounded, true, options);
  if (options.width == 0) return true;
  // A fixed width: scale the automatic picture, then shrink until it fits and centre it.
  const int target = options.width;
  double s = static_cast<double>(target) / scene.layout.width;
  for (int iter = 0; iter < 80; ++iter) {
    int c = std::max(1, static_cast<int>(std::floor(cell * s)));
    scene = compose(v, *fonts, s, c, kUnbounded, false, options, &ms);
    bool split = too_wide(ms, target);
    scene = compose(v, *fonts, s, c, target, split, options);
    if (scene.layout.width <= target) break;
    s *= 0.97;
  }
  if (scene.layout.width < target) {
    shift_scene(scene, (target - scene.layout.width) / 2);
    scene.layout.width = target;
  }
  return true;
}

bool layout_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    HeatmapLayout& layout, std::string& error) {
  HeatmapScene scene;
  if (!build_heatmap_scene(trace, options, scene, error)) return false;
  layout = scene.layout;
  return true;
}

}  // namespace attn
