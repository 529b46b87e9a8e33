// The app's line chart: tick values, axis titles, a wrapping legend, end labels and a band (see
// chart_widget.h).
#include "gui/chart_widget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/heatmap_widget.h"
#include "render/ticks.h"

namespace attn {
namespace {

std::string tick_label(double v, double step, bool percent) {
  char buf[32];
  if (percent) {
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  } else {
    const int decimals =
        step >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step))));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}

// The y axis: its range and ticks, from the spec or the data (ending on ticks), and the number
// of values of the longest series.
struct YAxis {
  float lo = 0, hi = 0;
  std::vector<double> ticks;
  double step = 1;
  size_t n = 0;
};

YAxis y_axis(const ChartSpec& c) {
  YAxis ax;
  float lo = c.y_min, hi = c.y_max;
  const bool auto_range = !(c.y_max > c.y_min);
  if (auto_range) {
    lo = INFINITY;
    hi = -INFINITY;
  }
  for (const ChartSeries& s : c.series) {
    ax.n = std::max(ax.n, s.y.size());
    if (auto_range) {
      for (float y : s.y)
        if (std::isfinite(y)) {
          lo = std::min(lo, y);
          hi = std::max(hi, y);
        }
      for (const ImVec2& p : s.points)
        if (std::isfinite(p.y)) {
          lo = std::min(lo, p.y);
          hi = std::max(hi, p.y);
        }
    }
  }
  if (!(hi > lo)) {
    lo = std::isfinite(lo) ? lo - 0.5f : 0;
    hi = lo + 1;
  }
  if (auto_range && lo > 0 && lo < (hi - lo) * 0.5f) lo = 0;  // a loss curve starts its axis at 0
  std::vector<double> yt = nice_ticks(lo, hi, 4);
  const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  if (auto_range) {  // the axis ends on ticks
    lo = std::min<float>(lo, yt.front());
    if (yt.back() < hi) yt.push_back(yt.back() + ystep);
    hi = yt.back();
  }
  ax.lo = lo;
  ax.hi = hi;
  ax.ticks = std::move(yt);
  ax.step = ystep;
  return ax;
}

// The legend under the axes, in as many rows as the width needs: each entry's x offset and row
// (-1 for unnamed series), and the number of rows.
struct LegendLayout {
  std::vector<std::pair<float, int>> entry_pos;
  int rows = 0;
};

LegendLayout legend_layout(const ChartSpec& c, ImFont* font, float fs, float width, float swatch,
                           float legend_gap) {
  LegendLayout lg;
  float x = 0;
  int row = 0;
  bool any = false;
  for (const ChartSeries& s : c.series) {
    if (s.name.empty()) {
      lg.entry_pos.push_back({0, -1});
      continue;
    }
    const float w = swatch + fs * 0.4f + text_width(font, fs, s.name);
    if (any && x + w > width) {
      x = 0;
      ++row;
    }
    lg.entry_pos.push_back({x, row});
    x += w + legend_gap;
    any = true;
  }
  lg.rows = any ? row + 1 : 0;
  return lg;
}

// Where the plot is on screen and how values map into it.
struct PlotArea {
  ImVec2 pos, p0, p1;  // the chart's corner; the plot's corners
  float width, fs, lo, hi, x_max;
  size_t n;
  float xw() const { return p1.x - p0.x; }
  float ymap(double v) const {
    return p1.y - static_cast<float>((v - lo) / (hi - lo)) * (p1.y - p0.y);
  }
  // Where point index k falls.
  float xmap(double k) const {
    return p0.x + (n > 1 ? static_cast<float>(k / (n - 1)) : 0.5f) * xw();
  }
  // Where x falls on the points' axis.
  float xvalue(double x) const {
    return p0.x + xw() * static_cast<float>(std::clamp(x / x_max, 0.0, 1.0));
  }
};

// X ticks: round numbers on a points axis, every category label that fits, or round indices.
void draw_x_ticks(const WidgetContext& ctx, ImDrawList* dl, ImFont* font, const ChartSpec& c,
                  const PlotArea& a, bool has_points, ImU32 dim, ImU32 frame) {
  const float fs = a.fs, tick_y = a.p1.y + fs * 0.2f;
  const float left = a.pos.x, right = a.pos.x + a.width;
  if (has_points) {
    const std::vector<double> xt = nice_ticks(0, a.x_max, 5);
    const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1;
    float next_free = -INFINITY;
    for (double v : xt) {
      const std::string s = tick_label(v, xs, false);
      const float w = text_width(font, fs, s);
      const float x = std::clamp(a.xvalue(v) - w / 2, left, right - w);
      if (x < next_free) continue;
      dl->AddLine({a.xvalue(v), a.p1.y}, {a.xvalue(v), a.p1.y + fs * 0.2f}, frame);
      draw_text(ctx, dl, font, fs, {x, tick_y}, dim, s);
      next_free = x + w + fs * 0.6f;
    }
  } else if (!c.x_labels.empty()) {
    float next_free = -INFINITY;
    for (size_t k = 0; k < c.x_labels.size() && k < std::max<size_t>(a.n, 1); ++k) {
      const float w = text_width(font, fs, c.x_labels[k]);
      float x = a.xmap(static_cast<double>(k)) - w / 2;
      x = std::clamp(x, left, right - w);
      if (x < next_free) continue;
      draw_text(ctx, dl, font, fs, {x, tick_y}, dim, c.x_labels[k]);
      next_free = x + w + fs * 0.6f;
    }
  } else if (a.n > 0) {
    const double x_last = c.x_first + (a.n - 1) * c.x_step;
    const std::vector<double> xt =
        nice_ticks(c.x_first, std::max<double>(x_last, c.x_first + 1), 5);
    const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1;
    float next_free = -INFINITY;
    for (double v : xt) {
      if (v > x_last + 1e-9) continue;
      const std::string s = tick_label(v, xs, false);
      const float w = text_width(font, fs, s);
      const double k = a.n > 1 ? (v - c.x_first) / c.x_step : 0;
      const float x = std::clamp(a.xmap(k) - w / 2, left, right - w);
      if (x < next_free) continue;
      dl->AddLine({a.xmap(k), a.p1.y}, {a.xmap(k), a.p1.y + fs * 0.2f}, frame);
      draw_text(ctx, dl, font, fs, {x, tick_y}, dim, s);
      next_free = x + w + fs * 0.6f;
    }
  }
}

// The highlighted band of x values on a points axis, with its label.
void draw_band(const WidgetContext& ctx, ImDrawList* dl, ImFont* font, const ChartSpec& c,
               const PlotArea& a) {
  const float fs = a.fs;
  const float x0 = a.xvalue(c.band_from), x1 = a.xvalue(c.band_to);
  dl->AddRectFilled({x0, a.p0.y}, {std::max(x1, x0 + 2), a.p1.y}, IM_COL32(255, 160, 40, 70));
  dl->AddLine({x0, a.p0.y}, {x0, a.p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
  dl->AddLine({x1, a.p0.y}, {x1, a.p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
  if (!c.band_label.empty()) {
    const float tw = text_width(font, fs, c.band_label);
    const float tx = std::clamp((x0 + x1 - tw) / 2, a.p0.x + 2, a.p1.x - tw - 2);
    draw_text(ctx, dl, font, fs, {tx, a.p0.y + 2}, IM_COL32(200, 90, 0, 255), c.band_label);
  }
}

// Draws one series of (x, y) points. Many more points than pixels: keeps one per pixel column
// (the last), so the cost stays bounded however long training runs. Returns where it ends.
ImVec2 draw_points(ImDrawList* dl, const ChartSeries& s, const PlotArea& a) {
  std::vector<ImVec2> pts;
  pts.reserve(s.points.size());
  float last_x = -1e9f;
  for (const ImVec2& v : s.points) {
    const ImVec2 p{a.xvalue(v.x), a.ymap(std::clamp<double>(v.y, a.lo, a.hi))};
    if (p.x - last_x < 1.0f && !pts.empty()) {
      pts.back() = p;
      continue;
    }
    pts.push_back(p);
    last_x = p.x;
  }
  if (s.dashed) {
    for (size_t i = 0; i + 1 < pts.size(); i += 2)
      dl->AddLine(pts[i], pts[i + 1], s.colour, s.thickness);
  } else if (pts.size() == 1) {
    dl->AddCircleFilled(pts[0], s.thickness * 1.5f, s.colour);
  } else {
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), s.colour, 0, s.thickness);
  }
  return pts.back();
}

// The lines, clipped to the plot. Returns where each labelled one ends, for its label.
std::vector<std::pair<float, const ChartSeries*>> draw_series(ImDrawList* dl, const ChartSpec& c,
                                                              const PlotArea& a) {
  std::vector<std::pair<float, const ChartSeries*>> ends;
  dl->PushClipRect(a.p0, {a.p1.x + 1, a.p1.y + 1}, true);
  for (const ChartSeries& s : c.series) {
    const size_t m = s.y.size();
    if (m == 0 && !s.points.empty()) {
      const ImVec2 last = draw_points(dl, s, a);
      if (!s.end_label.empty()) ends.push_back({last.y, &s});
      continue;
    }
    if (m == 0) continue;
    // Long curves are drawn from at most ~2 points per pixel.
    const size_t every =
        std::max<size_t>(1, m / std::max<size_t>(1, static_cast<size_t>(a.xw() * 2)));
    ImVec2 prev{a.xmap(0), a.ymap(s.y[0])};
    for (size_t k = every; k < m; k += every) {
      const ImVec2 p{a.xmap(static_cast<double>(k)), a.ymap(s.y[k])};
      dl->AddLine(prev, p, s.colour, s.thickness);
      prev = p;
    }
    if (m == 1) dl->AddCircleFilled(prev, 3, s.colour);
    if (!s.end_label.empty()) ends.push_back({prev.y, &s});
  }
  dl->PopClipRect();
  return ends;
}

// Labels at the lines' ends, pushed apart so they do not overlap.
void draw_end_labels(const WidgetContext& ctx, ImDrawList* dl, ImFont* font, const PlotArea& a,
                     std::vector<std::pair<float, const ChartSeries*>> ends) {
  const float fs = a.fs;
  std::sort(ends.begin(), ends.end(),
            [](const auto& l, const auto& r) { return l.first < r.first; });
  float next_label = a.p0.y - fs / 2;
  for (const auto& [y, s] : ends) {
    const float ly = std::max(y - fs / 2, next_label);
    draw_text(ctx, dl, font, fs, {a.p1.x + fs * 0.3f, ly}, s->colour, s->end_label);
    next_label = ly + fs;
  }
}

}  // namespace

void draw_line_chart(const WidgetContext& ctx, const ChartSpec& c) {
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const float width = c.size.x > 0 ? c.size.x : ImGui::GetContentRegionAvail().x;
  bool has_points = false;  // an x axis of values from 0 to x_max rather than of point indices
  for (const ChartSeries& s : c.series) has_points |= s.y.empty() && !s.points.empty();
  // The training views stack three charts in a window's height: theirs may be smaller.
  const float height = std::max(c.size.y, fs * (has_points ? 6 : 8));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 frame = ImGui::GetColorU32(ImGuiCol_Border);

  const YAxis ax = y_axis(c);
  float ylabel_w = c.value_room;
  for (double v : ax.ticks)
    ylabel_w = std::max(ylabel_w, text_width(font, fs, tick_label(v, ax.step, c.y_percent)));
  const float swatch = fs * 1.4f, legend_gap = fs;
  const LegendLayout legend = legend_layout(c, font, fs, width, swatch, legend_gap);

  // Layout: the title wraps within the chart's width (a narrow window or large text).
  const float line = fs * 1.3f;
  const float title_h = c.title.empty()
                            ? 0
                            : ImGui::CalcTextSize(c.title.c_str(), nullptr, false, width).y +
                                  ImGui::GetStyle().ItemSpacing.y;
  const float y_title_h = c.y_title.empty() ? 0 : line;
  const float bottom_h = line /*x ticks*/ + (c.x_title.empty() ? 0 : line) + legend.rows * line;
  float end_w = c.label_room;
  for (const ChartSeries& s : c.series)
    if (!s.end_label.empty()) end_w = std::max(end_w, text_width(font, fs, s.end_label));
  const float right = end_w > 0 ? end_w + fs * 0.6f : fs * 0.8f;
  const ImVec2 p0{pos.x + ylabel_w + fs * 0.6f, pos.y + title_h + y_title_h + fs * 0.5f};
  const ImVec2 p1{std::max(pos.x + width - right, p0.x + fs * 4), pos.y + height - bottom_h};
  const PlotArea a{pos, p0, p1, width, fs, ax.lo, ax.hi, std::max(c.x_max, 1.0f), ax.n};

  // Frame, titles and y ticks.
  if (!c.title.empty()) dl->AddText(font, fs, pos, text, c.title.c_str(), nullptr, width);
  dl->AddRect(p0, p1, frame);
  if (!c.y_title.empty()) draw_text(ctx, dl, font, fs, {pos.x, pos.y + title_h}, dim, c.y_title);
  const ImU32 grid = (frame & ~IM_COL32_A_MASK) | (60u << IM_COL32_A_SHIFT);
  for (double v : ax.ticks) {
    if (v < ax.lo - 1e-9 || v > ax.hi + 1e-9) continue;
    const float y = a.ymap(v);
    dl->AddLine({p0.x, y}, {p1.x, y}, grid);
    const std::string s = tick_label(v, ax.step, c.y_percent);
    draw_text(ctx, dl, font, fs, {p0.x - fs * 0.3f - text_width(font, fs, s), y - fs / 2}, dim, s);
  }
  draw_x_ticks(ctx, dl, font, c, a, has_points, dim, frame);
  float y_next = p1.y + line;
  if (!c.x_title.empty()) {
    const std::string t = abbreviate(font, fs, c.x_title, width);
    draw_text(ctx, dl, font, fs, {p0.x + (a.xw() - text_width(font, fs, t)) / 2, y_next}, dim, t);
    y_next += line;
  }
  if (c.band && has_points) draw_band(ctx, dl, font, c, a);
  draw_end_labels(ctx, dl, font, a, draw_series(dl, c, a));
  // Legend.
  for (size_t k = 0; k < c.series.size(); ++k) {
    if (legend.entry_pos[k].second < 0) continue;
    const float x = pos.x + legend.entry_pos[k].first,
                y = y_next + legend.entry_pos[k].second * line;
    dl->AddLine({x, y + fs * 0.55f}, {x + swatch, y + fs * 0.55f}, c.series[k].colour, 3.0f);
    draw_text(ctx, dl, font, fs, {x + swatch + fs * 0.4f, y}, text, c.series[k].name);
  }
  ImGui::Dummy({width, height});
}

}  // namespace attn
