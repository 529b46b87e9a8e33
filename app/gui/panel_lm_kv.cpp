// The KV cache of the open model: what generating keeps per token (K and V of every layer and
// head), in float32 and float16, for this sentence, a chosen length and the whole context.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/panel_lm.h"

namespace attn {

namespace {

std::string bytes_text(double b) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char s[64];
  std::snprintf(s, sizeof s, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return s;
}

}  // namespace

void draw_lm_kv_cache(Ui& ui, LmPanel& p) {
  (void)ui;
  const LmRun* r = p.session.run();
  const lm::Config& c = r->model->config;
  const size_t f32 = lm::kv_cache_bytes_per_token(c, 4), f16 = lm::kv_cache_bytes_per_token(c, 2);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(
      "While a model generates text, each new token attends to every earlier token's key and "
      "value. Recomputing them for every new token would repeat the whole sentence each time, so "
      "they are kept: the KV cache. Its size grows with every token.");
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  // Wrapped at spaces (never inside a number): the tab may be narrow beside a lesson.
  // Grouped-query models cache their K/V heads only, which their query heads share.
  const std::string heads = c.kv_heads() == c.n_head
                                ? std::to_string(c.n_head) + " heads"
                                : std::to_string(c.kv_heads()) + " K/V heads (shared by " +
                                      std::to_string(c.n_head) + " query heads)";
  text_wrapped_at_spaces("Per token: 2 (K and V) × " + std::to_string(c.n_layer) + " layers × " +
                         heads + " × d_k " + std::to_string(c.head_size()) + " = " +
                         std::to_string(f32 / 4) + " values");
  text_wrapped_at_spaces("= " + bytes_text(static_cast<double>(f32)) + " in float32, " +
                         bytes_text(static_cast<double>(f16)) + " in float16");
  ImGui::Spacing();
  const float fs = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::min(fs * 14, ImGui::GetContentRegionAvail().x -
                                                ImGui::CalcTextSize("tokens").x -
                                                ImGui::GetStyle().ItemInnerSpacing.x));
  ImGui::SliderInt("tokens", &p.kv_tokens, 1, c.n_positions, "%d", ImGuiSliderFlags_Logarithmic);
  p.kv_tokens = std::clamp(p.kv_tokens, 1, c.n_positions);
  // The sizes keep their width; the context's words wrap when the window is narrow.
  const float size_w = ImGui::CalcTextSize("1023.9 KiB").x;
  if (ImGui::BeginTable("kv", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("context", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("float32", ImGuiTableColumnFlags_WidthFixed, size_w);
    ImGui::TableSetupColumn("float16", ImGuiTableColumnFlags_WidthFixed, size_w);
    ImGui::TableHeadersRow();
    const std::pair<std::string, size_t> rows[] = {
        {"your sentence: " + std::to_string(r->acts.T) + " tokens", static_cast<size_t>(r->acts.T)},
        {std::to_string(p.kv_tokens) + " tokens (slider)", static_cast<size_t>(p.kv_tokens)},
        {"the whole context: " + std::to_string(c.n_positions) + " tokens",
         static_cast<size_t>(c.n_positions)}};
    for (const auto& [name, n] : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(bytes_text(static_cast<double>(f32 * n)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(bytes_text(static_cast<double>(f16 * n)).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  const double weights = r->model->parameter_count() * 4;
  ImGui::PushTextWrapPos(0);
  ImGui::Text(
      "For comparison, the weights take %s in float32. A full context's cache is %.0f %% of "
      "that, for each sequence generated at once.",
      bytes_text(weights).c_str(),
      100.0 * static_cast<double>(f32 * static_cast<size_t>(c.n_positions)) / weights);
  ImGui::TextDisabled(
      "GPT-2 gives every query head its own key/value head. Grouped-query attention (GQA) shares "
      "one K and V among several query heads and divides this cache by the group size; the "
      "stepper's Heads panel shows it on the gqa example.");
  ImGui::PopTextWrapPos();
}

}  // namespace attn
