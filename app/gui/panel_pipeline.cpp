// The pipeline strip across the top: every stage of attention with the current one highlighted,
// and the controls that move through them (first, previous, play at a pace, next, last).
#include <imgui.h>

#include "gui/ui.h"

namespace attn {

void draw_pipeline_panel(Ui& ui) {
  AppState& st = ui.state;
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoTitleBar;
  if (!ImGui::Begin("Pipeline###pipeline", nullptr, flags)) {
    ImGui::End();
    return;
  }
  const float fs = ImGui::GetFontSize();
  const std::vector<StageInfo> stages = st.stages();
  const int current = st.stage_index();
  const bool light = ui.settings.light_theme;
  const ImVec4 accent = light ? ImVec4(0.16f, 0.38f, 0.78f, 1) : ImVec4(0.26f, 0.52f, 0.96f, 1);
  const ImVec4 done = light ? ImVec4(0.80f, 0.86f, 0.95f, 1) : ImVec4(0.20f, 0.27f, 0.38f, 1);

  // The strip: large chips joined by arrows, so the class sees where we are in the computation.
  ImGui::PushFont(ui.font_title);
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, {fs * 0.7f, fs * 0.3f});
  ImGui::PushStyleVar(ImGuiStyleVar_FrameRounding, fs * 0.6f);
  for (int i = 0; i < static_cast<int>(stages.size()); ++i) {
    if (i > 0) {
      ImGui::SameLine();
      ImGui::TextDisabled("→");
      ImGui::SameLine();
    }
    const bool is_current = i == current;
    if (is_current) {
      ImGui::PushStyleColor(ImGuiCol_Button, accent);
      ImGui::PushStyleColor(ImGuiCol_ButtonHovered, accent);
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 1, 1, 1));
    } else if (i < current) {
      ImGui::PushStyleColor(ImGuiCol_Button, done);
    }
    ImGui::PushID(i);
    if (ImGui::Button(stages[i].label)) {
      st.set_stage(stages[i].id);
      st.playing = false;
    }
    ImGui::PopID();
    if (ImGui::IsItemHovered()) {
      ImGui::PushFont(ui.font_regular);
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(stages[i].title);
      ImGui::PushTextWrapPos(fs * 26);
      ImGui::TextDisabled("%s", stages[i].why);
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
      ImGui::PopFont();
    }
    ImGui::PopStyleColor(is_current ? 3 : i < current ? 1 : 0);
  }
  ImGui::PopStyleVar(2);
  ImGui::PopFont();

  // Navigation.
  const float bw = fs * 3.2f;
  if (ImGui::Button("|◀", {bw, 0})) st.first_stage();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("First stage (Home)");
  ImGui::SameLine();
  if (ImGui::Button("◀", {bw, 0})) st.prev_stage();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous stage (←)");
  ImGui::SameLine();
  if (ImGui::Button(st.playing ? "‖ Pause" : "▶ Play", {bw * 1.9f, 0})) {
    if (!st.playing && current + 1 >= static_cast<int>(stages.size())) st.first_stage();
    st.playing = !st.playing;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Play through the stages (Space)");
  ImGui::SameLine();
  if (ImGui::Button("▶", {bw, 0})) st.next_stage();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next stage (→)");
  ImGui::SameLine();
  if (ImGui::Button("▶|", {bw, 0})) st.last_stage();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Last stage (End)");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 9);
  float pace = static_cast<float>(st.play_interval);
  if (ImGui::SliderFloat("##pace", &pace, 0.3f, 6.0f, "%.1f s per stage")) st.play_interval = pace;
  ImGui::SameLine();
  ImGui::TextDisabled("stage %d of %d:", current + 1, static_cast<int>(stages.size()));
  ImGui::SameLine();
  ImGui::TextUnformatted(st.current_stage().title);
  ImGui::SameLine();
  help_marker(st.current_stage().why);
  ImGui::End();
}

}  // namespace attn
