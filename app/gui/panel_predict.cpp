// Predict, then reveal, on screen: the toolbar above the heatmap that asks a question, and the
// panel (in the narration's place) with the question, the guess, the reveal and the verdict. The
// logic — what is hidden, how a guess is judged — lives in predict.cpp.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/ui.h"

namespace attn {
namespace {

ImVec4 grade_colour(Verdict::Grade g, bool light) {
  switch (g) {
    case Verdict::Grade::kExact:
      return light ? ImVec4(0.05f, 0.50f, 0.20f, 1) : ImVec4(0.35f, 0.85f, 0.45f, 1);
    case Verdict::Grade::kClose:
      return light ? ImVec4(0.70f, 0.42f, 0.00f, 1) : ImVec4(0.98f, 0.70f, 0.25f, 1);
    case Verdict::Grade::kOff:
      break;
  }
  return light ? ImVec4(0.75f, 0.12f, 0.10f, 1) : ImVec4(1.0f, 0.45f, 0.40f, 1);
}

const char* scope_name(PredictScope s) {
  return s == PredictScope::kCell ? "this cell" : s == PredictScope::kRow ? "the row" : "the stage";
}

}  // namespace

void draw_predict_toolbar(Ui& ui) {
  AppState& st = ui.state;
  if (!st.has_trace() || ui.predict.active()) return;
  const StageId stage = st.current_stage().id;
  const StageId target = stage == StageId::kInputs ? StageId::kScores : stage;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  auto flow = [&](float w) {
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right) ImGui::SameLine();
  };
  ImGui::TextDisabled("Predict first:");
  flow(ImGui::CalcTextSize("a number").x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::SmallButton("a number")) {
    ui.predict_form.kind = PredictKind::kValue;
    start_prediction(ui);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Hide %s and ask for a number before showing it (P)",
                      scope_name(ui.predict_form.scope));
  if (stage_supports(target, PredictKind::kPick)) {
    flow(ImGui::CalcTextSize("the top key").x + ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::SmallButton("the top key")) {
      ui.predict_form.kind = PredictKind::kPick;
      start_prediction(ui);
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide the row and ask which key gets the most weight");
  }
  const char* scopes[] = {"hide the cell", "hide the row", "hide the stage"};
  int scope = static_cast<int>(ui.predict_form.scope);
  const float combo_w = ImGui::CalcTextSize("hide the stage").x + ImGui::GetFrameHeight() * 1.6f;
  flow(combo_w);
  ImGui::SetNextItemWidth(combo_w);
  if (ImGui::Combo("##scope", &scope, scopes, 3))
    ui.predict_form.scope = static_cast<PredictScope>(scope);
}

void draw_predict_contents(Ui& ui) {
  AppState& st = ui.state;
  Prediction& p = ui.predict;
  const bool light = ui.settings.light_theme;
  const PredictQuestion& q = p.question();
  ImGui::PushFont(ui.fonts.title);
  ImGui::TextWrapped("%s", p.revealed() ? "Revealed" : "Predict");
  ImGui::PopFont();
  ImGui::PushFont(ui.fonts.bold);
  text_wrapped_at_spaces(p.prompt(st.trace()));
  ImGui::PopFont();
  const float bw = ImGui::GetFontSize() * 6;
  if (!p.revealed()) {
    if (q.kind == PredictKind::kValue) {
      ImGui::SetNextItemWidth(
          std::min(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 12));
      if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
      const bool enter = ImGui::InputTextWithHint("##guess", "your answer", &ui.predict_form.buffer,
                                                  ImGuiInputTextFlags_EnterReturnsTrue);
      const bool go = ImGui::Button("Reveal", {bw, 0}) || enter;
      if (go) {
        ui.predict_form.error.clear();
        if (!ui.predict_form.buffer.empty() &&
            !p.guess_text(ui.predict_form.buffer, ui.predict_form.error)) {
          ui.predict_form.error = "Not a number: " + ui.predict_form.error;
        } else {
          reveal_prediction(ui);
        }
      }
    } else {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
      ImGui::TextWrapped("Click a key: its label above the heatmap, or a cell of the hidden row.");
      ImGui::PopStyleColor();
      if (p.has_guess()) {
        const int j = p.guess_col();
        ImGui::Text("Your pick: \"%s\"",
                    j >= 0 && j < static_cast<int>(st.trace().key_tokens.size())
                        ? st.trace().key_tokens[j].c_str()
                        : "?");
      }
      if (ImGui::Button("Reveal", {bw, 0})) reveal_prediction(ui);
    }
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + bw <=
        ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
      ImGui::SameLine();
    if (ImGui::Button("Cancel", {bw, 0})) p.cancel();
    if (!ui.predict_form.error.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, grade_colour(Verdict::Grade::kOff, light));
      ImGui::TextWrapped("%s", ui.predict_form.error.c_str());
      ImGui::PopStyleColor();
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("Hidden until the reveal: %s. Esc gives up.",
                       q.scope == PredictScope::kCell  ? "this cell"
                       : q.scope == PredictScope::kRow ? "this row"
                                                       : "every number of this stage");
    ImGui::PopStyleColor();
    return;
  }
  const Verdict& v = p.verdict();
  ImGui::PushFont(ui.fonts.title);
  ImGui::PushStyleColor(ImGuiCol_Text, grade_colour(v.grade, light));
  text_wrapped_at_spaces(v.headline);
  ImGui::PopStyleColor();
  ImGui::PopFont();
  text_wrapped_at_spaces(v.detail);
  if (ImGui::Button("Ask again", {bw, 0})) {
    // The next cell along the row (or the next row), so the class gets a new question.
    const TraceStep* step = st.trace().find(q.stage);
    const Matrix& m = st.trace().head(*step, q.head);
    const int cols = static_cast<int>(m.cols()), rows = static_cast<int>(m.rows());
    int row = q.row, col = q.kind == PredictKind::kPick ? 0 : q.col + 1;
    if (q.kind == PredictKind::kPick || col >= cols) {
      col = q.kind == PredictKind::kPick ? -1 : 0;
      row = (row + 1) % rows;
    }
    st.clear_selection();
    start_prediction(ui, row, col);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Another question on this stage");
  if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + bw <=
      ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
    ImGui::SameLine();
  if (ImGui::Button("Done", {bw, 0})) p.cancel();
}

}  // namespace attn
