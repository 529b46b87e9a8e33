// Lays out a labelled matrix as a scene: title, labels, cells, numbers, row notes, colour bar,
// legend and caption (see labelled_matrix.h).
#include "render/labelled_matrix.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

  L.rows = rows;
  L.cols = cols;
  L.cell = cell;
  L.separator = v.plain      ? 0
                : cell >= 10 ? std::max(1, static_cast<int>(std::lround(cell / 40.0)))
                             : 0;
  L.scale = v.scale;

  // Font sizes.
  double title_size = std::max(9.0, (o.compact ? 18 : 24) * s),
         sub_size = std::max(7.0, (o.compact ? 13 : 15) * s);
  // Labels: as large as a row allows, but not below 9 at the natural size (thinned instead); 9·s
  // on a picture scaled up, down to 7 on one scaled down.
  const double lf = std::max(std::max(7.0, 9 * s), std::min(16 * s, cell * 0.8));
  const double cap_size = std::max(7.0, 13 * s);
  const double tick_size = std::max(7.0, 14 * s);
  const double note_size = std::max(7.0, std::min(14 * s, cell * 0.7));
  const bool show_notes =
      !v.row_notes.empty() && cell >= note_size * 1.1 && note_size >= std::min(9.0, 9 * s);

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

  // Column labels: upright when they fit in a cell, else at 45°, else vertical and thinned.
  double max_cw = 0;
  for (double u : units.col_labels) max_cw = std::max(max_cw, u * lf);
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
  const int row_step = static_cast<int>(std::ceil(lf * 1.15 / cell));
  double max_rw = 0;
  for (int i = 0; i < rows; i += row_step) max_rw = std::max(max_rw, units.row_labels[i] * lf);
  const double row_axis_w = f.width(v.row_axis, font(cap_size));
  const double left_w = std::max(max_rw, row_axis_w) + gap;

  // Vertical stack: title, (formula), subtitle, axis captions, column labels, grid.
  const bool has_title = !v.title.empty() || !v.formula.empty();
  double y = margin;
  const double title_base = y + title_size * kAscent;
  if (has_title) y += title_size * 1.25;
  double formula_base = title_base;
  if (split_title && !title_rest.empty()) {
    formula_base = y + formula_size * kAscent;
    y += formula_size * 1.3;
  }
  double sub_base = y;
  if (!v.subtitle.empty()) {
    sub_base = y + sub_size * kAscent;
    y += sub_size * 1.3;
  }
  if (has_title || !v.subtitle.empty()) y += px(o.compact ? 8 : 14);
  const double caption_base = y + cap_size * kAscent;
  y += cap_size * 1.3 + px(4);
  y += col_h + px(8);
  L.grid = {margin + static_cast<int>(std::ceil(left_w)), static_cast<int>(std::ceil(y)),
            cols * cell, rows * cell};
  const PixelRect& g = L.grid;

  if (!v.title.empty())
    items.push_back(text_item(v.title, margin, title_base, font(title_size, true),
                              TextAnchor::kStart, kInk, "title"));
  if (!title_rest.empty()) {
    // The gap after the title is in the position, not a leading space in the text.
    const double fx = split_title ? margin
                                  : margin + f.width(v.title, font(title_size, true)) +
                                        f.width(" ", font(title_size));
    const std::string text = split_title ? title_rest : title_rest.substr(1);
    items.push_back(
        text_item(text, fx, formula_base, font(formula_size), TextAnchor::kStart, kInk, "formula"));
  }
  if (!v.subtitle.empty())
    items.push_back(text_item(v.subtitle, margin, sub_base, font(sub_size), TextAnchor::kStart,
                              kGrey, "subtitle"));
  items.push_back(text_item(v.row_axis, g.x - gap, caption_base, font(cap_size), TextAnchor::kEnd,
                            kFaint, "axis"));
  items.push_back(
      text_item(v.col_axis, g.x, caption_base, font(cap_size), TextAnchor::kStart, kFaint, "axis"));

  // Column labels.
  for (int j = 0; j < cols; j += col_step) {
    const double cx = g.x + (j + 0.5) * cell;
    if (angle == 0)
      items.push_back(text_item(v.col_labels[j], cx, g.y - px(8), font(lf), TextAnchor::kMiddle,
                                kInk, "label"));
    else if (angle == 45)
      // Shifted so the glyphs' centre line, not their baseline, starts at the column centre.
      items.push_back(text_item(v.col_labels[j], cx + lf * 0.25, g.y - px(8) + lf * 0.25, font(lf),
                                TextAnchor::kStart, kInk, "label", 45));
    else
      items.push_back(text_item(v.col_labels[j], cx + lf * kCentre, g.y - px(8), font(lf),
                                TextAnchor::kStart, kInk, "label", 90));
  }
  // Row labels.
  for (int i = 0; i < rows; i += row_step)
    items.push_back(text_item(v.row_labels[i], g.x - gap, g.y + (i + 0.5) * cell + lf * kCentre,
                              font(lf), TextAnchor::kEnd, kInk, "label"));

  // Numbers: as large as fits the widest one, default on up to 16×16.
  const double unit_w = units.widest_number;
  const double inner = cell - L.separator - 2 * std::max(2.0, cell * 0.08);
  double nf = std::min({17 * s, cell * 0.36, unit_w > 0 ? inner / unit_w : 17 * s});
  L.annotate = !v.numbers.empty() && o.annotate.value_or(rows <= 16 && cols <= 16 && nf >= 7);
  if (L.annotate) nf = std::max(nf, 5.0);

  const double hatch_spacing = std::max(4, px(7)), hatch_width = std::max(1.0, 1.2 * s);
  // Cells without separators or numbers are one picture, a pixel each stretched over the grid: a
  // 4096-token stage has 16 M cells, which as shapes took gigabytes to lay out and draw. Hidden
  // cells are see-through, over one hatch behind the grid.
  const bool picture = L.separator == 0 && !L.annotate && !v.plain;
  if (cells && picture) {
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
  } else if (cells) {
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

  if (v.plain) {
    // Grid lines, so blank cells can be written in.
    for (int i = 0; i <= rows; ++i)
      items.push_back(line_item(g.x, g.y + i * cell, g.right(), g.y + i * cell, kFrame,
                                i == 0 || i == rows ? 1.2 : 0.6, "grid"));
    for (int j = 0; j <= cols; ++j)
      items.push_back(line_item(g.x + j * cell, g.y, g.x + j * cell, g.bottom(), kFrame,
                                j == 0 || j == cols ? 1.2 : 0.6, "grid"));
  }

  // Right of the grid: row notes, then the colour bar and its scale.
  double x = g.right();
  if (show_notes) {
    x += px(14);
    double w = 0;
    for (int i = 0; i < rows; ++i) {
      items.push_back(text_item(v.row_notes[i], x, g.y + (i + 0.5) * cell + note_size * kCentre,
                                font(note_size), TextAnchor::kStart, kGrey, "sum"));
      w = std::max(w, units.row_notes[i] * note_size);
    }
    x += w;
  }
  double right = x + margin;
  const int line = std::max(1, px(1));
  if (v.color_bar) {
    x += px(28);
    const int bar_h = std::max(g.h, px(160));
    L.colorbar = {static_cast<int>(std::lround(x)), g.y, std::max(8, px(20)), bar_h};
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
      items.push_back(line_item(cb.right() + line, ty, cb.right() + line + std::max(3, px(6)), ty,
                                kFrame, line, "tick"));
      items.push_back(text_item(tk.label, cb.right() + px(10), ty + tick_size * kCentre,
                                font(tick_size), TextAnchor::kStart, kInk, "tick-label"));
      tick_w = std::max(tick_w, f.width(tk.label, font(tick_size)));
    }
    right = cb.right() + px(10) + tick_w + margin;
  }

  // Under the grid: the legend for hidden cells, then the caption.
  double bottom = std::max(g.bottom(), v.color_bar ? L.colorbar.bottom() : 0) + px(18);
  double legend_right = 0;
  bool any_hidden = false;
  for (uint8_t h : v.hidden) any_hidden = any_hidden || h;
  if (any_hidden && !v.hidden_legend.empty()) {
    const int sw = std::max(8, px(18));
    const double lsize = std::max(7.0, 14 * s);
    items.push_back(hatch_item({g.x, static_cast<int>(std::lround(bottom)), sw, sw}, hatch_spacing,
                               hatch_width, "legend-swatch"));
    items.push_back(text_item(v.hidden_legend, g.x + sw + px(8),
                              bottom + sw / 2.0 + lsize * kCentre, font(lsize), TextAnchor::kStart,
                              kGrey, "legend"));
    legend_right = g.x + sw + px(8) + f.width(v.hidden_legend, font(lsize)) + margin;
    bottom += sw + px(12);
  } else {
    bottom -= px(6);
  }
  const double col_extent = g.x + (cols - 0.5) * cell + col_right + margin;
  const double content = std::max({right, legend_right, col_extent});
  L.width = static_cast<int>(std::ceil(
      std::max({content, margin * 2 + title_w, margin * 2 + (v.subtitle.empty() ? 0 : sub_w)})));
  if (!v.caption.empty()) {
    const double csize = std::max(7.0, 14 * s);
    const double wrap = std::max(L.width - 2.0 * margin, 40.0);
    bottom += px(6);
    items.push_back(paragraph_item(v.caption, margin, bottom, wrap, font(csize), kGrey, "caption"));
    bottom += f.paragraph_height(v.caption, font(csize), wrap);
  }
  L.height = static_cast<int>(std::ceil(bottom)) + margin;
  if (measures) *measures = {content, one_line};
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
  for (int iter = 0; iter < 80; ++iter) {
    c = std::max(1, static_cast<int>(std::floor(cell * s / s0)));
    compose(v, text, units, s, c, kUnbounded, false, style, &ms, false);
    split = too_wide(ms, target);
    if (compose(v, text, units, s, c, target, split, style, nullptr, false).layout.width <= target)
      break;
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
