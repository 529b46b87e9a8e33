// Lays out a labelled matrix as a scene: title, labels, cells, numbers, row notes, colour bar,
// legend and caption (see labelled_matrix.h).
#include "render/labelled_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

namespace attn {
namespace {

constexpr Rgb kInk{26, 26, 26}, kGrey{90, 90, 90}, kFaint{120, 120, 120};
constexpr Rgb kFrame{140, 140, 140};
constexpr Rgb kMaskedInk{115, 115, 115};  // quieter than real numbers, still legible on the hatch
// Distance from a row's centre down to the baseline of DejaVu Sans text centred on it (half its
// cap height, in ems), and a line's ascent in ems.
constexpr double kCentre = 0.36, kAscent = 0.93;

int auto_cell(int rows, int cols, int max_cell) {
  int n = std::max(rows, cols);
  // Up to 16×16 the cells hold numbers, so they get more room.
  int cell = std::max(1, std::min(max_cell, (n <= 16 ? 900 : 720) / n));
  if (cell < 3 && n * 3 <= 2400) cell = 3;
  return cell;
}

Font font(double size, bool bold = false) { return Font{size, bold, false, false}; }

// Widths at a font size of 1 of the text there is one of per row, column or cell, measured once
// per matrix: the layout search composes up to 160 times, and a 4096-token stage has 8192 labels.
// Measured at 100 and scaled: at a size of 1 the glyph advances would round to whole units.
struct UnitWidths {
  std::vector<double> col_labels, row_labels, row_notes;
  double widest_number = 0;

  UnitWidths(const LabelledMatrix& v, const TextEngine& f) {
    auto unit = [&f](const std::string& t) {
      return f.width(t, Font{100, false, false, false}) / 100;
    };
    for (const auto& l : v.col_labels) col_labels.push_back(unit(l));
    for (const auto& l : v.row_labels) row_labels.push_back(unit(l));
    for (const auto& n : v.row_notes) row_notes.push_back(unit(n));
    for (const auto& n : v.numbers) widest_number = std::max(widest_number, unit(n));
  }
};

// What compose measured, so the caller can decide to put the formula on a line of its own.
struct Measures {
  double content_width = 0;   // everything but the title and subtitle
  double one_line_title = 0;  // title and formula on one line, with margins
};

SceneItem hatch_item(PixelRect r, double spacing, double width, const std::string& cls) {
  SceneItem it;
  it.kind = SceneItem::Kind::kHatch;
  it.rect = r;
  it.color = kHiddenFill;
  it.color2 = kHiddenLine;
  it.hatch_spacing = spacing;
  it.line_width = width;
  it.cls = cls;
  return it;
}

// Pixel rounding at scale s, and the margin and gap every step of compose shares.
struct Scaled {
  double s;
  int margin, gap;
  int px(double x) const { return static_cast<int>(std::lround(x * s)); }
};

// Title, formula and subtitle sizes, shrunk to fit max_width, with their widths.
struct TitleFit {
  double title_size, sub_size, formula_size;
  std::string rest;       // the formula, or " — formula" after the title on one line
  double one_line;        // title and formula on one line, with margins
  double title_w, sub_w;  // widths of the title block and the subtitle
};

TitleFit fit_titles(const LabelledMatrix& v, const TextEngine& f, const Scaled& k, double max_width,
                    bool split_title, const MatrixStyle& o) {
  const double s = k.s;
  const int margin = k.margin;
  double title_size = std::max(9.0, (o.compact ? 18 : 24) * s),
         sub_size = std::max(7.0, (o.compact ? 13 : 15) * s);
  std::string title_rest = v.formula.empty() ? "" : " — " + v.formula;
  auto fit = [&](double& size, double width_at_size, double min_size) {
    double room = max_width - 2.0 * margin;
    if (width_at_size > room && width_at_size > 0)
      size = std::max(min_size, size * room / width_at_size);
  };
  double formula_size = split_title ? std::max(8.0, (o.compact ? 15 : 19) * s) : title_size;
  const double one_line = 2.0 * margin + f.width(v.title, font(title_size, true)) +
                          f.width(title_rest, font(title_size));
  if (split_title) {
    title_rest = v.formula;
    fit(title_size, f.width(v.title, font(title_size, true)), 9);
    fit(formula_size, f.width(title_rest, font(formula_size)), 8);
  } else {
    fit(title_size,
        f.width(v.title, font(title_size, true)) + f.width(title_rest, font(title_size)), 9);
    formula_size = title_size;
  }
  fit(sub_size, f.width(v.subtitle, font(sub_size)), 7);
  const double title_w = split_title ? std::max(f.width(v.title, font(title_size, true)),
                                                f.width(title_rest, font(formula_size)))
                                     : f.width(v.title, font(title_size, true)) +
                                           f.width(title_rest, font(title_size));
  const double sub_w = f.width(v.subtitle, font(sub_size));
  return {title_size, sub_size, formula_size, title_rest, one_line, title_w, sub_w};
}

// How the column labels stand: upright when they fit in a cell, else at 45°, else vertical and
// thinned; with the height they take and how far the last one reaches right of its column.
struct ColLabels {
  double angle = 0, height = 0, right = 0;
  int step = 1;
};

ColLabels col_label_layout(const UnitWidths& units, double lf, int cell, double s) {
  double max_cw = 0;
  for (double u : units.col_labels) max_cw = std::max(max_cw, u * lf);
  ColLabels c;
  if (max_cw <= cell - 4 * s) {
    c.height = lf * kAscent;
  } else if (cell >= lf * 1.45) {
    c.angle = 45;
    c.height = (max_cw + lf * 0.5) * 0.7072;
    c.right = max_cw * 0.7072 + lf;
  } else {
    c.angle = 90;
    c.step = static_cast<int>(std::ceil(lf * 1.15 / cell));
    c.height = max_cw + 2;
    c.right = lf;
  }
  return c;
}

// Baselines of the text above the grid, and the grid's top.
struct HeadLines {
  double title_base, formula_base, sub_base, caption_base, grid_top;
};

// The vertical stack: title, (formula), subtitle, axis captions, column labels, grid.
HeadLines head_lines(const LabelledMatrix& v, const TitleFit& t, const Scaled& k, bool split_title,
                     const MatrixStyle& o, double cap_size, double col_h) {
  const bool has_title = !v.title.empty() || !v.formula.empty();
  double y = k.margin;
  const double title_base = y + t.title_size * kAscent;
  if (has_title) y += t.title_size * 1.25;
  double formula_base = title_base;
  if (split_title && !t.rest.empty()) {
    formula_base = y + t.formula_size * kAscent;
    y += t.formula_size * 1.3;
  }
  double sub_base = y;
  if (!v.subtitle.empty()) {
    sub_base = y + t.sub_size * kAscent;
    y += t.sub_size * 1.3;
  }
  if (has_title || !v.subtitle.empty()) y += k.px(o.compact ? 8 : 14);
  const double caption_base = y + cap_size * kAscent;
  y += cap_size * 1.3 + k.px(4);
  y += col_h + k.px(8);
  return {title_base, formula_base, sub_base, caption_base, y};
}

// Paints the title, formula, subtitle and the two axis captions.
void paint_head(std::vector<SceneItem>& items, const LabelledMatrix& v, const TextEngine& f,
                const TitleFit& t, const HeadLines& h, const Scaled& k, bool split_title,
                double cap_size, const PixelRect& g) {
  const int margin = k.margin;
  if (!v.title.empty())
    items.push_back(text_item(v.title, margin, h.title_base, font(t.title_size, true),
                              TextAnchor::kStart, kInk, "title"));
  if (!t.rest.empty()) {
    // The gap after the title is in the position, not a leading space in the text.
    const double fx = split_title ? margin
                                  : margin + f.width(v.title, font(t.title_size, true)) +
                                        f.width(" ", font(t.title_size));
    const std::string text = split_title ? t.rest : t.rest.substr(1);
    items.push_back(text_item(text, fx, h.formula_base, font(t.formula_size), TextAnchor::kStart,
                              kInk, "formula"));
  }
  if (!v.subtitle.empty())
    items.push_back(text_item(v.subtitle, margin, h.sub_base, font(t.sub_size), TextAnchor::kStart,
                              kGrey, "subtitle"));
  items.push_back(text_item(v.row_axis, g.x - k.gap, h.caption_base, font(cap_size),
                            TextAnchor::kEnd, kFaint, "axis"));
  items.push_back(text_item(v.col_axis, g.x, h.caption_base, font(cap_size), TextAnchor::kStart,
                            kFaint, "axis"));
}

// Paints the column labels (at their angle) and every row_step-th row label.
void paint_labels(std::vector<SceneItem>& items, const LabelledMatrix& v, const ColLabels& c,
                  const Scaled& k, const PixelRect& g, int cell, double lf, int row_step) {
  const int rows = static_cast<int>(v.values.rows()), cols = static_cast<int>(v.values.cols());
  for (int j = 0; j < cols; j += c.step) {
    const double cx = g.x + (j + 0.5) * cell;
    if (c.angle == 0)
      items.push_back(text_item(v.col_labels[j], cx, g.y - k.px(8), font(lf), TextAnchor::kMiddle,
                                kInk, "label"));
    else if (c.angle == 45)
      // Shifted so the glyphs' centre line, not their baseline, starts at the column centre.
      items.push_back(text_item(v.col_labels[j], cx + lf * 0.25, g.y - k.px(8) + lf * 0.25,
                                font(lf), TextAnchor::kStart, kInk, "label", 45));
    else
      items.push_back(text_item(v.col_labels[j], cx + lf * kCentre, g.y - k.px(8), font(lf),
                                TextAnchor::kStart, kInk, "label", 90));
  }
  for (int i = 0; i < rows; i += row_step)
    items.push_back(text_item(v.row_labels[i], g.x - k.gap, g.y + (i + 0.5) * cell + lf * kCentre,
                              font(lf), TextAnchor::kEnd, kInk, "label"));
}

// Paints the cells as one picture, a pixel each stretched over the grid: a 4096-token stage has
// 16 M cells, which as shapes took gigabytes. Hidden cells are see-through, over one hatch.
void paint_cell_picture(std::vector<SceneItem>& items, const LabelledMatrix& v, const PixelRect& g,
                        double hatch_spacing, double hatch_width) {
  const Matrix& m = v.values;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  auto pixels = std::make_shared<std::vector<std::uint32_t>>(static_cast<size_t>(rows) * cols);
  bool any_hidden = false;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const size_t k = static_cast<size_t>(i) * cols + j;
      if (!v.concealed.empty() && v.concealed[k]) {
        (*pixels)[k] = 0xFFFFFFFFu;
        continue;
      }
      if (!v.hidden.empty() && v.hidden[k]) {
        any_hidden = true;
        (*pixels)[k] = 0;
        continue;
      }
      const Rgb c = v.scale.color(m(i, j));
      (*pixels)[k] = 0xFF000000u | static_cast<std::uint32_t>(c.r) << 16 |
                     static_cast<std::uint32_t>(c.g) << 8 | c.b;
    }
  if (any_hidden) items.push_back(hatch_item(g, hatch_spacing, hatch_width, "masked cells"));
  SceneItem cells;
  cells.kind = SceneItem::Kind::kImage;
  cells.rect = g;
  cells.pixels = std::move(pixels);
  cells.image_w = cols;
  cells.image_h = rows;
  cells.cls = "cells";
  items.push_back(std::move(cells));
}

// Paints the cells one shape each (concealed, hatched, blank or coloured), with their numbers
// at size nf when the layout annotates.
void paint_cell_shapes(std::vector<SceneItem>& items, const LabelledMatrix& v,
                       const MatrixLayout& L, double s, double nf, double hatch_spacing,
                       double hatch_width) {
  const Matrix& m = v.values;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const size_t k = static_cast<size_t>(i) * cols + j;
      const PixelRect r = L.cell_rect(i, j);
      const bool hidden = !v.hidden.empty() && v.hidden[k];
      const bool concealed = !v.concealed.empty() && v.concealed[k];
      Rgb fill = kHiddenFill;
      SceneItem c;
      if (concealed) {
        fill = {255, 255, 255};
        c = frame_item(r, kFrame, std::max(0.75, s), "cell concealed");
      } else if (hidden) {
        c = hatch_item(r, hatch_spacing, hatch_width, "cell masked");
      } else if (v.plain) {
        fill = {255, 255, 255};
        c = rect_item(r, fill, "cell");
      } else {
        fill = v.scale.color(m(i, j));
        c = rect_item(r, fill, "cell");
      }
      c.row = i;
      c.col = j;
      items.push_back(c);
      if (L.annotate) {
        const Rgb ink = concealed ? kInk : hidden ? kMaskedInk : text_color_on(fill);
        SceneItem t = text_item(concealed ? "?" : v.numbers[k], r.x + r.w / 2.0,
                                r.y + r.h / 2.0 + nf * kCentre, font(nf, concealed),
                                TextAnchor::kMiddle, ink, "num");
        t.row = i;
        t.col = j;
        items.push_back(t);
      }
    }
}

// Paints the grid lines of a plain matrix, so blank cells can be written in.
void paint_grid_lines(std::vector<SceneItem>& items, const PixelRect& g, int rows, int cols,
                      int cell) {
  for (int i = 0; i <= rows; ++i)
    items.push_back(line_item(g.x, g.y + i * cell, g.right(), g.y + i * cell, kFrame,
                              i == 0 || i == rows ? 1.2 : 0.6, "grid"));
  for (int j = 0; j <= cols; ++j)
    items.push_back(line_item(g.x + j * cell, g.y, g.x + j * cell, g.bottom(), kFrame,
                              j == 0 || j == cols ? 1.2 : 0.6, "grid"));
}

// Paints what is right of the grid: the row notes, then the colour bar and its ticks (placing
// L.colorbar). Returns where the page's right edge must be.
double paint_right_side(std::vector<SceneItem>& items, const LabelledMatrix& v, const TextEngine& f,
                        const UnitWidths& units, const Scaled& k, MatrixLayout& L, bool show_notes,
                        double note_size, double tick_size) {
  const PixelRect& g = L.grid;
  const int rows = L.rows, cell = L.cell;
  double x = g.right();
  if (show_notes) {
    x += k.px(14);
    double w = 0;
    for (int i = 0; i < rows; ++i) {
      items.push_back(text_item(v.row_notes[i], x, g.y + (i + 0.5) * cell + note_size * kCentre,
                                font(note_size), TextAnchor::kStart, kGrey, "sum"));
      w = std::max(w, units.row_notes[i] * note_size);
    }
    x += w;
  }
  double right = x + k.margin;
  const int line = std::max(1, k.px(1));
  if (v.color_bar) {
    x += k.px(28);
    const int bar_h = std::max(g.h, k.px(160));
    L.colorbar = {static_cast<int>(std::lround(x)), g.y, std::max(8, k.px(20)), bar_h};
    const PixelRect& cb = L.colorbar;
    SceneItem bar;
    bar.kind = SceneItem::Kind::kColorBar;
    bar.rect = cb;
    bar.colormap = v.scale.map;
    bar.cls = "colorbar";
    items.push_back(bar);
    items.push_back(frame_item({cb.x - line, cb.y - line, cb.w + 2 * line, cb.h + 2 * line}, kFrame,
                               line, "frame"));
    // As many ticks as the bar has room for, at least both ends.
    const int max_ticks = std::clamp(static_cast<int>(cb.h / (tick_size * 2.2)), 2, 6);
    double tick_w = 0;
    for (const ColorTick& tk : colorbar_ticks(v.scale, max_ticks)) {
      const double ty = cb.y + (1.0 - v.scale.t(tk.value)) * cb.h;
      items.push_back(line_item(cb.right() + line, ty, cb.right() + line + std::max(3, k.px(6)), ty,
                                kFrame, line, "tick"));
      items.push_back(text_item(tk.label, cb.right() + k.px(10), ty + tick_size * kCentre,
                                font(tick_size), TextAnchor::kStart, kInk, "tick-label"));
      tick_w = std::max(tick_w, f.width(tk.label, font(tick_size)));
    }
    right = cb.right() + k.px(10) + tick_w + k.margin;
  }
  return right;
}

// Paints the legend for hidden cells under the grid, if any. Moves `bottom` past it and returns
// where the legend's right edge needs the page to reach (0 without a legend).
double paint_hidden_legend(std::vector<SceneItem>& items, const LabelledMatrix& v,
                           const TextEngine& f, const Scaled& k, const PixelRect& g,
                           double hatch_spacing, double hatch_width, double& bottom) {
  double legend_right = 0;
  bool any_hidden = false;
  for (uint8_t h : v.hidden) any_hidden = any_hidden || h;
  if (any_hidden && !v.hidden_legend.empty()) {
    const int sw = std::max(8, k.px(18));
    const double lsize = std::max(7.0, 14 * k.s);
    items.push_back(hatch_item({g.x, static_cast<int>(std::lround(bottom)), sw, sw}, hatch_spacing,
                               hatch_width, "legend-swatch"));
    items.push_back(text_item(v.hidden_legend, g.x + sw + k.px(8),
                              bottom + sw / 2.0 + lsize * kCentre, font(lsize), TextAnchor::kStart,
                              kGrey, "legend"));
    legend_right = g.x + sw + k.px(8) + f.width(v.hidden_legend, font(lsize)) + k.margin;
    bottom += sw + k.px(12);
  } else {
    bottom -= k.px(6);
  }
  return legend_right;
}

// Lays the matrix out at scale s (1 = the natural size) with the given cell pitch. Text wider
// than max_width shrinks. The page's width is the natural width of what it holds. Without
// `cells` the layout is complete but the cells are left out: sizing needs only the layout.
MatrixScene compose(const LabelledMatrix& v, const TextEngine& f, const UnitWidths& units, double s,
                    int cell, double max_width, bool split_title, const MatrixStyle& o,
                    Measures* measures = nullptr, bool cells = true) {
  MatrixScene sc;
  MatrixLayout& L = sc.layout;
  auto& items = sc.page.items;
  const Matrix& m = v.values;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  auto px = [s](double x) { return static_cast<int>(std::lround(x * s)); };
  const int margin = o.margin >= 0 ? o.margin : std::max(6, px(o.compact ? 16 : 32));
  const int gap = std::max(3, px(10));
  const Scaled k{s, margin, gap};

  L.rows = rows;
  L.cols = cols;
  L.cell = cell;
  L.separator = v.plain      ? 0
                : cell >= 10 ? std::max(1, static_cast<int>(std::lround(cell / 40.0)))
                             : 0;
  L.scale = v.scale;

  // Font sizes. Labels: as large as a row allows, but not below 9 at the natural size (thinned
  // instead); 9·s on a picture scaled up, down to 7 on one scaled down.
  const double lf = std::max(std::max(7.0, 9 * s), std::min(16 * s, cell * 0.8));
  const double cap_size = std::max(7.0, 13 * s);
  const double tick_size = std::max(7.0, 14 * s);
  const double note_size = std::max(7.0, std::min(14 * s, cell * 0.7));
  const bool show_notes =
      !v.row_notes.empty() && cell >= note_size * 1.1 && note_size >= std::min(9.0, 9 * s);
  const TitleFit t = fit_titles(v, f, k, max_width, split_title, o);

  const ColLabels col = col_label_layout(units, lf, cell, s);
  const int row_step = static_cast<int>(std::ceil(lf * 1.15 / cell));
  double max_rw = 0;
  for (int i = 0; i < rows; i += row_step) max_rw = std::max(max_rw, units.row_labels[i] * lf);
  const double row_axis_w = f.width(v.row_axis, font(cap_size));
  const double left_w = std::max(max_rw, row_axis_w) + gap;

  const HeadLines h = head_lines(v, t, k, split_title, o, cap_size, col.height);
  L.grid = {margin + static_cast<int>(std::ceil(left_w)), static_cast<int>(std::ceil(h.grid_top)),
            cols * cell, rows * cell};
  const PixelRect& g = L.grid;
  paint_head(items, v, f, t, h, k, split_title, cap_size, g);
  paint_labels(items, v, col, k, g, cell, lf, row_step);

  // Numbers: as large as fits the widest one, default on up to 16×16.
  const double unit_w = units.widest_number;
  const double inner = cell - L.separator - 2 * std::max(2.0, cell * 0.08);
  double nf = std::min({17 * s, cell * 0.36, unit_w > 0 ? inner / unit_w : 17 * s});
  L.annotate = !v.numbers.empty() && o.annotate.value_or(rows <= 16 && cols <= 16 && nf >= 7);
  if (L.annotate) nf = std::max(nf, 5.0);

  const double hatch_spacing = std::max(4, px(7)), hatch_width = std::max(1.0, 1.2 * s);
  // Cells without separators or numbers are one picture.
  const bool picture = L.separator == 0 && !L.annotate && !v.plain;
  if (cells && picture)
    paint_cell_picture(items, v, g, hatch_spacing, hatch_width);
  else if (cells)
    paint_cell_shapes(items, v, L, s, nf, hatch_spacing, hatch_width);
  if (v.plain) paint_grid_lines(items, g, rows, cols, cell);

  const double right = paint_right_side(items, v, f, units, k, L, show_notes, note_size, tick_size);

  // Under the grid: the legend for hidden cells, then the caption.
  double bottom = std::max(g.bottom(), v.color_bar ? L.colorbar.bottom() : 0) + px(18);
  const double legend_right =
      paint_hidden_legend(items, v, f, k, g, hatch_spacing, hatch_width, bottom);
  const double col_extent = g.x + (cols - 0.5) * cell + col.right + margin;
  const double content = std::max({right, legend_right, col_extent});
  L.width = static_cast<int>(std::ceil(std::max(
      {content, margin * 2 + t.title_w, margin * 2 + (v.subtitle.empty() ? 0 : t.sub_w)})));
  if (!v.caption.empty()) {
    const double csize = std::max(7.0, 14 * s);
    const double wrap = std::max(L.width - 2.0 * margin, 40.0);
    bottom += px(6);
    items.push_back(paragraph_item(v.caption, margin, bottom, wrap, font(csize), kGrey, "caption"));
    bottom += f.paragraph_height(v.caption, font(csize), wrap);
  }
  L.height = static_cast<int>(std::ceil(bottom)) + margin;
  if (measures) *measures = {content, t.one_line};
  sc.page.width = L.width;
  sc.page.height = L.height;
  return sc;
}

void shift_scene(MatrixScene& sc, int dx) {
  if (dx == 0) return;
  shift_items(sc.page.items, dx, 0);
  sc.layout.grid.x += dx;
  sc.layout.colorbar.x += dx;
}

}  // namespace

std::string check_labelled_matrix(const LabelledMatrix& m) {
  const size_t rows = static_cast<size_t>(m.values.rows()),
               cols = static_cast<size_t>(m.values.cols());
  if (rows == 0 || cols == 0) return "the matrix is empty";
  if (m.row_labels.size() != rows) return "one row label per row is needed";
  if (m.col_labels.size() != cols) return "one column label per column is needed";
  if (!m.hidden.empty() && m.hidden.size() != rows * cols) return "hidden: one entry per cell";
  if (!m.concealed.empty() && m.concealed.size() != rows * cols)
    return "concealed: one entry per cell";
  if (!m.numbers.empty() && m.numbers.size() != rows * cols) return "numbers: one per cell";
  if (!m.row_notes.empty() && m.row_notes.size() != rows) return "row notes: one per row";
  if (!(m.scale.hi > m.scale.lo)) return "the colour scale is empty";
  return "";
}

MatrixScene compose_matrix(const LabelledMatrix& v, const MatrixStyle& style,
                           const TextEngine& text) {
  const int rows = static_cast<int>(v.values.rows()), cols = static_cast<int>(v.values.cols());
  const int cell = style.cell > 0 ? style.cell : auto_cell(rows, cols, style.max_cell);
  // A title much wider than the picture puts its formula on a second line instead of leaving an
  // empty band on the right.
  auto too_wide = [](const Measures& m, double limit) {
    return m.one_line_title > std::min(limit, m.content_width * 1.35);
  };
  constexpr double kUnbounded = 1e9;
  const UnitWidths units(v, text);
  // The search below composes up to 160 times; only the final layout gets its cells.
  Measures ms;
  const double s0 = style.scale;
  MatrixScene natural = compose(v, text, units, s0, cell, kUnbounded, false, style, &ms, false);
  bool split = too_wide(ms, kUnbounded);
  const bool cells = !style.layout_only;
  if (style.width == 0)
    return compose(v, text, units, s0, cell, kUnbounded, split, style, nullptr, cells);
  // A fixed width: scale the natural picture, then shrink until it fits and centre it.
  if (split) natural = compose(v, text, units, s0, cell, kUnbounded, true, style, nullptr, false);
  const int target = style.width;
  double s = s0 * target / natural.layout.width;
  int c = cell;
  // Text at its smallest size (the legend under the grid, a title) can be wider than the target
  // by itself: once the width stops falling, shrinking further only shrinks the cells, down to
  // one unit. Then the largest scale that reached the narrowest width is kept.
  struct Fit {
    int width;
    double s;
    int c;
    bool split;
  } narrowest{std::numeric_limits<int>::max(), s, c, split};
  int stalled = 0;
  for (int iter = 0; iter < 80; ++iter) {
    c = std::max(1, static_cast<int>(std::floor(cell * s / s0)));
    compose(v, text, units, s, c, kUnbounded, false, style, &ms, false);
    split = too_wide(ms, target);
    const int width =
        compose(v, text, units, s, c, target, split, style, nullptr, false).layout.width;
    if (width <= target) break;
    if (width < narrowest.width) {
      narrowest = {width, s, c, split};
      stalled = 0;
    } else if (++stalled == 8) {
      s = narrowest.s;
      c = narrowest.c;
      split = narrowest.split;
      break;
    }
    if (iter + 1 < 80) s *= 0.97;
  }
  MatrixScene scene = compose(v, text, units, s, c, target, split, style, nullptr, cells);
  if (scene.layout.width < target) {
    shift_scene(scene, (target - scene.layout.width) / 2);
    scene.layout.width = target;
    scene.page.width = target;
  }
  return scene;
}

}  // namespace attn
