// The Variants tab's section for the variants beyond masks: Linformer (k and a new random E, F),
// the key–query convolution of Multi-Token Attention (kernel size, presets and each weight) and
// head mixing (group size and strength), with a button that opens their views.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "gui/ui.h"

namespace attn {
namespace {

// A kernel of c_q × c_k: "sum" adds the key and its neighbours (the multi-token example's
// kernel), "centre" is the identity (no change).
Matrix preset_kernel(int c_q, int c_k, bool sum) {
  Matrix k = Matrix::Zero(c_q, c_k);
  if (sum)
    k.row(0).setOnes();
  else
    k(0, c_k / 2) = 1.0f;
  return k;
}

}  // namespace

void draw_beyond_masks_controls(Ui& ui) {
  AppState& st = ui.state;
  const VariantSpec& v = st.scenario().options.variants;
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  const int n_k = static_cast<int>(st.scenario().keys().size());

  // ---- Linformer ----
  bool lin = v.linformer.enabled();
  if (ImGui::Checkbox("Linformer", &lin))
    ui.defer([&st, lin, n_k] {
      st.set_linformer(lin ? std::optional<int>(std::max(1, n_k / 4)) : std::nullopt);
    });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Linformer (Wang et al., 2020): E and F of shape (k, n) mix the n keys and values "
      "into k virtual keys, so each query compares itself with k rows: O(n·k) instead of O(n²). "
      "Masks that name key positions do not apply once keys are mixed.");
  if (lin) {
    int k = v.linformer.k();
    same_line_if_fits(fs * 5 + ImGui::CalcTextSize("k = 00").x);
    if (slider_int_beside("##linformer-k", "k = ", &k, 1, std::max(1, n_k), fs * 5))
      ui.defer([&st, k] { st.set_linformer(k); });
    same_line_if_fits(button_width("new E, F"));
    if (ImGui::Button("new E, F")) ui.defer([&st] { st.reseed_linformer(); });
  }

  // ---- key–query convolution ----
  const HeadStack& kernels = v.multi_token.kq_conv;
  bool conv = !kernels.empty();
  if (ImGui::Checkbox("key–query convolution", &conv))
    ui.defer([&st, conv] { st.set_kq_conv(conv ? preset_kernel(1, 5, true) : Matrix()); });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Multi-Token Attention (Golovneva et al., 2025): before the softmax, each score becomes Σ "
      "θ[a, b]·S[i − a, "
      "j − b + c_k/2 (rounded down)], a weighted sum over the query and the c_q − 1 before it and "
      "over keys "
      "around j, so two words close together can win where one query–key pair cannot.");
  if (conv) {
    const Matrix th = kernels[0];
    int c_q = static_cast<int>(th.rows()), c_k = static_cast<int>(th.cols());
    if (slider_int_beside("##cq", "c_q = ", &c_q, 1, 4, fs * 4)) {
      Matrix n = Matrix::Zero(c_q, c_k);
      const int r = std::min<int>(c_q, static_cast<int>(th.rows()));
      n.topRows(r) = th.topRows(r);
      ui.defer([&st, n] { st.set_kq_conv(n); });
    }
    same_line_if_fits(fs * 4 + ImGui::CalcTextSize("c_k = 0").x);
    if (slider_int_beside("##ck", "c_k = ", &c_k, 1, 7, fs * 4))
      ui.defer([&st, c_q, c_k] { st.set_kq_conv(preset_kernel(c_q, c_k, true)); });
    if (ImGui::SmallButton("sum of neighbours"))
      ui.defer([&st, c_q, c_k] { st.set_kq_conv(preset_kernel(c_q, c_k, true)); });
    same_line_if_fits(button_width("identity"));
    if (ImGui::SmallButton("identity"))
      ui.defer([&st, c_q, c_k] { st.set_kq_conv(preset_kernel(c_q, c_k, false)); });
    // Each weight of θ: rows a = 0 (this query) .. c_q − 1, columns the key offsets.
    const float cell =
        std::max(fs * 3.2f, ImGui::CalcTextSize("-0.00").x + ImGui::GetStyle().FramePadding.x * 2);
    for (int a = 0; a < th.rows(); ++a)
      for (int b = 0; b < th.cols(); ++b) {
        if (b > 0) ImGui::SameLine();
        float x = th(a, b);
        ImGui::PushID(a * 16 + b);
        ImGui::SetNextItemWidth(cell);
        if (ImGui::DragFloat("##theta", &x, 0.01f, -4.0f, 4.0f, "%.2f")) {
          Matrix n = th;
          n(a, b) = x;
          ui.defer([&st, n] { st.set_kq_conv(n); });
        }
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("θ[%d, %d]: query i − %d, key j %+d", a, b, a,
                            static_cast<int>(th.cols()) / 2 - b);
        ImGui::PopID();
      }
  }

  // ---- head mixing ----
  const int H = t.num_heads;
  bool mix = !v.multi_token.head_mix.empty();
  if (H < 2) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("head mixing needs 2 or more heads (Sequences and heads above)");
    ImGui::PopTextWrapPos();
  } else {
    if (ImGui::Checkbox("head mixing", &mix))
      ui.defer([&st, mix, H] { st.set_head_mix(mix ? H : 0, 0.5f); });
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
    help_marker(
        "Multi-Token Attention (Golovneva et al., 2025): after the softmax, the weights of head "
        "g·c_h + a become "
        "Σ_b M[g, a, b]·weights[g·c_h + b]: heads in groups of c_h share what they found. Here "
        "M = (1 − s)·I + s/c_h.");
    if (mix) {
      const int c = v.multi_token.mix_group_size();
      const Matrix& M = v.multi_token.head_mix[0];
      const float strength = c > 1 ? (M(0, 1) * static_cast<float>(c)) : 0.0f;
      ImGui::TextUnformatted("groups of c_h =");
      for (int d = 2; d <= H; ++d) {
        if (H % d) continue;
        same_line_if_fits(radio_width("00"));
        if (ImGui::RadioButton(std::to_string(d).c_str(), c == d))
          ui.defer([&st, d, strength] { st.set_head_mix(d, strength); });
      }
      float s = strength;
      if (slider_float_beside("##mix", "strength s = ", &s, 0.0f, 1.0f, "%.2f", fs * 7))
        ui.defer([&st, c, s] { st.set_head_mix(c, s); });
    }
  }
  if (ImGui::Button("Show their views")) ui.variant_views.open = true;
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "A window with Linformer's cost and error charts, the scores before and after the "
      "key–query convolution with its kernel, and each head's weights before and after mixing "
      "(also View → Linformer and Multi-Token Attention views).");
}

}  // namespace attn
