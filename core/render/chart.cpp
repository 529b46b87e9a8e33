// Lays out a line chart as a scene (see chart.h).
#include "render/chart.h"

#include <algorithm>
#include <cmath>

#include "attention/format.h"

namespace attn {
namespace {

constexpr Rgb kInk{26, 26, 26}, kGrey{90, 90, 90}, kGrid{225, 225, 225}, kAxis{120, 120, 120};
// Okabe–Ito: colour-blind-safe line colours.
constexpr Rgb kLineColours[] = {{0, 0, 0},    {230, 159, 0}, {86, 180, 233},  {0, 158, 115},
                                {213, 94, 0}, {0, 114, 178}, {204, 121, 167}, {240, 228, 66}};

Font font(double size, bool bold = false) { return Font{size, bold, false, false}; }

}  // namespace

std::string check_line_chart(const LineChart& c) {
  if (c.x_labels.empty()) return "the chart has no categories";
  if (c.values.size() != c.series.size()) return "the chart needs one name per series";
  for (const auto& v : c.values)
    if (v.size() != c.x_labels.size()) return "every series needs one value per category";
  if (!(c.y_max > c.y_min)) return "the chart's y range is empty";
  if (c.y_steps < 1 || c.y_steps > 20) return "the chart needs 1 to 20 y steps";
  return "";
}

ScenePage compose_line_chart(const LineChart& c, const TextEngine& f) {
  ScenePage page;
  auto& items = page.items;
  const double margin = 28, title_size = 18, tick_size = 13, axis_size = 14, legend_size = 14;
  // Y ticks: y_steps steps over the range.
  const int steps = c.y_steps;
  std::vector<std::string> y_labels;
  double y_label_w = 0;
  for (int k = 0; k <= steps; ++k) {
    const double v = c.y_min + (c.y_max - c.y_min) * k / steps;
    y_labels.push_back(c.y_percent ? format_fixed(100 * v, 0) + "%" : format_fixed(v, 2, true));
    y_label_w = std::max(y_label_w, f.width(y_labels.back(), font(tick_size)));
  }
  double legend_w = 0;
  for (const auto& s : c.series) legend_w = std::max(legend_w, f.width(s, font(legend_size)));
  double x_label_w = 0;
  for (const auto& l : c.x_labels) x_label_w = std::max(x_label_w, f.width(l, font(tick_size)));

  // Up to 760 points wide: past that, every k-th category is labelled (the first among them), so
  // a long run's many steps keep labels that do not collide.
  const double label_room = x_label_w + 16, max_plot_w = 760;
  const double plot_w = std::clamp(label_room * c.x_labels.size(), 420.0, max_plot_w), plot_h = 300;
  const size_t label_every =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(label_room * c.x_labels.size() / plot_w)));
  const double left = margin + axis_size * 1.4 + y_label_w + 10;
  const double top = margin + title_size * 2.4;
  const double right = left + plot_w;
  const double bottom = top + plot_h;
  page.width = std::ceil(std::max(right + 24 + 30 + legend_w + margin,
                                  margin * 2 + f.width(c.title, font(title_size, true))));
  page.height = std::ceil(bottom + tick_size * 1.6 + axis_size * 1.8 + margin);

  items.push_back(text_item(c.title, margin, margin + title_size * 0.93, font(title_size, true),
                            TextAnchor::kStart, kInk, "title"));
  auto y_at = [&](double v) {
    return bottom - plot_h * (std::clamp(v, c.y_min, c.y_max) - c.y_min) / (c.y_max - c.y_min);
  };
  const size_t n = c.x_labels.size();
  auto x_at = [&](size_t i) {
    return n > 1 ? left + 12 + (plot_w - 24) * static_cast<double>(i) / (n - 1) : left + plot_w / 2;
  };
  for (int k = 0; k <= steps; ++k) {
    const double y = bottom - plot_h * k / steps;
    items.push_back(line_item(left, y, right, y, k == 0 ? kAxis : kGrid, 1, "grid"));
    items.push_back(text_item(y_labels[static_cast<size_t>(k)], left - 8, y + tick_size * 0.36,
                              font(tick_size), TextAnchor::kEnd, kGrey, "tick-label"));
  }
  items.push_back(line_item(left, top, left, bottom, kAxis, 1, "axis-line"));
  for (size_t i = 0; i < n; ++i) {
    if (i % label_every != 0) continue;
    items.push_back(line_item(x_at(i), bottom, x_at(i), bottom + 5, kAxis, 1, "tick"));
    items.push_back(text_item(c.x_labels[i], x_at(i), bottom + 6 + tick_size, font(tick_size),
                              TextAnchor::kMiddle, kGrey, "tick-label"));
  }
  items.push_back(text_item(c.x_title, (left + right) / 2,
                            bottom + 6 + tick_size * 1.6 + axis_size * 1.2, font(axis_size),
                            TextAnchor::kMiddle, kInk, "axis"));
  items.push_back(text_item(c.y_title, margin + axis_size * 0.9, (top + bottom) / 2,
                            font(axis_size), TextAnchor::kMiddle, kInk, "axis", 90));

  for (size_t k = 0; k < c.series.size(); ++k) {
    const Rgb col = kLineColours[k % 8];
    SceneItem line;
    line.kind = SceneItem::Kind::kPolyline;
    line.color = col;
    line.line_width = 2.5;
    line.dots = 3.5;
    line.cls = "series";
    for (size_t i = 0; i < n; ++i) {
      line.points.push_back(x_at(i));
      line.points.push_back(y_at(c.values[k][i]));
    }
    items.push_back(line);
    const double ly = top + 10 + 24 * static_cast<double>(k);
    items.push_back(line_item(right + 24, ly, right + 50, ly, col, 3, "legend-line"));
    items.push_back(text_item(c.series[k], right + 58, ly + legend_size * 0.36, font(legend_size),
                              TextAnchor::kStart, kInk, "legend"));
  }
  return page;
}

}  // namespace attn
