// The "Why √d_k" window: random q and k from N(0, 1) for d_k = 2…1024, the histograms of q·k and
// of q·k/√d_k on one axis (variance d_k against 1, computed), one softmax row of each (one-hot
// without the division), and per d_k the largest weight and the size of the softmax's Jacobian,
// which vanishes without the division. The numbers are core/explain/scaling_experiment.h's, the
// same as `attention-lab experiment sqrt-dk`; they are computed on a worker thread.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explain/scaling_experiment.h"
#include "gui/panel_experiments.h"
#include "gui/ui.h"

namespace attn {

namespace {

const ImU32 kDotColour = IM_COL32(230, 120, 20, 200), kScaledColour = IM_COL32(31, 119, 180, 210);

// Both histograms as bars over one axis [−range, range], with ticks at 0 and ±range/2, ±range.
void draw_histograms(const ScalingRow& r, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float fs = ImGui::GetFontSize();
  const float plot_h = size.y - fs * 1.6f;
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  int peak = 1;
  for (int c : r.dot.counts) peak = std::max(peak, c);
  for (int c : r.scaled.counts) peak = std::max(peak, c);
  const int bins = static_cast<int>(r.dot.counts.size());
  const float bw = size.x / bins;
  for (int b = 0; b < bins; ++b) {
    const float x0 = o.x + b * bw;
    const float hd = plot_h * r.dot.counts[static_cast<size_t>(b)] / peak;
    const float hs = plot_h * r.scaled.counts[static_cast<size_t>(b)] / peak;
    dl->AddRectFilled({x0 + 1, o.y + plot_h - hs}, {x0 + bw - 1, o.y + plot_h}, kScaledColour);
    dl->AddRectFilled({x0 + 1, o.y + plot_h - hd}, {x0 + bw - 1, o.y + plot_h}, kDotColour);
  }
  dl->AddLine({o.x, o.y + plot_h}, {o.x + size.x, o.y + plot_h}, axis);
  for (int t = -2; t <= 2; ++t) {
    const float x = o.x + size.x * (0.5f + t * 0.25f);
    dl->AddLine({x, o.y + plot_h}, {x, o.y + plot_h + 4}, axis);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", r.dot.range * t / 2);
    const float w = ImGui::CalcTextSize(buf).x;
    dl->AddText({std::clamp(x - w / 2, o.x, o.x + size.x - w), o.y + plot_h + 5}, text, buf);
  }
  ImGui::Dummy(size);
}

// A softmax row as bars of its weights, labelled with the largest.
void draw_weights_row(const char* label, const std::vector<double>& w, ImU32 colour, float width) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  ImGui::TextUnformatted(label);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float h = fs * 3;
  const float bw = width / std::max<size_t>(w.size(), 1);
  for (size_t j = 0; j < w.size(); ++j) {
    const float x0 = o.x + j * bw;
    dl->AddRect({x0 + 2, o.y}, {x0 + bw - 2, o.y + h}, ImGui::GetColorU32(ImGuiCol_Border));
    dl->AddRectFilled({x0 + 2, o.y + h * (1 - float(w[j]))}, {x0 + bw - 2, o.y + h}, colour);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.2f", w[j]);
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    if (ts.x < bw - 4)
      dl->AddText({x0 + (bw - ts.x) / 2, o.y + h + 2}, ImGui::GetColorU32(ImGuiCol_Text), buf);
  }
  ImGui::Dummy({width, h + fs * 1.3f});
}

}  // namespace

void draw_sqrt_dk_panel(Ui& ui) {
  if (!ui.sqrt_dk.open) return;
  SqrtDkPanel& p = ui.sqrt_dk.get();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  const ImGuiCond cond = ui.layout.reset ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.06f, vp->Pos.y + top + vp->Size.y * 0.04f},
                          cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.88f, vp->Size.y * 0.9f - top}, cond);
  if (!ImGui::Begin("Why divide by √d_k?###sqrt-dk", &ui.sqrt_dk.open,
                    ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  if (p.computed_seed != p.seed && !p.job.running()) {
    ScalingRequest r;
    r.seed = static_cast<uint32_t>(p.seed);
    p.error.clear();
    p.job.start([r](JobControl&) { return run_scaling_experiment(r); });
    p.computed_seed = p.seed;
  }
  if (std::optional<JobResult<std::vector<ScalingRow>>> done = p.job.poll()) {
    if (done->ok()) {
      p.rows = std::move(*done->value);
    } else if (!done->cancelled) {
      p.error = "The experiment failed: " + done->error;
      ui.state.set_message(p.error, true);
    }
  }
  ui.sqrt_dk.busy = p.job.running();  // keep drawing while it runs
  text_wrapped_at_spaces(
      "Draw q and k with every component from N(0, 1). Their dot product q·k = Σ q_a k_a adds "
      "d_k terms of variance 1, so its variance is d_k: the scores spread out as d_k grows. A "
      "softmax over widely spread scores puts almost all its weight on one key, and its "
      "gradient (the Jacobian diag(p) − p pᵀ) then nearly vanishes. Dividing by √d_k brings the "
      "variance back to 1.");
  if (!p.error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "⚠ %s", p.error.c_str());
    ImGui::PopTextWrapPos();
  }
  const std::vector<int> dims = scaling_dims();
  ImGui::TextUnformatted("d_k");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  const std::string dk_text = std::to_string(dims[static_cast<size_t>(p.dim_index)]);
  ImGui::SliderInt("##dk", &p.dim_index, 0, static_cast<int>(dims.size()) - 1, dk_text.c_str(),
                   ImGuiSliderFlags_AlwaysClamp);
  same_line_if_fits(ImGui::GetFontSize() * 12);
  ImGui::TextUnformatted("seed");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  ImGui::InputInt("##seed", &p.seed);
  p.seed = std::max(p.seed, 0);
  if (p.rows.size() != dims.size()) {
    ImGui::TextDisabled("computing…");
    ImGui::End();
    return;
  }
  const ScalingRow& r = p.rows[static_cast<size_t>(p.dim_index)];
  ImGui::BeginChild("sqrt-dk-body", {0, 0}, false);
  const float w = ImGui::GetContentRegionAvail().x;
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(kDotColour | 0xFF000000));
  ImGui::Text("q·k: variance %.2f (d_k = %d)", r.var_dot, r.d_k);
  ImGui::PopStyleColor();
  same_line_if_fits(ImGui::GetFontSize() * 16);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(kScaledColour | 0xFF000000));
  ImGui::Text("q·k/√d_k: variance %.3f (≈ 1)", r.var_scaled);
  ImGui::PopStyleColor();
  ImGui::TextDisabled("histograms of %d pairs on one axis", ScalingRequest{}.samples);
  draw_histograms(
      r, {w, std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().y * 0.28f)});
  ImGui::Spacing();
  const float half = (w - ImGui::GetStyle().ItemSpacing.x) / 2;
  ImGui::BeginGroup();
  draw_weights_row("softmax(q·k) over 8 keys", r.example_dot, kDotColour, half);
  ImGui::EndGroup();
  same_line_if_fits(half);
  ImGui::BeginGroup();
  draw_weights_row("softmax(q·k/√d_k)", r.example_scaled, kScaledColour, half);
  ImGui::EndGroup();
  ImGui::Spacing();
  const ImGuiTableFlags tf =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("sqrt-dk-table", 7, tf)) {
    for (const char* c :
         {"d_k", "var q·k", "var q·k/√d_k", "largest weight", "… scaled", "‖Jacobian‖", "… scaled"})
      ImGui::TableSetupColumn(c);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < p.rows.size(); ++i) {
      const ScalingRow& x = p.rows[i];
      ImGui::TableNextRow();
      if (static_cast<int>(i) == p.dim_index)
        ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, IM_COL32(250, 200, 140, 120));
      ImGui::TableNextColumn();
      ImGui::Text("%d", x.d_k);
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", x.var_dot);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", x.var_scaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", x.max_weight_dot);
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", x.max_weight_scaled);
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", x.jacobian_dot);
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", x.jacobian_scaled);
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("largest weight and ‖Jacobian‖ (Frobenius): averages over %d rows of 8 keys",
                      ScalingRequest{}.rows);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn
