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
  LmSession& s = p.session;
  const LmRun* r = s.run();
  const float fs = ImGui::GetFontSize();
  // On a slide the controls keep to one line and the chart shows the bars that fit the stage.
  const bool slide = ui.lesson_view.slide.on;
  float temp = static_cast<float>(s.temperature);
  ImGui::SetNextItemWidth(
      std::min(fs * (slide ? 7 : 12), ImGui::GetContentRegionAvail().x -
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
  // On a slide only there (the bars shown are those that fit).
  const float top_w = fs * (slide ? 5 : 8);
  const float top_line = fs * 2 + top_w + ImGui::CalcTextSize("Show top").x;
  if (!slide || fits_on_line(top_line)) {
    same_line_if_fits(top_line);
    ImGui::SetNextItemWidth(top_w);
    ImGui::SliderInt("Show top", &s.top_k, 3, 30);
  }
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

  auto top = s.next_tokens();
  if (top.empty()) return;
  // On a slide the bars are 1.2 lines each, as many as fit with the note under them; where fewer
  // than three would, the note gives way.
  bool with_note = true;
  if (slide) {
    const std::string longest_note = "These 30 tokens hold 100.0 % of the probability; the other " +
                                     std::to_string(r->model->config.vocab_size) +
                                     " share the rest.";
    const float row = ImGui::GetTextLineHeight() * 1.2f, room = ImGui::GetContentRegionAvail().y;
    const float note_h = wrapped_height(longest_note, ImGui::GetContentRegionAvail().x) +
                         ImGui::GetTextLineHeightWithSpacing();
    size_t fit = static_cast<size_t>(std::max(0.0f, (room - note_h) / row));
    if (fit < 3) {
      with_note = false;
      fit = static_cast<size_t>(std::max(2.0f, room / row - 0.5f));
    }
    if (top.size() > fit) top.resize(fit);
  }
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
      slide
          ? ImGui::GetTextLineHeight() * 1.2f
          : std::clamp((ImGui::GetContentRegionAvail().y - fs * 3) / static_cast<float>(top.size()),
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
  if (!with_note) return;
  char note[160];
  std::snprintf(note, sizeof note,
                "These %zu tokens hold %.1f %% of the probability; the other %d share the rest.",
                top.size(), 100 * shown,
                r->model->config.vocab_size - static_cast<int>(top.size()));
  text_disabled_wrapped(note);
}

}  // namespace attn
