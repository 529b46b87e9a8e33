// The narration of the selected cell or row: the arithmetic of the current stage written out with
// the real numbers, from core/explain (the same text as `attention-lab explain`).
#include <imgui.h>

#include "ui.h"

namespace attn {

void draw_narration_panel(Ui& ui) {
  AppState& st = ui.state;
  if (!ImGui::Begin("Narration###narration", nullptr, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  const AttentionTrace& t = st.trace();
  const Selection sel = st.selection();
  if (!sel.active()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "Click a cell of the heatmap to see its arithmetic with the actual "
        "numbers, or click a query token (left of the heatmap) for its whole row.");
    ImGui::TextDisabled("Hover any cell for its value; the mouse wheel zooms and dragging pans.");
    ImGui::PopTextWrapPos();
    ImGui::End();
    return;
  }
  auto token = [](const std::vector<std::string>& v, int i) {
    return i >= 0 && i < static_cast<int>(v.size()) ? v[i] : std::to_string(i);
  };
  ImGui::PushFont(ui.font_bold);
  if (sel.key >= 0)
    ImGui::Text("query %d \"%s\"  ·  key %d \"%s\"", sel.query,
                token(t.query_tokens, sel.query).c_str(), sel.key,
                token(t.key_tokens, sel.key).c_str());
  else
    ImGui::Text("query %d \"%s\"  ·  whole row", sel.query,
                token(t.query_tokens, sel.query).c_str());
  ImGui::PopFont();
  ImGui::TextDisabled("%s%s", st.current_stage().title,
                      t.num_heads > 1 ? (", head " + std::to_string(st.head())).c_str() : "");

  // explain() is cheap for teaching sizes but not for a 1024-key row: cache it per request.
  static std::string cached_key, cached_text, cached_error;
  std::optional<ExplainRequest> req = st.narration_request();
  std::string key = std::to_string(st.trace_serial()) + "/" + std::to_string(req->query) + "/" +
                    std::to_string(req->head) + "/" + std::to_string(req->key.value_or(-1)) + "/" +
                    req->step + "/" + std::to_string(req->precision);
  if (key != cached_key) {
    cached_error.clear();
    cached_text = st.narration(cached_error);
    cached_key = key;
  }
  if (ImGui::SmallButton("whole row")) st.select_row(sel.query);
  ImGui::SameLine();
  if (ImGui::SmallButton("copy")) ImGui::SetClipboardText(cached_text.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("clear")) st.clear_selection();
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  ImGui::SliderInt("decimals", &st.precision, 1, 8);
  ImGui::Separator();
  ImGui::BeginChild("narration-text", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
  if (!cached_error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", cached_error.c_str());
    ImGui::PopTextWrapPos();
  } else {
    ImGui::PushFont(ui.font_mono);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(cached_text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
  }
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn
