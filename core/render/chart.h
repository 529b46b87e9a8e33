// Line charts for exports: one line per series over categories on the x axis, with values on
// both axes, axis titles, grid lines and a legend (e.g. seq2seq accuracy by input length).
#pragma once

#include <string>
#include <vector>

#include "render/scene.h"

namespace attn {

struct LineChart {
  std::string title;
  std::vector<std::string> x_labels;  // one per category
  std::string x_title, y_title;
  double y_min = 0, y_max = 1;
  int y_steps = 5;         // grid lines above the x axis, evenly over [y_min, y_max]
  bool y_percent = false;  // tick labels as "40%"
  std::vector<std::string> series;
  std::vector<std::vector<double>> values;  // [series][category]
};

// "" when the chart's parts agree, else what is wrong.
std::string check_line_chart(const LineChart& chart);

ScenePage compose_line_chart(const LineChart& chart, const TextEngine& text);

}  // namespace attn
