// A small line chart drawn with ImGui's draw list: lines over training steps, value ticks on the
// left, step ticks below, a shaded band (the phase change) with its label, and a legend; used by
// the training views.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace attn {

struct ChartLine {
  std::vector<ImVec2> points;  // (step, value), in step order
  ImU32 color = IM_COL32(31, 119, 180, 255);
  float thickness = 2.0f;
  bool dashed = false;
  std::string label;  // written at the line's end when set
};

struct LineChart {
  std::string title;
  float x_max = 1;  // the last step on the axis
  float y_min = 0, y_max = 1;
  bool percent = false;  // value ticks as 0 %, 50 %, 100 %
  std::vector<ChartLine> lines;
  bool band = false;  // a shaded range of steps
  float band_from = 0, band_to = 0;
  std::string band_label;
  // At least this much room right of the plot for the lines' labels: charts stacked with the
  // same value keep their step axes aligned whichever labels each one shows.
  float label_room = 0;
};

// Draws the chart in a box of `size` at the cursor and advances the cursor past it.
void draw_line_chart(const LineChart& chart, ImVec2 size);

}  // namespace attn
