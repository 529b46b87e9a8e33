// The score-function window: Bahdanau's additive score against the scaled dot product, the
// efficiency claim of Vaswani et al., 2017 (§3.2.1) measured on this machine. "Measure"
// times the scores stage of both for growing n and d on a worker thread (the window keeps
// drawing and shows how far it is); the table and the chart of milliseconds against n follow.
#include <imgui.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "backends/score_compare.h"
#include "gui/chart_widget.h"
#include "gui/panel_experiments.h"
#include "gui/ui.h"

namespace attn {

namespace {

const ImU32 kDot = IM_COL32(31, 119, 180, 255), kAdd = IM_COL32(214, 39, 40, 255),
            kEqual = IM_COL32(255, 127, 14, 255);

void draw_table(const std::vector<ScoreTiming>& rows) {
  const ImGuiTableFlags tf =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("score-times", 7, tf)) return;
  for (const char* c : {"n", "d", "dot (ms)", "additive, d_a = d (ms)", "× dot", "same FLOPs: d_a",
                        "additive (ms)"})
    ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();
  for (const ScoreTiming& t : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", t.c.n);
    ImGui::TableNextColumn();
    ImGui::Text("%d", t.c.d);
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", t.dot_seconds * 1e3);
    ImGui::TableNextColumn();
    ImGui::Text("%.3f", t.additive_seconds * 1e3);
    ImGui::TableNextColumn();
    ImGui::Text("%.1f×", t.additive_seconds / std::max(t.dot_seconds, 1e-12));
    ImGui::TableNextColumn();
    ImGui::Text("%d", t.d_a_equal);
    ImGui::TableNextColumn();
    ImGui::Text("%.3f (%.1f×)", t.equal_seconds * 1e3,
                t.equal_seconds / std::max(t.dot_seconds, 1e-12));
  }
  ImGui::EndTable();
}

// Milliseconds against n at d = 64: the rows of the grid that vary n.
void draw_chart(Ui& ui, const std::vector<ScoreTiming>& rows, float width) {
  ChartSpec chart;
  chart.title = "scores stage, ms against n (d = 64)";
  auto line = [](ImU32 colour, float thickness, bool dashed, const char* label) {
    ChartSeries s("", {}, colour);
    s.thickness = thickness;
    s.dashed = dashed;
    s.end_label = label;
    return s;
  };
  ChartSeries dot = line(kDot, 2.5f, false, "dot"), add = line(kAdd, 2.5f, false, "additive"),
              eq = line(kEqual, 2.0f, true, "additive, same FLOPs");
  float y_max = 0, x_max = 1;
  for (const ScoreTiming& t : rows) {
    if (t.c.d != 64) continue;
    dot.points.push_back({float(t.c.n), float(t.dot_seconds * 1e3)});
    add.points.push_back({float(t.c.n), float(t.additive_seconds * 1e3)});
    eq.points.push_back({float(t.c.n), float(t.equal_seconds * 1e3)});
    y_max = std::max({y_max, float(t.additive_seconds * 1e3), float(t.equal_seconds * 1e3)});
    x_max = std::max(x_max, float(t.c.n));
  }
  if (dot.points.size() < 2) return;
  chart.x_max = x_max;
  chart.y_min = 0;
  chart.y_max = y_max * 1.1f;
  chart.series = {dot, add, eq};
  const float fs = ImGui::GetFontSize();
  chart.size = {width, std::clamp(width * 0.3f, fs * 10, fs * 16)};
  draw_line_chart(widgets(ui), chart);
}

}  // namespace

void draw_scores_panel(Ui& ui) {
  if (!ui.scores.open) return;
  ScoreComparePanel& p = ui.scores.get();
  if (const std::string failed = p.poll(); !failed.empty()) ui.state.set_message(failed, true);
  ui.scores.busy = p.running();  // keep drawing while it measures
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  const ImGuiCond cond = ui.layout.reset ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.1f, vp->Pos.y + top + vp->Size.y * 0.05f},
                          cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.8f, vp->Size.y * 0.86f - top}, cond);
  if (!ImGui::Begin("Score functions: additive vs scaled dot product###scores", &ui.scores.open,
                    ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  text_wrapped_at_spaces(
      "Bahdanau's additive score vᵀ tanh(W_q q + W_k k) scores each query–key pair with a small "
      "network; the Transformer's scaled dot product q·k / √d_k is one matrix product Q·Kᵀ. The "
      "seed says the dot product is faster and more space-efficient in practice. Measure it on "
      "this machine: the scores stage of one head, for growing n and d, with d_a = d and with "
      "d_a chosen so both count the same floating-point operations. (Load the built-in example "
      "\"additive\" to step through the additive score's arithmetic.)");
  ImGui::Spacing();
  std::vector<ScoreTiming> rows;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    rows = p.rows;
  }
  const int total = static_cast<int>(default_score_cases().size());
  if (p.running()) {
    ImGui::BeginDisabled();
    ImGui::Button("Measuring…");
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::ProgressBar(float(rows.size()) / float(total), {ImGui::GetFontSize() * 12, 0});
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) p.job.cancel();
  } else if (ImGui::Button(rows.empty() ? "Measure on this machine" : "Measure again")) {
    p.start();
  }
  if (!p.error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "⚠ %s", p.error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (!rows.empty()) {
    ImGui::Spacing();
    draw_table(rows);
    ImGui::Spacing();
    draw_chart(ui, rows, ImGui::GetContentRegionAvail().x);
    if (!p.running() && static_cast<int>(rows.size()) == total) {
      int slower = 0, slower_equal = 0;
      for (const ScoreTiming& t : rows) {
        slower += t.additive_seconds > t.dot_seconds ? 1 : 0;
        slower_equal += t.equal_seconds > t.dot_seconds ? 1 : 0;
      }
      text_wrapped_at_spaces(
          "Measured here: the additive score took longer in " + std::to_string(slower) + " of " +
          std::to_string(total) + " cases with d_a = d, and in " + std::to_string(slower_equal) +
          " of " + std::to_string(total) +
          " with the same FLOP count. It needs a tanh for every pair and unit and cannot be one "
          "matrix product; Q·Kᵀ runs as the optimised matrix product the hardware is built for. "
          "(Timings of a busy machine vary: measure again to compare.)");
    }
  }
  ImGui::End();
}

}  // namespace attn
