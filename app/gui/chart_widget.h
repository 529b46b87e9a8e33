// The app's one line-chart widget: tick values on both axes, axis titles, a legend below that
// wraps instead of running off the panel, and optionally a title, lines over arbitrary x (training
// steps, sequence lengths) with labels at their ends, dashes, and a shaded band (the seq2seq loss
// curve, the bottleneck and Linformer charts, the training views, the score timings).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gui/widget_context.h"

namespace attn {

struct ChartSeries {
  // {name, y, colour} as the charts over point indices write it; the rest set by name.
  ChartSeries(std::string name_ = "", std::vector<float> y_ = {},
              ImU32 colour_ = IM_COL32(31, 119, 180, 255))
      : name(std::move(name_)), y(std::move(y_)), colour(colour_) {}
  std::string name;      // "" = not in the legend
  std::vector<float> y;  // point k at x_first + k·x_step
  ImU32 colour;
  // Or, when y is empty, (x, y) points in x order on an axis from 0 to ChartSpec::x_max.
  std::vector<ImVec2> points;
  float thickness = 2.0f;
  bool dashed = false;
  std::string end_label;  // written right of the plot, level with the line's end
};

struct ChartSpec {
  std::vector<ChartSeries> series;
  std::vector<std::string> x_labels;  // one per point (categories); empty = numbers
  float x_first = 1, x_step = 1;      // numeric x of point k: x_first + k·x_step
  std::string x_title, y_title;
  float y_min = 0, y_max = -1;  // y_max < y_min: from the data
  bool y_percent = false;       // values 0..1 shown as 0%..100%
  ImVec2 size{0, 0};            // 0 = the rest of the window's width; height required
  std::string title;            // above the plot, wrapped to its width
  float x_max = 1;              // the last x of the points' axis
  bool band = false;            // a shaded range of x (with points)
  float band_from = 0, band_to = 0;
  std::string band_label;
  // At least this much room right of the plot for end labels, and left of it for the values:
  // charts stacked with the same values keep their x axes aligned whichever labels they show.
  float label_room = 0, value_room = 0;
};

void draw_line_chart(const WidgetContext& ctx, const ChartSpec& spec);

}  // namespace attn
