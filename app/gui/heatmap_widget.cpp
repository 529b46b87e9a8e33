// The heatmap widget in four steps: layout (heatmap_layout, a pure function of sizes), paint (the
// cells, a lesson's overlays and the selection), labels (tokens, row statistics, colour bar) and
// interaction (hover, clicks, zoom and pan). The cells go through the GL renderer when there is
// one, else through ImGui rectangles (headless tests, animations).
#include "gui/heatmap_widget.h"

#include <imgui_internal.h>  // ImTextCharFromUtf8 (text turned upright), the window for tests

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "attention/format.h"
#include "gui/heatmap_colors.h"
#include "gui/heatmap_texture.h"
#include "gui/model/app_state.h"  // row_entropy_bits
#include "gui/model/stage_motion.h"
#include "render/color_scale.h"
#include "render/colormap.h"
#include "render/ticks.h"

namespace attn {
namespace {

float luminance(ImU32 c) {
  const float r = (c >> IM_COL32_R_SHIFT) & 255, g = (c >> IM_COL32_G_SHIFT) & 255,
              b = (c >> IM_COL32_B_SHIFT) & 255;
  return (0.299f * r + 0.587f * g + 0.114f * b) / 255.0f;
}

ImU32 mix(ImU32 a, ImU32 b, float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  auto ch = [&](int shift) {
    const float x = (a >> shift) & 255, y = (b >> shift) & 255;
    return static_cast<ImU32>(std::lround(x + (y - x) * t)) << shift;
  };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) |
         (255u << IM_COL32_A_SHIFT);
}

std::string label_or_index(const std::vector<std::string>& labels, int i) {
  return i < static_cast<int>(labels.size()) ? labels[i] : std::to_string(i);
}

void draw_hatch(ImDrawList* dl, ImVec2 a, ImVec2 b, bool light, float alpha = 1.0f,
                ImU32 under = 0) {
  const ImU32 back = under ? mix(under, hatch_color(light, 0), alpha) : hatch_color(light, 0);
  dl->AddRectFilled(a, b, back);
  const ImU32 line = hatch_color(light, 1);
  const ImU32 faded = (line & ~IM_COL32_A_MASK) |
                      (static_cast<ImU32>(std::lround(255 * alpha)) << IM_COL32_A_SHIFT);
  const float step = 7.0f;
  dl->PushClipRect(a, b, true);
  for (float x = a.x - (b.y - a.y); x < b.x; x += step)
    dl->AddLine({x, b.y}, {x + (b.y - a.y), a.y}, faded, 1.5f);
  dl->PopClipRect();
}

bool is_hidden(const HeatmapSpec& sp, const Matrix& m, int i, int j) {
  if (sp.hidden && i < sp.hidden->rows() && j < sp.hidden->cols() && (*sp.hidden)(i, j))
    return true;
  const float x = m(i, j);
  return std::isinf(x) && x < 0;
}

// Rectangles for the visible cells; large views are sampled so a frame stays bounded.
void draw_cells_cpu(ImDrawList* dl, const HeatmapSpec& sp, const Matrix& m,
                    const HeatmapViewport& v, bool light, int i0, int i1, int j0, int j1) {
  // At most ~8k rectangles (within 16-bit draw indices even headless): sample when zoomed out.
  const double visible = static_cast<double>(std::max(0, i1 - i0)) * std::max(0, j1 - j0);
  const int thin = std::max(1, static_cast<int>(std::ceil(std::sqrt(visible / 8000.0))));
  const int step_i = std::max(thin, static_cast<int>(std::ceil(1.0f / v.cell_h)));
  const int step_j = std::max(thin, static_cast<int>(std::ceil(1.0f / v.cell_w)));
  const auto& table = colormap_table(sp.scale.map);
  for (int i = i0; i < i1; i += step_i)
    for (int j = j0; j < j1; j += step_j) {
      ImVec2 a = v.cell_min(i, j);
      ImVec2 b{a.x + v.cell_w * step_j, a.y + v.cell_h * step_i};
      if (is_hidden(sp, m, i, j)) {
        if (v.cell_w >= 4)
          draw_hatch(dl, a, b, light);
        else
          dl->AddRectFilled(a, b, hatch_color(light, 0));
        continue;
      }
      const float t = scale_position(sp.scale, m(i, j));
      dl->AddRectFilled(a, b, table[static_cast<int>(std::lround(t * 255.0f))]);
    }
}

// A stage change in progress: each cell's colour moves from its old stage's to its new one.
void draw_cells_animated(ImDrawList* dl, const HeatmapSpec& sp, const HeatmapViewport& v,
                         bool light, ImU32 background, int i0, int i1, int j0, int j1,
                         std::vector<ImU32>& fills) {
  const AnimatedFrame& a = *sp.anim;
  const int cols = static_cast<int>(a.to.cols());
  const ColorScale& from_scale = a.from_on_own_scale ? sp.anim_from_scale : sp.scale;
  for (int i = i0; i < i1; ++i)
    for (int j = j0; j < j1; ++j) {
      const ImVec2 p0 = v.cell_min(i, j), p1{p0.x + v.cell_w, p0.y + v.cell_h};
      const float r = i < static_cast<int>(a.row_progress.size()) ? a.row_progress[i] : 1.0f;
      const float from_x = a.from(i, j), to_x = a.to(i, j);
      const ImU32 from_c = a.from_is_background || !std::isfinite(from_x)
                               ? background
                               : colormap_u32(from_scale.map, scale_position(from_scale, from_x));
      const ImU32 to_c = std::isfinite(to_x)
                             ? colormap_u32(sp.scale.map, scale_position(sp.scale, to_x))
                             : hatch_color(light, 0);
      const ImU32 c = mix(from_c, to_c, r);
      const size_t k = static_cast<size_t>(i) * cols + j;
      const float h = k < a.hatch.size() ? a.hatch[k] : 0.0f;
      if (h > 0)
        draw_hatch(dl, p0, p1, light, h, c);
      else
        dl->AddRectFilled(p0, p1, c);
      fills[k] = h >= 0.5f ? hatch_color(light, 0) : c;
    }
}

void vertical_glyphs(ImDrawList* dl, ImFont* font, float size, ImVec2 origin, ImU32 col,
                     const std::string& text) {
  const float scale = size / font->FontSize;
  const char* s = text.c_str();
  const char* e = s + text.size();
  float x = 0;  // along the text, which reads upwards
  while (s < e) {
    unsigned int c = 0;
    const int n = ImTextCharFromUtf8(&c, s, e);
    s += n > 0 ? n : 1;
    if (c < 0x20) continue;
    const ImFontGlyph* g = font->FindGlyph(static_cast<ImWchar>(c));
    if (!g) continue;
    if (g->Visible) {
      // Text space (x right, y down) to screen, turned 90° anticlockwise: (x, y) → (y, −x).
      const float x0 = x + g->X0 * scale, x1 = x + g->X1 * scale;
      const float y0 = g->Y0 * scale, y1 = g->Y1 * scale;
      dl->PrimReserve(6, 4);
      dl->PrimQuadUV({origin.x + y0, origin.y - x0}, {origin.x + y0, origin.y - x1},
                     {origin.x + y1, origin.y - x1}, {origin.x + y1, origin.y - x0}, {g->U0, g->V0},
                     {g->U1, g->V0}, {g->U1, g->V1}, {g->U0, g->V1}, col);
    }
    x += g->AdvanceX * scale;
  }
}

// The colour bar's ticks: the exporter's (render/color_scale.h), both ends with the precision
// their size needs ("0" … "0.00317" on 4096 keys) and round values between them; a label that
// would tell a hidden value reads "?".
std::vector<ColorTick> bar_ticks(const ColorScale& scale, const LabelFilter& hide) {
  std::vector<ColorTick> ticks = colorbar_ticks(scale, 5);
  if (hide)
    for (ColorTick& t : ticks)
      if (hide(t.label)) t.label = "?";
  return ticks;
}

// Every how many rows or columns a label goes when they cannot all have one: at least `need`,
// rounded up to 1, 2 or 5 × 10^k so a long sequence reads 0, 50, 100, ... rather than 0, 37, 74.
int label_step(float need) {
  if (!(need > 1.0f)) return 1;
  if (need > 5e8f) return std::numeric_limits<int>::max();
  return static_cast<int>(std::lround(nice_step(need)));
}

}  // namespace

float text_width(ImFont* font, float size, const std::string& text) {
  return font->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x;
}

std::string abbreviate(ImFont* font, float size, const std::string& text, float width) {
  // Half a pixel's grace: a width measured once and given back through sums (label column =
  // widest label + padding, less the padding) comes back a rounding error short of the widest
  // label, which then read as "…".
  width += 0.5f;
  if (text_width(font, size, text) <= width) return text;
  // Cut at code point boundaries, keeping as much as fits with the ellipsis.
  std::string best = "…";
  for (size_t k = 1; k <= text.size(); ++k) {
    if (k < text.size() && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) continue;
    const std::string candidate = text.substr(0, k) + "…";
    if (text_width(font, size, candidate) > width) break;
    best = candidate;
  }
  return best;
}

void draw_text(const WidgetContext& ctx, ImDrawList* dl, ImFont* font, float size, ImVec2 pos,
               ImU32 col, const std::string& text, bool vertical) {
  const float w = text_width(font, size, text);
  ImVec2 a = pos, b{pos.x + w, pos.y + size};
  if (vertical) {
    vertical_glyphs(dl, font, size, pos, col, text);
    a = {pos.x, pos.y - w};
    b = {pos.x + size, pos.y};
  } else {
    dl->AddText(font, size, pos, col, text.c_str());
  }
  if (ctx.text_log) {
    const ImGuiWindow* w = ImGui::GetCurrentWindow();
    ctx.text_log->push_back({a, b, dl->GetClipRectMin(), dl->GetClipRectMax(), w->InnerClipRect.Min,
                             w->InnerClipRect.Max, w->ScrollbarX, w->ScrollMax.y > 0.5f, text});
  }
}

float draw_color_bar(const WidgetContext& ctx, ImDrawList* dl, ImVec2 pos, float bw,
                     const ColorScale& scale, const LabelFilter& hide) {
  const float fs = ImGui::GetFontSize();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float bh = fs * 0.8f;
  const int n = 96;
  for (int k = 0; k < n; ++k) {
    const float x0 = pos.x + bw * k / n, x1 = pos.x + bw * (k + 1) / n + 1;
    dl->AddRectFilled({x0, pos.y}, {std::min(x1, pos.x + bw), pos.y + bh},
                      colormap_u32(scale.map, (k + 0.5f) / n));
  }
  dl->AddRect({pos.x, pos.y}, {pos.x + bw, pos.y + bh}, dim);
  ImFont* font = ImGui::GetFont();
  const std::vector<ColorTick> ticks = bar_ticks(scale, hide);
  const float y = pos.y + bh + 2, gap = fs * 0.75f;
  const std::string &lo = ticks.front().label, &hi = ticks.back().label;
  const float lo_w = text_width(font, fs, lo), hi_w = text_width(font, fs, hi);
  if (lo_w + hi_w + gap > bw) return bh + 2 + fs;  // no room for any number
  draw_text(ctx, dl, font, fs, {pos.x, y}, dim, lo);
  draw_text(ctx, dl, font, fs, {pos.x + bw - hi_w, y}, dim, hi);
  // Round values between the ends, centred under their place on the bar, each clear of the
  // labels drawn before it and of the right end's.
  float right_of_last = pos.x + lo_w;
  for (size_t k = 1; k + 1 < ticks.size(); ++k) {
    const float tw = text_width(font, fs, ticks[k].label);
    const float x = pos.x + bw * scale_position(scale, static_cast<float>(ticks[k].value));
    if (x - tw / 2 < right_of_last + gap || x + tw / 2 > pos.x + bw - hi_w - gap) continue;
    dl->AddLine({std::floor(x) + 0.5f, pos.y + bh - fs * 0.25f}, {std::floor(x) + 0.5f, pos.y + bh},
                dim);
    draw_text(ctx, dl, font, fs, {std::floor(x - tw / 2), y}, dim, ticks[k].label);
    right_of_last = x + tw / 2;
  }
  return bh + 2 + fs;
}

// The widest tick label of a colour bar at the font size: a bar standing right of the grid takes
// its width beside the bar (heatmap_layout).
float bar_tick_width(const ColorScale& scale) {
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  float w = 0;
  for (const ColorTick& t : bar_ticks(scale, {})) w = std::max(w, text_width(font, fs, t.label));
  return w;
}

// A colour bar standing up right of a grid (vmax at the top), its ticks on its right.
void draw_vertical_bar(const WidgetContext& ctx, ImDrawList* dl, ImVec2 pos, float height,
                       const ColorScale& scale, const LabelFilter& hide) {
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const float bw = fs * 0.8f;
  const int n = 96;
  for (int k = 0; k < n; ++k) {
    const float y0 = pos.y + height * k / n, y1 = pos.y + height * (k + 1) / n + 1;
    dl->AddRectFilled({pos.x, y0}, {pos.x + bw, std::min(y1, pos.y + height)},
                      colormap_u32(scale.map, 1.0f - (k + 0.5f) / n));
  }
  dl->AddRect(pos, {pos.x + bw, pos.y + height}, dim);
  const float x = pos.x + bw + fs * 0.4f;
  const std::vector<ColorTick> ticks = bar_ticks(scale, hide);
  draw_text(ctx, dl, font, fs, {x, pos.y}, dim, ticks.back().label);
  if (height < fs * 2.2f) return;  // room for the top value only
  draw_text(ctx, dl, font, fs, {x, pos.y + height - fs}, dim, ticks.front().label);
  // Round values at their height, each a line clear of the ends and of each other.
  float above = pos.y + height - fs;  // top of the last label drawn, from the bottom up
  for (size_t k = 1; k + 1 < ticks.size(); ++k) {
    const float yc =
        pos.y + height * (1.0f - scale_position(scale, static_cast<float>(ticks[k].value)));
    if (yc + fs / 2 > above - fs * 0.25f || yc - fs / 2 < pos.y + fs * 1.25f) continue;
    dl->AddLine({pos.x + bw - fs * 0.25f, std::floor(yc) + 0.5f},
                {pos.x + bw, std::floor(yc) + 0.5f}, dim);
    draw_text(ctx, dl, font, fs, {x, std::floor(yc - fs / 2)}, dim, ticks[k].label);
    above = yc - fs / 2;
  }
}

namespace {

// The cell size search of heatmap_layout: the room everything around the grid takes, and the
// choices (key labels' angle, row statistics, where the colour bar and legend go) made in turn.
struct CellSizing {
  const HeatmapLayoutInput& in;
  float fs, pad, min_lf;
  float label_w = 0, cap_h = 0, stats_w = 0, legend_w = 0, max_cell = 0;
  float band = 0, bottom = 0;  // key labels above the grid; bar and legend under it
  ImVec2 base;                 // the cells' size before zoom
  float col_lf = 0;            // key labels' font size
  bool vertical = false, show_stats = false, bar_right = false, legend_below = false;
  float short_bar = 0;

  CellSizing(const HeatmapLayoutInput& input, float font, float padding, float least_lf)
      : in(input), fs(font), pad(padding), min_lf(least_lf) {}

  // The cells' size that fits the room left by the band above, `bottom` under and `right`.
  ImVec2 fit(float band_h, float bottom_h, float right) const {
    const float grid_w = std::max(in.avail.x - label_w - right, fs * 2);
    const float grid_h = std::max(in.avail.y - cap_h - band_h - bottom_h, fs * 2);
    float bw = std::min(grid_w / in.cols, max_cell), bh = std::min(grid_h / in.rows, max_cell);
    bw = std::min(bw, bh * 2.5f);  // wide but not ribbon-like
    bh = std::min(bh, bw);         // never taller than wide
    // No lower bound but a tiny one: at "fit" a 4096-token matrix is a fraction of a pixel a
    // cell and still wholly visible, the GL renderer max-pooling the cells under each pixel.
    return ImVec2{std::max(bw, 1e-3f), std::max(bh, 1e-3f)};
  }

  // Key labels: full size upright; smaller upright; turned upright; turned and thinned.
  void choose_columns(float cw) {
    vertical = false;
    col_lf = fs;
    if (!in.labels || in.col_label_w <= 0) return;
    if (in.col_label_w + pad <= cw) return;
    const float shrunk = fs * (cw - pad) / in.col_label_w;
    if (shrunk >= min_lf) {
      col_lf = shrunk;
      return;
    }
    vertical = true;
    col_lf = std::clamp((cw - 2) / 1.15f, min_lf, fs);
  }

  // Chooses the key labels for the cells' width; when they have to turn, the band above the grid
  // grows to hold them standing and the cells are fitted again (with `right` taken beside them).
  void settle_columns(float right) {
    choose_columns(base.x);
    if (!vertical) return;
    const float want = std::min(in.col_label_w * col_lf / fs, fs * 7) + pad;
    if (band >= want - 0.5f) return;
    band = want;
    if (in.cell <= 0) base = fit(band, bottom, right);
    choose_columns(base.x);
  }

  // Row statistics take spare width, or width the cells can spare without losing their numbers
  // or their labels; otherwise the tooltip carries them.
  void place_stats() {
    if (stats_w <= 0 || in.cell > 0) return;
    const float spare = in.avail.x - label_w - base.x * in.cols;
    if (spare >= stats_w) {
      show_stats = true;
    } else if (!in.cells_first) {
      const ImVec2 with = fit(band, bottom, stats_w);
      const float need =
          std::max(in.number_w * 0.6f + 6, vertical ? min_lf * 1.15f : in.col_label_w + pad);
      if (with.x >= need && with.y >= base.y * 0.999f) {
        show_stats = true;
        base = with;
      }
    }
  }

  // The colour bar stands right of the grid when that leaves larger cells (a wide panel), else
  // lies under it.
  void place_bar() {
    const float vbar_w =
        in.color_bar && in.cell <= 0 ? fs * 0.8f + fs * 0.4f + in.bar_tick_w + pad * 2 : 0;
    if (vbar_w <= 0) return;
    const float legend_line = !in.legend ? 0 : fs * 1.4f;
    const ImVec2 side = fit(band, legend_line, (show_stats ? stats_w : 0) + vbar_w);
    const bool larger = in.cells_first ? side.x * side.y > base.x * base.y * 1.05f
                                       : side.y > base.y * 1.05f && side.x >= base.x * 0.6f;
    if (larger) {
      bar_right = true;
      bottom = legend_line;
      legend_below = in.legend;
      base = side;
      settle_columns((show_stats ? stats_w : 0) + vbar_w);
    }
  }

  // The hidden-cell legend sits right of a lying bar when it fits, else on a line of its own.
  void place_legend() {
    if (bar_right || !in.legend || !in.color_bar) return;
    const float grid_w = base.x * in.cols;
    float bw = std::min(std::max(grid_w, fs * 10), in.avail.x - label_w);
    // A shorter bar (8 letters at the least) that keeps the legend beside it leaves the line
    // under it to the cells.
    const float beside = in.avail.x - label_w - pad * 2 - legend_w;
    if (in.cell <= 0 && bw > beside && beside >= fs * 8) short_bar = bw = beside;
    if (label_w + bw + pad * 2 + legend_w > in.avail.x) {
      short_bar = 0;
      legend_below = true;
      bottom += fs * 1.4f;
      if (in.cell <= 0) {
        base = fit(band, bottom, show_stats ? stats_w : 0);
        settle_columns(show_stats ? stats_w : 0);
      }
    }
  }
};

// Sizes the cells for the room, in the order the eye reads, and copies the choices into L.
void size_cells(const HeatmapLayoutInput& in, HeatmapLayout& L) {
  const float fs = in.font;
  const float pad = fs * 0.5f;
  // Labels shrink to this before anything else; presentation's large text lets them go further
  // (16 px, the least a projector's back row reads) before they turn upright and take the cells'
  // height.
  const float min_lf = in.cells_first ? std::max(std::min(fs * 0.72f, 16.0f), fs * 0.45f)
                                      : std::max(fs * 0.72f, 10.0f);
  CellSizing z(in, fs, pad, min_lf);
  L.pad = pad;
  L.min_lf = min_lf;
  const bool row_names = in.labels && in.row_labels_shown;
  L.row_names = row_names;
  L.axis_size = fs * 0.85f;
  const float row_axis_w = in.labels && in.row_axis && !in.cells_first ? in.row_axis_w : 0;
  L.row_axis_w = row_axis_w;
  const float row_cap = in.cell > 0 ? 1e9f : in.avail.x * 0.28f;
  if (row_names)
    z.label_w = std::min(std::max(in.row_label_w, row_axis_w), row_cap) + pad * 2;
  else if (in.labels)
    z.label_w = pad;
  z.cap_h = in.labels && (in.col_axis || in.row_axis) && !in.cells_first ? fs * 1.15f : 0;
  z.stats_w = in.row_stats && in.labels ? in.stats_text_w + pad * 2 : 0;
  z.legend_w = !in.legend ? 0 : fs * 1.3f + pad + in.legend_text_w;
  const float bar_block = in.color_bar ? fs * 0.6f + fs * 0.8f + 2 + fs + fs * 0.2f : 0;
  z.max_cell = in.max_cell > 0 ? in.max_cell * fs / 20.0f : 1e9f;

  z.band = in.labels ? fs * 1.3f : 0;  // key labels above the grid (upright at first)
  z.bottom = bar_block;
  z.base = in.cell > 0 ? ImVec2{in.cell, in.cell} : z.fit(z.band, z.bottom, 0);
  z.col_lf = fs;
  z.settle_columns(0);
  z.place_stats();
  z.place_bar();
  z.place_legend();

  L.label_w = z.label_w;
  L.cap_h = z.cap_h;
  L.band = z.band;
  L.bottom = z.bottom;
  L.stats_w = z.stats_w;
  L.show_stats = z.show_stats;
  L.bar_right = z.bar_right;
  L.legend_below = z.legend_below;
  L.bar_w = z.short_bar;
  L.base = z.base;
  L.col_lf = z.col_lf;
  L.vertical = z.vertical;
}

// Places the viewport at the zoom and pan (or, in presentation, on a window of rows or columns
// around the focus), and finds the cells it shows.
void place_viewport(const HeatmapLayoutInput& in, HeatmapLayout& L) {
  const int rows = in.rows, cols = in.cols;
  const ImVec2 pos = in.pos, avail = in.avail, base = L.base;
  const float min_lf = L.min_lf;
  float cell_w = base.x * in.zoom, cell_h = base.y * in.zoom;
  const float stats_used = L.show_stats ? L.stats_w : 0;
  const ImVec2 vp0{pos.x + L.label_w, pos.y + L.cap_h + L.band};
  // Presentation never thins its labels: rows (or columns) too many for 16 px labels are shown
  // as a window of them at that size, centred on the selected query (or key).
  const bool window_rows = in.cells_first && in.labels && in.row_labels_shown && in.cell <= 0 &&
                           rows > 1 && cell_h < min_lf * 1.05f;
  const bool window_cols = in.cells_first && in.labels && in.cell <= 0 && cols > 1 && L.vertical &&
                           cell_w < min_lf * 1.15f;
  if (window_rows) cell_h = std::ceil(min_lf * 1.05f);
  if (window_cols) cell_w = std::ceil(min_lf * 1.15f);
  L.windowed = window_rows || window_cols;
  const ImVec2 vp_size =
      in.cell > 0 ? ImVec2{base.x * cols, base.y * rows}
                  : ImVec2{std::min(avail.x - L.label_w - stats_used, cell_w * cols),
                           std::min(avail.y - L.cap_h - L.band - L.bottom, cell_h * rows)};
  const ImVec2 vp1{vp0.x + vp_size.x, vp0.y + vp_size.y};
  auto centred = [](int focus, float cell, float room) {
    return room / 2 - (static_cast<float>(std::max(focus, 0)) + 0.5f) * cell;
  };
  const ImVec2 wanted{window_cols ? centred(in.focus_col, cell_w, vp_size.x) : in.pan.x,
                      window_rows ? centred(in.focus_row, cell_h, vp_size.y) : in.pan.y};
  // Keep the matrix covering the viewport.
  const ImVec2 pan{std::clamp(wanted.x, vp_size.x - cell_w * cols, 0.0f),
                   std::clamp(wanted.y, vp_size.y - cell_h * rows, 0.0f)};
  const ImVec2 origin{vp0.x + pan.x, vp0.y + pan.y};
  L.i0 = std::max(0, static_cast<int>((vp0.y - origin.y) / cell_h));
  L.i1 = std::min(rows, static_cast<int>(std::ceil((vp1.y - origin.y) / cell_h)));
  L.j0 = std::max(0, static_cast<int>((vp0.x - origin.x) / cell_w));
  L.j1 = std::min(cols, static_cast<int>(std::ceil((vp1.x - origin.x) / cell_w)));
  L.small = static_cast<double>(L.i1 - L.i0) * (L.j1 - L.j0) <= 4096;
  L.cell_w = cell_w;
  L.cell_h = cell_h;
  L.vp0 = vp0;
  L.vp_size = vp_size;
  L.vp1 = vp1;
  L.pan = pan;
  L.origin = origin;
}

// The numbers' size (and whether they show) and the labels' sizes and thinning, for the cells.
void size_text(const HeatmapLayoutInput& in, HeatmapLayout& L) {
  const float fs = in.font, cell_w = L.cell_w, cell_h = L.cell_h, min_lf = L.min_lf;
  // Numbers, as large as the cells allow: a projector needs them big, a crowded grid small.
  const float em = in.number_w / fs;  // width of the widest number per pixel of font size
  const bool big_numbers = in.max_cell <= 0;
  const float number_cap = big_numbers ? fs * 2.2f : fs;
  const float nf = em > 0 ? std::min({cell_h * 0.5f, (cell_w * 0.8f - 4) / em, number_cap}) : 0;
  // Presentation's large text lets the numbers go down to 16 px (readable on a projector) before
  // they are left out.
  const float min_nf =
      in.cells_first ? std::max(10.0f, std::min(fs * 0.55f, 16.0f)) : std::max(10.0f, fs * 0.55f);
  const float least_nf = in.min_number_px > 0 ? in.min_number_px : min_nf;
  L.number_size = nf;
  L.numbers_shown = in.cell_text && L.small && nf >= least_nf;
  // Labels: as large as the rows allow, and every so many when they cannot all have one.
  // Every row labelled at 12 px rather than every other one at 14 (a 24-token sentence at 720p).
  const float row_min =
      cell_h / 1.05f >= 12.0f && !in.cells_first ? std::min(min_lf, cell_h / 1.05f) : min_lf;
  L.row_lf = std::clamp(cell_h / 1.05f, row_min, fs);
  L.row_every = label_step(L.row_lf * 1.02f / cell_h);
  L.col_every = label_step(L.vertical ? L.col_lf * 1.1f / cell_w
                                      : (in.col_label_w * L.col_lf / fs + L.pad * 0.5f) / cell_w);
}

}  // namespace

HeatmapLayout heatmap_layout(const HeatmapLayoutInput& in) {
  HeatmapLayout L;
  size_cells(in, L);
  place_viewport(in, L);
  size_text(in, L);
  return L;
}

namespace {

ImU32 selection_color(bool light) {
  return light ? IM_COL32(230, 60, 20, 255) : IM_COL32(255, 140, 40, 255);
}

bool is_concealed(const HeatmapSpec& sp, int i, int j) {
  return sp.concealed && sp.concealed(i, j);
}

// The cells and what goes over them: concealed cells, the grid, the numbers, an edit's flash and
// the selection, all clipped to the viewport.
void paint_heatmap(const WidgetContext& ctx, const HeatmapSpec& sp, const Matrix& m,
                   HeatmapViewport& v, const HeatmapLayout& L, uint64_t serial) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool light = ctx.light_theme;
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const int decimals = sp.decimals >= 0 ? sp.decimals : ctx.decimals;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const int i0 = L.i0, i1 = L.i1, j0 = L.j0, j1 = L.j1;
  const bool small = L.small;
  auto concealed = [&](int i, int j) { return is_concealed(sp, i, j); };
  const ImU32 background = ImGui::GetColorU32(ImGuiCol_WindowBg);

  dl->PushClipRect(L.vp0, L.vp1, true);
  std::vector<ImU32> anim_fills;
  if (sp.anim && small) {
    anim_fills.assign(static_cast<size_t>(rows) * cols, background);
    draw_cells_animated(dl, sp, v, light, background, i0, i1, j0, j1, anim_fills);
  } else {
    const ImVec2 full1{v.origin.x + v.cell_w * cols, v.origin.y + v.cell_h * rows};
    if (!ctx.renderer ||
        !ctx.renderer->draw(dl, sp.texture_key.empty() ? sp.id : sp.texture_key, serial, m,
                            sp.hidden, sp.scale, light, v.origin, full1))
      draw_cells_cpu(dl, sp, m, v, light, i0, i1, j0, j1);
  }
  const ImU32 conceal_fill = light ? IM_COL32(214, 218, 228, 255) : IM_COL32(58, 62, 76, 255);
  if (sp.concealed && small)
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j)
        if (concealed(i, j)) {
          const ImVec2 a = v.cell_min(i, j);
          dl->AddRectFilled(a, {a.x + v.cell_w, a.y + v.cell_h}, conceal_fill);
        }
  const ImU32 grid_col = light ? IM_COL32(255, 255, 255, 200) : IM_COL32(20, 20, 24, 200);
  if (sp.cell_text && v.cell_w >= 10 && v.cell_h >= 10) {
    for (int j = j0; j <= j1; ++j)
      dl->AddLine({v.origin.x + j * v.cell_w, L.vp0.y}, {v.origin.x + j * v.cell_w, L.vp1.y},
                  grid_col);
    for (int i = i0; i <= i1; ++i)
      dl->AddLine({L.vp0.x, v.origin.y + i * v.cell_h}, {L.vp1.x, v.origin.y + i * v.cell_h},
                  grid_col);
  }
  const float nf = L.number_size;
  v.numbers_shown = L.numbers_shown;
  v.number_px = v.numbers_shown ? nf : 0;
  ImFont* number_font = nf > fs * 1.05f && ctx.cell_font ? ctx.cell_font : font;
  if (v.numbers_shown) {
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j) {
        const ImVec2 c = v.cell_center(i, j);
        if (concealed(i, j)) {
          const float qs = std::min(v.cell_h * 0.5f, std::max(nf, fs));
          const float qw = text_width(number_font, qs, "?");
          draw_text(ctx, dl, number_font, qs, {std::floor(c.x - qw / 2), std::floor(c.y - qs / 2)},
                    ImGui::GetColorU32(ImGuiCol_Text), "?");
          continue;
        }
        const size_t k = static_cast<size_t>(i) * cols + j;
        const bool hid = sp.anim ? k < sp.anim->hatch.size() && sp.anim->hatch[k] >= 0.5f
                                 : is_hidden(sp, m, i, j);
        const float x = m(i, j);
        // A hidden weight is exactly 0 (written as the exporter writes it); a masked score −∞.
        std::string text =
            hid && std::isfinite(x) && !sp.anim ? "0" : format_fixed(x, decimals, true);
        ImU32 col;
        if (hid) {
          col = light ? IM_COL32(60, 60, 70, 255) : IM_COL32(200, 200, 210, 255);
        } else {
          const ImU32 fill =
              sp.anim ? anim_fills[k] : colormap_u32(sp.scale.map, scale_position(sp.scale, x));
          col = luminance(fill) > 0.55f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
        }
        const float tw = text_width(number_font, nf, text);
        draw_text(ctx, dl, number_font, nf, {std::floor(c.x - tw / 2), std::floor(c.y - nf / 2)},
                  col, text);
      }
  }
  // Cells an edit just changed: a bright frame that fades.
  if (sp.flash && small) {
    const float thick = std::max(2.0f, fs * 0.14f);
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j) {
        const float s = sp.flash(i, j);
        if (s <= 0) continue;
        const ImVec2 a = v.cell_min(i, j);
        const ImU32 c = light ? IM_COL32(255, 0, 150, static_cast<int>(255 * s))
                              : IM_COL32(255, 80, 200, static_cast<int>(255 * s));
        dl->AddRect({a.x + thick / 2, a.y + thick / 2},
                    {a.x + v.cell_w - thick / 2, a.y + v.cell_h - thick / 2}, c, 0, 0, thick);
      }
  }
  // Selection.
  const ImU32 sel_col = selection_color(light);
  const float thick = std::max(2.0f, fs * 0.15f);
  if (sp.selected_row >= 0 && sp.selected_row < rows) {
    const int i = sp.selected_row;
    if (sp.selected_col >= 0 && sp.selected_col < cols) {
      ImVec2 a = v.cell_min(i, sp.selected_col);
      dl->AddRect({a.x + 1, a.y + 1}, {a.x + v.cell_w - 1, a.y + v.cell_h - 1}, sel_col, 0, 0,
                  thick);
    } else {
      ImVec2 a = v.cell_min(i, 0);
      dl->AddRect({a.x + 1, a.y + 1}, {a.x + v.cell_w * cols - 1, a.y + v.cell_h - 1}, sel_col, 0,
                  0, thick);
    }
  }
  dl->PopClipRect();
}

// Around the grid: axis titles, query tokens left, key tokens on top, row statistics right, the
// colour bar with its scale and the hatch legend when something is hidden.
void draw_heatmap_labels(const WidgetContext& ctx, const HeatmapSpec& sp, const Matrix& m,
                         HeatmapViewport& v, const HeatmapLayout& L, ImVec2 pos, ImVec2 avail,
                         const std::string& legend) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool light = ctx.light_theme;
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const int cols = static_cast<int>(m.cols());
  const float pad = L.pad, min_lf = L.min_lf, cap_h = L.cap_h, band = L.band;
  const float label_w = L.label_w, axis_size = L.axis_size, stats_w = L.stats_w;
  const ImVec2 vp0 = L.vp0, vp1 = L.vp1, vp_size = L.vp_size;
  const int i0 = L.i0, i1 = L.i1, j0 = L.j0, j1 = L.j1;
  auto concealed = [&](int i, int j) { return is_concealed(sp, i, j); };
  const ImU32 sel_col = selection_color(light);
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (sp.labels && cap_h > 0) {
    dl->PushClipRect(pos, {pos.x + avail.x, pos.y + cap_h}, true);
    if (!sp.row_axis.empty() && L.row_names)
      draw_text(ctx, dl, font, axis_size,
                {std::max(pos.x, vp0.x - pad - L.row_axis_w), pos.y + (cap_h - axis_size) / 2},
                dim_col, sp.row_axis);
    if (!sp.col_axis.empty())
      draw_text(ctx, dl, font, axis_size, {vp0.x, pos.y + (cap_h - axis_size) / 2}, dim_col,
                abbreviate(font, axis_size, sp.col_axis, avail.x - label_w));
    dl->PopClipRect();
  }
  if (L.row_names) {
    dl->PushClipRect({pos.x, vp0.y - fs * 0.5f}, {vp0.x, vp1.y + fs * 0.5f}, true);
    const float row_lf = L.row_lf;
    const int every = L.row_every;
    const float room = label_w - pad * 2;
    for (int i = i0; i < i1; ++i) {
      if (i % every != 0) {
        ++v.labels_dropped;
        continue;
      }
      // A row scrolled half out of view keeps no label: a clipped token reads as another word.
      const float centre = v.origin.y + (i + 0.5f) * v.cell_h;
      if (centre < vp0.y || centre > vp1.y) continue;
      std::string t = label_or_index(sp.row_labels, i);
      const std::string shown = abbreviate(font, row_lf, t, room);
      if (shown != t) ++v.labels_abbreviated;
      const float tw = text_width(font, row_lf, shown);
      draw_text(ctx, dl, font, row_lf, {vp0.x - pad - tw, centre - row_lf / 2},
                i == sp.selected_row ? sel_col : text_col, shown);
    }
    dl->PopClipRect();
  }
  if (sp.labels && band > 0) {
    const ImVec2 b0{vp0.x, pos.y + cap_h}, b1{vp1.x, vp0.y};
    dl->PushClipRect({b0.x - pad, b0.y}, {b1.x + pad, b1.y}, true);
    const bool vertical = L.vertical;
    const float col_lf = L.col_lf;
    const int col_every = L.col_every;
    const float room = vertical ? band - pad : v.cell_w * col_every - pad * 0.5f;
    float right_of_last = -FLT_MAX;  // a label moved in at an end must not cover its neighbour
    for (int j = j0; j < j1; ++j) {
      if (j % col_every != 0) {
        ++v.labels_dropped;
        continue;
      }
      const float centre = v.origin.x + (j + 0.5f) * v.cell_w;
      if (centre < vp0.x || centre > vp1.x) continue;
      const std::string t = label_or_index(sp.col_labels, j);
      const std::string shown = abbreviate(font, col_lf, t, room);
      if (shown != t) ++v.labels_abbreviated;
      const ImU32 c = j == sp.selected_col ? sel_col : text_col;
      if (vertical) {
        draw_text(ctx, dl, font, col_lf, {std::floor(centre - col_lf / 2), vp0.y - pad * 0.5f}, c,
                  shown, true);
      } else {
        // A label wider than its column stays over the grid at either end.
        const float tw = text_width(font, col_lf, shown);
        // (and inside what the window shows of it: a narrow column cuts nothing).
        const float lo = std::max(b0.x - pad, dl->GetClipRectMin().x);
        const float hi = std::min(b1.x + pad, dl->GetClipRectMax().x) - tw;
        const float x = std::clamp(centre - tw / 2, lo, std::max(lo, hi));
        if (x < right_of_last + pad * 0.5f) {
          ++v.labels_dropped;
          continue;
        }
        right_of_last = x + tw;
        draw_text(ctx, dl, font, col_lf, {x, b1.y - band + (band - col_lf) / 2}, c, shown);
      }
    }
    dl->PopClipRect();
  }
  // Row sums and entropy beside weights: students see each row sum to 1 and sharpen or flatten.
  if (L.show_stats) {
    dl->PushClipRect({vp1.x, pos.y + cap_h}, {vp1.x + stats_w, vp1.y}, true);
    const float sf = std::min(fs, std::max(min_lf, v.cell_h / 1.05f));
    if (v.cell_h >= sf * 0.98f) {
      draw_text(ctx, dl, font, sf, {vp1.x + pad, vp0.y - band + (band - sf) / 2}, dim_col,
                abbreviate(font, sf, "Σ  ·  H bits", stats_w - pad));
      for (int i = i0; i < i1; ++i) {  // only the rows on screen: a 1024-key row costs 1024 logs
        bool hide = false;
        for (int j = 0; j < cols && sp.concealed && !hide; ++j) hide = concealed(i, j);
        const float y = v.origin.y + (i + 0.5f) * v.cell_h - sf / 2;
        if (y < vp0.y - 1 || y + sf > vp1.y + 1) continue;
        char buf[96];
        if (hide) {
          std::snprintf(buf, sizeof buf, "Σ ?  H ?");
        } else {
          const double sum = m.row(i).cast<double>().sum();
          const double ent = row_entropy_bits(m.row(i))[0];
          std::snprintf(buf, sizeof buf, "Σ %.2f  H %.2f", sum, ent);
        }
        draw_text(ctx, dl, font, sf, {vp1.x + pad, y}, dim_col, buf);
      }
    }
    dl->PopClipRect();
  }

  if (sp.color_bar) {
    const float stats_used = L.show_stats ? stats_w : 0;
    float bw = 0, used = 0, by = vp1.y + fs * 0.6f;
    if (L.bar_right) {
      draw_vertical_bar(ctx, dl, {vp1.x + stats_used + pad * 1.5f, vp0.y}, vp_size.y, sp.scale,
                        sp.hides_label);
      by = vp1.y + fs * 0.4f;
    } else {
      bw = sp.cell > 0   ? vp_size.x
           : L.bar_w > 0 ? L.bar_w
                         : std::min(std::max(vp_size.x, fs * 10), avail.x - label_w);
      used = draw_color_bar(ctx, dl, {vp0.x, by}, bw, sp.scale, sp.hides_label);
    }
    if (!legend.empty()) {
      const float sw = fs * 1.3f, sh = fs * 0.8f;
      const ImVec2 at = L.bar_right      ? ImVec2{vp0.x, by + (fs - sh) / 2}
                        : L.legend_below ? ImVec2{vp0.x, by + used + fs * 0.3f}
                                         : ImVec2{vp0.x + bw + pad * 2, by};
      draw_hatch(dl, at, {at.x + sw, at.y + sh}, light);
      draw_text(ctx, dl, font, fs, {at.x + sw + pad * 0.6f, at.y + (sh - fs) / 2}, dim_col,
                abbreviate(font, fs, legend, avail.x - (at.x - pos.x) - sw - pad * 0.6f));
    }
  }
}

// One invisible button over the cells (hover, tooltip, click, zoom and pan) and one over each
// label band (a row label selects the row, a key label picks the key).
HeatmapEvent heatmap_interaction(const WidgetContext& ctx, const HeatmapSpec& sp, const Matrix& m,
                                 HeatmapViewport& v, const HeatmapLayout& L, ImVec2 pos) {
  HeatmapEvent ev;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool light = ctx.light_theme;
  const float fs = ImGui::GetFontSize();
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const ImVec2 vp0 = L.vp0, vp1 = L.vp1, vp_size = L.vp_size, base = L.base;
  auto concealed = [&](int i, int j) { return is_concealed(sp, i, j); };
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetCursorScreenPos(vp0);
  ImGui::InvisibleButton((sp.id + "##cells").c_str(),
                         {std::max(vp_size.x, 1.0f), std::max(vp_size.y, 1.0f)},
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  v.hover_row = v.hover_col = -1;
  bool& dragged = v.dragged;
  if (ImGui::IsItemActivated()) dragged = false;
  if (ImGui::IsItemActive()) {
    for (int b = 0; b < 3; ++b)
      if (ImGui::IsMouseDragging(b, 4.0f)) {
        dragged = true;
        v.pan.x += io.MouseDelta.x;
        v.pan.y += io.MouseDelta.y;
      }
  }
  if (hovered) {
    const int i = static_cast<int>(std::floor((io.MousePos.y - v.origin.y) / v.cell_h));
    const int j = static_cast<int>(std::floor((io.MousePos.x - v.origin.x) / v.cell_w));
    if (io.MouseWheel != 0) {  // zoom about the cursor; even a small heatmap zooms 4×
      const float old = v.zoom;
      const float max_zoom = std::max(4.0f, (fs * 4) / std::min(base.x, base.y));
      v.zoom = std::clamp(v.zoom * std::pow(1.2f, io.MouseWheel), 1.0f, max_zoom);
      const float k = v.zoom / old;
      v.pan.x = (io.MousePos.x - vp0.x) - (io.MousePos.x - vp0.x - v.pan.x) * k;
      v.pan.y = (io.MousePos.y - vp0.y) - (io.MousePos.y - vp0.y - v.pan.y) * k;
      io.MouseWheel = 0;  // the heatmap used it: the window must not scroll as well
    }
    if (i >= 0 && i < rows && j >= 0 && j < cols && !ImGui::IsItemActive()) {
      v.hover_row = i;
      v.hover_col = j;
      // A thin outline on the cell under the pointer, so the tooltip's indices are easy to place.
      const ImVec2 a = v.cell_min(i, j);
      dl->PushClipRect(vp0, vp1, true);
      dl->AddRect(a, {a.x + v.cell_w, a.y + v.cell_h},
                  light ? IM_COL32(0, 0, 0, 140) : IM_COL32(255, 255, 255, 160));
      dl->PopClipRect();
      ImGui::BeginTooltip();
      std::string value = format_fixed(m(i, j), 4, true);
      if (concealed(i, j))
        value = "?  (hidden until the reveal)";
      else if (is_hidden(sp, m, i, j) && !std::isinf(m(i, j)))
        value += "  (hidden by the mask)";
      ImGui::Text("%s[%d, %d] = %s", sp.matrix_name, i, j, value.c_str());
      ImGui::TextDisabled("row %d: %s    column %d: %s", i,
                          label_or_index(sp.row_labels, i).c_str(), j,
                          label_or_index(sp.col_labels, j).c_str());
      if (sp.row_stats && !L.show_stats && !concealed(i, j))
        ImGui::TextDisabled("row sum %.4f · entropy %.2f bits", m.row(i).cast<double>().sum(),
                            row_entropy_bits(m.row(i))[0]);
      ImGui::EndTooltip();
    }
    if (ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !dragged && i >= 0 && i < rows && j >= 0 &&
        j < cols) {
      ev.row = i;
      ev.col = j;
      ev.clicked = true;
    }
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Right)) {
      v.zoom = 1;
      v.pan = {0, 0};
    }
  }
  // Row labels: click selects the whole row.
  if (L.label_w > 0) {
    ImGui::SetCursorScreenPos({pos.x, vp0.y});
    ImGui::InvisibleButton((sp.id + "##rows").c_str(),
                           {std::max(L.label_w, 1.0f), std::max(vp_size.y, 1.0f)});
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
      const int i = static_cast<int>(std::floor((io.MousePos.y - v.origin.y) / v.cell_h));
      if (i >= 0 && i < rows) {
        ev.row = i;
        ev.col = -1;
        ev.clicked = true;
      }
    }
  }
  // Key labels: a click picks that key (predict the key with the most weight).
  if (sp.labels && L.band > 0) {
    ImGui::SetCursorScreenPos({vp0.x, pos.y + L.cap_h});
    ImGui::InvisibleButton((sp.id + "##keys").c_str(), {std::max(vp_size.x, 1.0f), L.band});
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
      const int j = static_cast<int>(std::floor((io.MousePos.x - v.origin.x) / v.cell_w));
      if (j >= 0 && j < cols) ev.picked_col = j;
    }
  }
  return ev;
}

}  // namespace

HeatmapEvent draw_heatmap(const WidgetContext& ctx, const HeatmapSpec& sp) {
  HeatmapViewport& v = (*ctx.views)[sp.id];
  const Matrix& m = sp.anim ? sp.anim->value : *sp.m;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const int decimals = sp.decimals >= 0 ? sp.decimals : ctx.decimals;
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  ImVec2 avail = sp.size;
  if (avail.x <= 0) avail.x = ImGui::GetContentRegionAvail().x;
  if (avail.y <= 0) avail.y = ImGui::GetContentRegionAvail().y;
  // Thumbnails may be small; a caller that fixes the cell size has sized the room itself (Q, K
  // and V side by side: a wider V would push past the panel's edge).
  const float min_side = sp.cell > 0 ? 1.0f : sp.labels ? fs * 6 : fs * 1.5f;
  avail.x = std::max(avail.x, min_side);
  avail.y = std::max(avail.y, min_side);
  if (v.rows != rows || v.cols != cols) {  // a new shape starts fitted
    v.zoom = 1;
    v.pan = {0, 0};
  }
  v.rows = rows;
  v.cols = cols;

  // Widths that depend only on the trace, the font and the precision: measured once.
  // (An animation's numbers change every frame: measured every frame, on small matrices only.)
  const uint64_t serial = sp.serial ? sp.serial : ctx.trace_serial;
  const std::string measure_key = (sp.texture_key.empty() ? sp.id : sp.texture_key) + "#" +
                                  std::to_string(serial) + "#" + std::to_string(fs) + "#" +
                                  std::to_string(decimals) +
                                  (sp.anim ? "#anim" + std::to_string(ImGui::GetFrameCount()) : "");
  if (v.measured_for != measure_key) {
    v.measured_for = measure_key;
    v.row_label_w = v.col_label_w = v.number_w = 0;
    if (sp.labels) {
      for (int i = 0; i < std::min(rows, 4096); ++i)
        v.row_label_w =
            std::max(v.row_label_w, text_width(font, fs, label_or_index(sp.row_labels, i)));
      for (int j = 0; j < std::min(cols, 4096); ++j)
        v.col_label_w =
            std::max(v.col_label_w, text_width(font, fs, label_or_index(sp.col_labels, j)));
    }
    if (static_cast<double>(rows) * cols <= 4096)
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
          v.number_w =
              std::max(v.number_w, text_width(font, fs, format_fixed(m(i, j), decimals, true)));
    else
      v.number_w = text_width(font, fs, "−0.00");
    v.any_hidden = sp.hidden && (sp.hidden->array() != 0).any();
  }
  const std::string legend = !v.any_hidden        ? ""
                             : sp.hidden_are_zero ? "hidden by the mask: weight 0"
                                                  : "hidden by the mask (−∞)";

  HeatmapLayoutInput in;
  in.pos = pos;
  in.avail = avail;
  in.font = fs;
  in.rows = rows;
  in.cols = cols;
  in.zoom = v.zoom;
  in.pan = v.pan;
  in.labels = sp.labels;
  in.row_labels_shown = sp.row_labels_shown;
  in.row_stats = sp.row_stats;
  in.color_bar = sp.color_bar;
  in.cell_text = sp.cell_text;
  in.row_axis = !sp.row_axis.empty();
  in.col_axis = !sp.col_axis.empty();
  in.legend = !legend.empty();
  in.cell = sp.cell;
  in.max_cell = sp.max_cell;
  in.min_number_px = sp.min_number_px;
  in.cells_first = sp.cells_first;
  in.focus_row = sp.selected_row;
  in.focus_col = sp.selected_col;
  in.row_label_w = v.row_label_w;
  in.col_label_w = v.col_label_w;
  in.number_w = v.number_w;
  if (sp.labels && in.row_axis) in.row_axis_w = text_width(font, fs * 0.85f, sp.row_axis);
  if (sp.row_stats && sp.labels) in.stats_text_w = text_width(font, fs, "Σ 1.00  H 10.00");
  if (sp.color_bar && sp.cell <= 0) in.bar_tick_w = bar_tick_width(sp.scale);
  if (in.legend) in.legend_text_w = text_width(font, fs, legend);
  const HeatmapLayout L = heatmap_layout(in);

  v.cell_w = L.cell_w;
  v.cell_h = L.cell_h;
  v.col_labels_vertical = L.vertical;
  v.row_stats_shown = L.show_stats;
  v.pan = L.pan;
  v.origin = L.origin;
  v.clip = {L.vp0.x, L.vp0.y, L.vp1.x, L.vp1.y};
  v.drawn = true;
  v.labels_abbreviated = v.labels_dropped = 0;

  paint_heatmap(ctx, sp, m, v, L, serial);
  draw_heatmap_labels(ctx, sp, m, v, L, pos, avail, legend);
  HeatmapEvent ev;
  if (sp.interactive) ev = heatmap_interaction(ctx, sp, m, v, L, pos);
  ImGui::SetCursorScreenPos(pos);
  ImGui::Dummy(avail);
  return ev;
}

}  // namespace attn
