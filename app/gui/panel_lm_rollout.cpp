// The language-model window's "Rollout" tab: attention rollout across layers (lm/rollout.h) for
// one token — after each layer, how much of it comes from each input token, counting the
// residual (A' = ½·A + ½·I) and multiplying the layers. One layer mixes pairs of tokens; the
// next mixes those mixtures, pairs of pairs: the receptive field grows with depth.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "gui/panel_lm.h"

namespace attn {

void draw_lm_rollout(Ui& ui, LmPanel& p) {
  const LmRun* run = p.session.run();
  if (!run || !run->model || run->acts.T == 0) {
    ImGui::TextDisabled("Open a model and type a sentence.");
    return;
  }
  const lm::Config& c = run->model->config;
  const int T = run->acts.T;
  if (p.rollout_token < 0 || p.rollout_token >= T) p.rollout_token = T - 1;
  const std::vector<std::vector<double>>* rows = p.session.rollout(p.rollout_token);
  const char* how =
      "Attention rollout (Abnar & Zuidema 2020): per layer the heads' weights are averaged and "
      "the residual connection added as A' = ½·A + ½·I (half of each position stays itself); "
      "multiplying the layers, R = A'_l ··· A'_0, says how much of a token after l + 1 layers "
      "comes from each input token. One layer mixes pairs of tokens; the next mixes those "
      "mixtures — pairs of pairs — so the tokens that matter spread with depth.";
  if (ui.presentation) {  // the rows keep the room; the explanation is a hover away
    ImGui::TextUnformatted("Attention rollout: where a token's content comes from");
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
    help_marker(how);
  } else {
    text_wrapped_at_spaces(how);
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Token");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  const std::string label = std::to_string(p.rollout_token) + " \"" +
                            run->tokens[static_cast<size_t>(p.rollout_token)] + "\"";
  if (ImGui::BeginCombo("##rollout-token", label.c_str())) {
    for (int t = 0; t < T; ++t) {
      const std::string l = std::to_string(t) + " \"" + run->tokens[static_cast<size_t>(t)] + "\"";
      if (ImGui::Selectable(l.c_str(), t == p.rollout_token)) p.rollout_token = t;
    }
    ImGui::EndCombo();
  }
  ImGui::Spacing();
  if (!rows) {
    ImGui::TextDisabled("Computing the rollout…");
    return;
  }
  const float fs = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float cell = std::max(fs * 3.2f, avail / std::max(T, 1));
  // Presentation shows a window of the tokens, ending at the chosen one (what it can draw from),
  // rather than a row that scrolls sideways; elsewhere the row scrolls.
  int first = 0, shown = T;
  if (ui.presentation && cell * static_cast<float>(T) > avail) {
    shown = std::max(1, static_cast<int>(avail / cell));
    first = std::clamp(p.rollout_token + 1 - shown, 0, std::max(0, T - shown));
    ImGui::TextDisabled("tokens %d to %d of %d", first, first + shown - 1, T);
  }
  ImGui::BeginChild("rollout-rows", {0, 0}, false,
                    ui.presentation ? 0 : ImGuiWindowFlags_HorizontalScrollbar);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::vector<double>& row = (*rows)[static_cast<size_t>(l)];
    int field = 0;
    for (double w : row) field += w >= 0.01 ? 1 : 0;
    ImGui::Text("after layer %d: %d of %d tokens carry ≥ 1%%", l, field, T);
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const float h = fs * 2.6f;
    double peak = 1e-12;
    for (double w : row) peak = std::max(peak, w);
    for (int j = first; j < first + shown; ++j) {
      const float x0 = o.x + static_cast<float>(j - first) * cell;
      const float a = static_cast<float>(row[static_cast<size_t>(j)] / peak);
      dl->AddRectFilled({x0 + 1, o.y}, {x0 + cell - 1, o.y + h},
                        ImGui::GetColorU32(ImVec4(0.85f, 0.35f, 0.05f, 0.08f + 0.85f * a)));
      if (j == p.rollout_token)
        dl->AddRect({x0, o.y}, {x0 + cell, o.y + h}, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 2);
      std::string tok = run->tokens[static_cast<size_t>(j)];
      while (!tok.empty() && ImGui::CalcTextSize(tok.c_str()).x > cell - 4) tok.pop_back();
      dl->AddText({x0 + 3, o.y + 2}, j > p.rollout_token ? faint : text, tok.c_str());
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.0f%%", 100 * row[static_cast<size_t>(j)]);
      if (ImGui::CalcTextSize(buf).x < cell - 4 && j <= p.rollout_token)
        dl->AddText({x0 + 3, o.y + fs * 1.25f}, text, buf);
    }
    ImGui::Dummy({static_cast<float>(shown) * cell, h + 6});
  }
  ImGui::EndChild();
}

}  // namespace attn
