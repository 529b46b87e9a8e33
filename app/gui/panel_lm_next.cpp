// The next-token chart (as Transformer Explainer's): the probabilities of the most likely tokens
// after the sentence's last token (or the token the views point at), as bars, with a temperature
// slider that reshapes them.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/panel_lm.h"

namespace attn {

void draw_lm_next_tokens(Ui& ui, LmPanel& p) {
  (void)ui;
  LmSession& s = p.session;
  const LmRun* r = s.run();
  const float fs = ImGui::GetFontSize();
  float temp = static_cast<float>(s.temperature);
  ImGui::SetNextItemWidth(std::min(fs * 12, ImGui::GetContentRegionAvail().x -
                                                ImGui::CalcTextSize("Temperature").x -
                                                ImGui::GetStyle().ItemInnerSpacing.x));
  if (ImGui::SliderFloat("Temperature", &temp, 0.05f, 5.0f, "%.2f", ImGuiSliderFlags_Logarithmic))
    s.temperature = std::clamp(temp, 0.05f, 5.0f);
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "The model's last layer gives every vocabulary token a score (a logit). The probabilities "
      "are softmax(logits / T). T = 1 is the model's own distribution; T < 1 sharpens it towards "
      "the favourite, T > 1 flattens it so unlikely tokens get a chance when sampling.");
  // On the same line when it fits, else under it (a narrow stage, large type).
  same_line_if_fits(fs * 2 + fs * 8 + ImGui::CalcTextSize("Show top").x);
  ImGui::SetNextItemWidth(fs * 8);
  ImGui::SliderInt("Show top", &s.top_k, 3, 30);
  // After the token the views point at (a lesson step's, or the query pinned in the head view).
  const int at = s.shown_position();
  const int T = static_cast<int>(r->tokens.size());
  const std::string& token = r->tokens[static_cast<size_t>(at)];
  if (at + 1 < T)
    text_wrapped_at_spaces("After “" + token + "” at position " + std::to_string(at) +
                           ", the next token is probably:");
  else
    text_wrapped_at_spaces("After “" + token + "”, the next token is probably:");
  if (at + 1 < T) {
    same_line_if_fits(button_width("After the last token"));
    if (ImGui::SmallButton("After the last token")) s.position = -1;
  }
  ImGui::Spacing();

  const auto top = s.next_tokens();
  if (top.empty()) return;
  float label_w = fs * 4;
  std::vector<std::string> labels;
  for (auto [id, prob] : top) {
    const std::string t = r->model->tokenizer.display(id);
    labels.push_back("“" + t + "”");
    label_w = std::max(label_w, ImGui::CalcTextSize(labels.back().c_str()).x);
  }
  label_w = std::min(label_w + fs * 0.5f, ImGui::GetContentRegionAvail().x * 0.35f);
  const float pct_w = ImGui::CalcTextSize("100.0 %").x + fs;
  const float bar_max = std::max(fs * 4, ImGui::GetContentRegionAvail().x - label_w - pct_w);
  const float row_h =
      std::clamp((ImGui::GetContentRegionAvail().y - fs * 3) / static_cast<float>(top.size()),
                 ImGui::GetTextLineHeight() * 1.2f, ImGui::GetTextLineHeight() * 2.2f);
  const double best = top.front().second;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  double shown = 0;
  for (size_t i = 0; i < top.size(); ++i) {
    const float y = o.y + static_cast<float>(i) * row_h;
    const float ty = y + (row_h - ImGui::GetTextLineHeight()) / 2;
    const float tw = ImGui::CalcTextSize(labels[i].c_str()).x;
    const ImVec4 clip{o.x, y, o.x + label_w, y + row_h};
    dl->AddText(nullptr, 0, {o.x + label_w - tw - fs * 0.4f, ty}, text, labels[i].c_str(), nullptr,
                0, &clip);
    // Bars scaled to the most likely token so small differences stay visible; the number
    // beside each is the probability itself.
    const float len = static_cast<float>(top[i].second / best) * bar_max;
    dl->AddRectFilled({o.x + label_w, y + row_h * 0.15f},
                      {o.x + label_w + std::max(len, 1.0f), y + row_h * 0.85f},
                      i == 0 ? IM_COL32(214, 39, 40, 255) : IM_COL32(31, 119, 180, 255), 2);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f %%", 100 * top[i].second);
    dl->AddText({o.x + label_w + len + fs * 0.4f, ty}, text, pct);
    shown += top[i].second;
  }
  ImGui::Dummy({label_w + bar_max + pct_w, row_h * static_cast<float>(top.size())});
  char note[160];
  std::snprintf(note, sizeof note,
                "These %zu tokens hold %.1f %% of the probability; the other %d share the rest.",
                top.size(), 100 * shown,
                r->model->config.vocab_size - static_cast<int>(top.size()));
  text_disabled_wrapped(note);
}

}  // namespace attn
