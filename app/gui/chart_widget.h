// A line chart with its axes drawn in: tick values on both axes, axis titles, and a legend below
// that wraps instead of running off the panel (the seq2seq loss curve and the bottleneck chart).
#pragma once

#include <string>
#include <vector>

#include "gui/ui.h"

namespace attn {

struct ChartSeries {
  std::string name;  // "" = not in the legend
  std::vector<float> y;
  ImU32 colour = IM_COL32(31, 119, 180, 255);
};

struct ChartSpec {
  std::vector<ChartSeries> series;
  std::vector<std::string> x_labels;  // one per point (categories); empty = numbers
  float x_first = 1, x_step = 1;      // numeric x of point k: x_first + k·x_step
  std::string x_title, y_title;
  float y_min = 0, y_max = -1;  // y_max < y_min: from the data
  bool y_percent = false;       // values 0..1 shown as 0%..100%
  ImVec2 size{0, 0};            // 0 = the rest of the window's width; height required
};

void draw_line_chart(Ui& ui, const ChartSpec& spec);

}  // namespace attn
