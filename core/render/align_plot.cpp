// Alignment plots as labelled matrices, and the accuracy chart as a line chart (see align_plot.h).
#include "render/align_plot.h"

#include <algorithm>
#include <cmath>

#include "attention/format.h"
#include "render/chart.h"
#include "render/labelled_matrix.h"

namespace attn {

namespace {

std::string display(const std::string& s) { return s == " " ? "␣" : s; }

}  // namespace

LabelledMatrix alignment_matrix(const AlignmentPlot& p) {
  LabelledMatrix m;
  m.title = p.title;
  m.subtitle = p.subtitle;
  for (const auto& r : p.rows) m.row_labels.push_back(display(r));
  for (const auto& c : p.cols) m.col_labels.push_back(display(c));
  m.row_axis = "output ↓";
  m.col_axis = "input →";
  m.values = p.weights;
  m.scale = {p.colormap, 0.0, 1.0};
  const size_t rows = p.rows.size(), cols = p.cols.size();
  m.numbers.resize(rows * cols);
  // Weights that round to 0.00 stay blank, so the few that matter stand out.
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) {
      const double w = p.weights(static_cast<int>(i), static_cast<int>(j));
      m.numbers[i * cols + j] = w < 0.005 ? "" : format_fixed(w, 2);
    }
  if (p.visible.size() > 0) {
    m.hidden.resize(rows * cols);
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j)
        m.hidden[i * cols + j] = p.visible(static_cast<int>(i), static_cast<int>(j)) == 0.0f;
    m.hidden_legend = "outside the local window: not attended to";
  }
  return m;
}

bool render_alignment_plots(const std::vector<AlignmentPlot>& plots, ImageFormat format,
                            std::string& bytes, std::string& error) {
  if (plots.empty()) {
    error = "no alignment to draw";
    return false;
  }
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  ScenePage page;
  std::vector<MatrixScene> scenes;
  for (const AlignmentPlot& p : plots) {
    const LabelledMatrix m = alignment_matrix(p);
    error = check_labelled_matrix(m);
    if (!error.empty()) return false;
    MatrixStyle style;
    style.compact = plots.size() > 1;
    style.max_cell = 36;
    scenes.push_back(compose_matrix(m, style, *text));
    page.width = std::max(page.width, static_cast<double>(scenes.back().layout.width));
  }
  for (MatrixScene& s : scenes) {
    shift_items(s.page.items, 0, page.height);
    page.height += s.layout.height;
    page.items.insert(page.items.end(), s.page.items.begin(), s.page.items.end());
  }
  RenderOptions ro;
  ro.title = plots[0].title;
  return render_pages({page}, format, bytes, error, ro);
}

bool render_accuracy_chart(const AccuracyChart& c, ImageFormat format, std::string& bytes,
                           std::string& error) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  LineChart chart;
  chart.title = c.title;
  chart.x_labels = c.buckets;
  chart.x_title = "input length (characters)";
  chart.y_title = "exact match";
  chart.y_min = 0;
  chart.y_max = 1;
  chart.y_percent = true;
  chart.series = c.series;
  chart.values = c.accuracy;
  error = check_line_chart(chart);
  if (!error.empty()) return false;
  RenderOptions ro;
  ro.title = c.title;
  return render_pages({compose_line_chart(chart, *text)}, format, bytes, error, ro);
}

}  // namespace attn
