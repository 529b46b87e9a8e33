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

}  // namespace

void draw_line_chart(Ui& ui, const ChartSpec& c) {
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const float width = c.size.x > 0 ? c.size.x : ImGui::GetContentRegionAvail().x;
  size_t n = 0;
  bool has_points = false;  // an x axis of values from 0 to x_max rather than of point indices
  for (const ChartSeries& s : c.series) has_points |= s.y.empty() && !s.points.empty();
  // The training views stack three charts in a window's height: theirs may be smaller.
  const float height = std::max(c.size.y, fs * (has_points ? 6 : 8));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 frame = ImGui::GetColorU32(ImGuiCol_Border);

  float lo = c.y_min, hi = c.y_max;
  const bool auto_range = !(c.y_max > c.y_min);
  if (auto_range) {
    lo = INFINITY;
    hi = -INFINITY;
  }
  for (const ChartSeries& s : c.series) {
    n = std::max(n, s.y.size());
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
  float ylabel_w = c.value_room;
  for (double v : yt)
    ylabel_w = std::max(ylabel_w, text_width(font, fs, tick_label(v, ystep, c.y_percent)));

  // The legend under the axes, in as many rows as the width needs.
  std::vector<std::pair<float, int>> entry_pos;  // x offset and row of each legend entry
  const float swatch = fs * 1.4f, legend_gap = fs;
  int legend_rows = 0;
  {
    float x = 0;
    int row = 0;
    bool any = false;
    for (const ChartSeries& s : c.series) {
      if (s.name.empty()) {
        entry_pos.push_back({0, -1});
        continue;
      }
      const float w = swatch + fs * 0.4f + text_width(font, fs, s.name);
      if (any && x + w > width) {
        x = 0;
        ++row;
      }
      entry_pos.push_back({x, row});
      x += w + legend_gap;
      any = true;
    }
    legend_rows = any ? row + 1 : 0;
  }
  const float line = fs * 1.3f;
  // The title wraps within the chart's width (a narrow window or large text).
  const float title_h = c.title.empty()
                            ? 0
                            : ImGui::CalcTextSize(c.title.c_str(), nullptr, false, width).y +
                                  ImGui::GetStyle().ItemSpacing.y;
  const float y_title_h = c.y_title.empty() ? 0 : line;
  const float bottom_h = line /*x ticks*/ + (c.x_title.empty() ? 0 : line) + legend_rows * line;
  float end_w = c.label_room;
  for (const ChartSeries& s : c.series)
    if (!s.end_label.empty()) end_w = std::max(end_w, text_width(font, fs, s.end_label));
  const float right = end_w > 0 ? end_w + fs * 0.6f : fs * 0.8f;
  const ImVec2 p0{pos.x + ylabel_w + fs * 0.6f, pos.y + title_h + y_title_h + fs * 0.5f};
  const ImVec2 p1{std::max(pos.x + width - right, p0.x + fs * 4), pos.y + height - bottom_h};
  if (!c.title.empty()) dl->AddText(font, fs, pos, text, c.title.c_str(), nullptr, width);
  dl->AddRect(p0, p1, frame);
  if (!c.y_title.empty()) draw_text(ui, dl, font, fs, {pos.x, pos.y + title_h}, dim, c.y_title);
  auto ymap = [&](double v) {
    return p1.y - static_cast<float>((v - lo) / (hi - lo)) * (p1.y - p0.y);
  };
  const ImU32 grid = (frame & ~IM_COL32_A_MASK) | (60u << IM_COL32_A_SHIFT);
  for (double v : yt) {
    if (v < lo - 1e-9 || v > hi + 1e-9) continue;
    const float y = ymap(v);
    dl->AddLine({p0.x, y}, {p1.x, y}, grid);
    const std::string s = tick_label(v, ystep, c.y_percent);
    draw_text(ui, dl, font, fs, {p0.x - fs * 0.3f - text_width(font, fs, s), y - fs / 2}, dim, s);
  }
  // X ticks: every category that fits, or round numbers.
  const float xw = p1.x - p0.x;
  auto xmap = [&](double k) {
    return p0.x + (n > 1 ? static_cast<float>(k / (n - 1)) : 0.5f) * xw;
  };
  const float x_max = std::max(c.x_max, 1.0f);
  auto xvalue = [&](double x) {  // where x falls on the points' axis
    return p0.x + xw * static_cast<float>(std::clamp(x / x_max, 0.0, 1.0));
  };
  const float tick_y = p1.y + fs * 0.2f;
  if (has_points) {
    const std::vector<double> xt = nice_ticks(0, x_max, 5);
    const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1;
    float next_free = -INFINITY;
    for (double v : xt) {
      const std::string s = tick_label(v, xs, false);
      const float w = text_width(font, fs, s);
      const float x = std::clamp(xvalue(v) - w / 2, pos.x, pos.x + width - w);
      if (x < next_free) continue;
      dl->AddLine({xvalue(v), p1.y}, {xvalue(v), p1.y + fs * 0.2f}, frame);
      draw_text(ui, dl, font, fs, {x, tick_y}, dim, s);
      next_free = x + w + fs * 0.6f;
    }
  } else if (!c.x_labels.empty()) {
    float next_free = -INFINITY;
    for (size_t k = 0; k < c.x_labels.size() && k < std::max<size_t>(n, 1); ++k) {
      const float w = text_width(font, fs, c.x_labels[k]);
      float x = xmap(static_cast<double>(k)) - w / 2;
      x = std::clamp(x, pos.x, pos.x + width - w);
      if (x < next_free) continue;
      draw_text(ui, dl, font, fs, {x, tick_y}, dim, c.x_labels[k]);
      next_free = x + w + fs * 0.6f;
    }
  } else if (n > 0) {
    const double x_last = c.x_first + (n - 1) * c.x_step;
    const std::vector<double> xt =
        nice_ticks(c.x_first, std::max<double>(x_last, c.x_first + 1), 5);
    const double xs = xt.size() > 1 ? xt[1] - xt[0] : 1;
    float next_free = -INFINITY;
    for (double v : xt) {
      if (v > x_last + 1e-9) continue;
      const std::string s = tick_label(v, xs, false);
      const float w = text_width(font, fs, s);
      const double k = n > 1 ? (v - c.x_first) / c.x_step : 0;
      const float x = std::clamp(xmap(k) - w / 2, pos.x, pos.x + width - w);
      if (x < next_free) continue;
      dl->AddLine({xmap(k), p1.y}, {xmap(k), p1.y + fs * 0.2f}, frame);
      draw_text(ui, dl, font, fs, {x, tick_y}, dim, s);
      next_free = x + w + fs * 0.6f;
    }
  }
  float y_next = p1.y + line;
  if (!c.x_title.empty()) {
    const std::string t = abbreviate(font, fs, c.x_title, width);
    draw_text(ui, dl, font, fs, {p0.x + (xw - text_width(font, fs, t)) / 2, y_next}, dim, t);
    y_next += line;
  }
  if (c.band && has_points) {
    const float x0 = xvalue(c.band_from), x1 = xvalue(c.band_to);
    dl->AddRectFilled({x0, p0.y}, {std::max(x1, x0 + 2), p1.y}, IM_COL32(255, 160, 40, 70));
    dl->AddLine({x0, p0.y}, {x0, p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
    dl->AddLine({x1, p0.y}, {x1, p1.y}, IM_COL32(230, 120, 0, 200), 1.5f);
    if (!c.band_label.empty()) {
      const float tw = text_width(font, fs, c.band_label);
      const float tx = std::clamp((x0 + x1 - tw) / 2, p0.x + 2, p1.x - tw - 2);
      draw_text(ui, dl, font, fs, {tx, p0.y + 2}, IM_COL32(200, 90, 0, 255), c.band_label);
    }
  }
  // The lines, clipped to the plot; where each ends, for its label.
  std::vector<std::pair<float, const ChartSeries*>> ends;
  dl->PushClipRect(p0, {p1.x + 1, p1.y + 1}, true);
  for (const ChartSeries& s : c.series) {
    const size_t m = s.y.size();
    if (m == 0 && !s.points.empty()) {
      // Many more points than pixels: keep one per pixel column (the last), so the cost stays
      // bounded however long training runs.
      std::vector<ImVec2> pts;
      pts.reserve(s.points.size());
      float last_x = -1e9f;
      for (const ImVec2& v : s.points) {
        const ImVec2 p{xvalue(v.x), ymap(std::clamp<double>(v.y, lo, hi))};
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
      if (!s.end_label.empty()) ends.push_back({pts.back().y, &s});
      continue;
    }
    if (m == 0) continue;
    // Long curves are drawn from at most ~2 points per pixel.
    const size_t every = std::max<size_t>(1, m / std::max<size_t>(1, static_cast<size_t>(xw * 2)));
    ImVec2 prev{xmap(0), ymap(s.y[0])};
    for (size_t k = every; k < m; k += every) {
      const ImVec2 p{xmap(static_cast<double>(k)), ymap(s.y[k])};
      dl->AddLine(prev, p, s.colour, s.thickness);
      prev = p;
    }
    if (m == 1) dl->AddCircleFilled(prev, 3, s.colour);
    if (!s.end_label.empty()) ends.push_back({prev.y, &s});
  }
  dl->PopClipRect();
  // Labels at the lines' ends, pushed apart so they do not overlap.
  std::sort(ends.begin(), ends.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  float next_label = p0.y - fs / 2;
  for (const auto& [y, s] : ends) {
    const float ly = std::max(y - fs / 2, next_label);
    draw_text(ui, dl, font, fs, {p1.x + fs * 0.3f, ly}, s->colour, s->end_label);
    next_label = ly + fs;
  }
  // Legend.
  for (size_t k = 0; k < c.series.size(); ++k) {
    if (entry_pos[k].second < 0) continue;
    const float x = pos.x + entry_pos[k].first, y = y_next + entry_pos[k].second * line;
    dl->AddLine({x, y + fs * 0.55f}, {x + swatch, y + fs * 0.55f}, c.series[k].colour, 3.0f);
    draw_text(ui, dl, font, fs, {x + swatch + fs * 0.4f, y}, text, c.series[k].name);
  }
  ImGui::Dummy({width, height});
}

}  // namespace attn
