// The KV cache of the open model: what generating keeps per token (K and V of every layer and
// K/V head), in float32 and float16, for this sentence, a chosen length and the whole context;
// for a grouped-query model what sharing K/V heads saves, for a sliding-window model the window.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/panel_lm.h"

namespace attn {

namespace {

// The tokens whose K and V the cache holds after n: all of them, or a sliding-window model's
// last W (Mistral's rolling cache; lm/generate.h keeps exactly these).
size_t cached_tokens(const lm::Config& c, size_t n) {
  return c.sliding_window > 0 ? std::min(n, static_cast<size_t>(c.sliding_window)) : n;
}

std::string bytes_text(double b) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char s[64];
  // A no-break space: a wrapped line never parts a number from its unit.
  std::snprintf(s, sizeof s, u == 0 ? "%.0f\u00a0%s" : "%.1f\u00a0%s", b, units[u]);
  return s;
}

}  // namespace

void draw_lm_kv_cache(Ui& ui, LmPanel& p) {
  const LmRun* r = p.session.run();
  const lm::Config& c = r->model->config;
  const size_t f32 = lm::kv_cache_bytes_per_token(c, 4), f16 = lm::kv_cache_bytes_per_token(c, 2);
  // On a slide the lesson's words say what the cache is, and the weights' comparison gives way:
  // the sizes and what sharing saves are the figure.
  const bool slide = ui.lesson_view.slide.on;
  if (!slide) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "While a model generates text, each new token attends to every earlier token's key and "
        "value. Recomputing them for every new token would repeat the whole sentence each time, "
        "so they are kept: the KV cache. Its size grows with every token.");
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
  }
  // Wrapped at spaces (never inside a number): the tab may be narrow beside a lesson.
  // Grouped-query models cache their K/V heads only, which their query heads share.
  const std::string heads = c.kv_heads() == c.n_head
                                ? std::to_string(c.n_head) + " heads"
                                : std::to_string(c.kv_heads()) + " K/V heads (shared by " +
                                      std::to_string(c.n_head) + " query heads)";
  if (slide)
    text_wrapped_at_spaces("Per token: 2 × " + std::to_string(c.n_layer) + " layers × " +
                           std::to_string(c.kv_heads()) + " K/V heads × " +
                           std::to_string(c.head_size()) + " = " + std::to_string(f32 / 4) +
                           " values, " + bytes_text(static_cast<double>(f32)) + " in float32");
  else {
    text_wrapped_at_spaces("Per token: 2 (K and V) × " + std::to_string(c.n_layer) + " layers × " +
                           heads + " × d_k " + std::to_string(c.head_size()) + " = " +
                           std::to_string(f32 / 4) + " values");
    text_wrapped_at_spaces("= " + bytes_text(static_cast<double>(f32)) + " in float32, " +
                           bytes_text(static_cast<double>(f16)) + " in float16");
  }
  if (!slide) ImGui::Spacing();
  const float fs = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::min(fs * 14, ImGui::GetContentRegionAvail().x -
                                                ImGui::CalcTextSize("tokens").x -
                                                ImGui::GetStyle().ItemInnerSpacing.x));
  ImGui::SliderInt("tokens", &p.kv_tokens, 1, c.n_positions, "%d", ImGuiSliderFlags_Logarithmic);
  p.kv_tokens = std::clamp(p.kv_tokens, 1, c.n_positions);
  // The sizes keep their width; the context's words wrap when the window is narrow.
  const float size_w = ImGui::CalcTextSize("1023.9 KiB").x;
  if (ImGui::BeginTable("kv", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn(slide ? "tokens" : "context", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("float32", ImGuiTableColumnFlags_WidthFixed, size_w);
    ImGui::TableSetupColumn("float16", ImGuiTableColumnFlags_WidthFixed, size_w);
    ImGui::TableHeadersRow();
    // On a slide the rows' names are short, so the three rows stay three lines.
    const std::string T = std::to_string(r->acts.T), K = std::to_string(p.kv_tokens),
                      N = std::to_string(c.n_positions);
    const std::pair<std::string, size_t> rows[] = {
        {slide ? T + " (yours)" : "your sentence: " + T + " tokens",
         static_cast<size_t>(r->acts.T)},
        {slide ? K + " (slider)" : K + " tokens (slider)", static_cast<size_t>(p.kv_tokens)},
        {slide ? N + " (all)" : "the whole context: " + N + " tokens",
         static_cast<size_t>(c.n_positions)}};
    for (auto [name, n] : rows) {
      if (cached_tokens(c, n) < n)
        name += slide ? " (last " + std::to_string(c.sliding_window) + ")"
                      : " (the last " + std::to_string(c.sliding_window) + ")";
      n = cached_tokens(c, n);
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
  if (!slide) ImGui::Spacing();
  const double weights = r->model->parameter_count() * 4;
  ImGui::PushTextWrapPos(0);
  if (!slide)
    ImGui::Text(
        "For comparison, the weights take %s in float32. A full context's cache is %.0f %% of "
        "that, for each sequence generated at once.",
        bytes_text(weights).c_str(),
        100.0 * static_cast<double>(f32 * cached_tokens(c, static_cast<size_t>(c.n_positions))) /
            weights);
  if (c.group() > 1) {
    // The saving, from this model's own config: one K/V head per query head would multiply it.
    const double mha = static_cast<double>(f32) * c.group();
    if (slide)
      ImGui::Text("%d query heads share %d K/V head%s: %s a token where MHA needs %s, %d× less.",
                  c.n_head, c.kv_heads(), c.kv_heads() == 1 ? "" : "s",
                  bytes_text(static_cast<double>(f32)).c_str(), bytes_text(mha).c_str(), c.group());
    else
      ImGui::Text(
          "%s: its %d query heads share %d K/V head%s, so it caches %s per token "
          "where one K/V head per query head (MHA) would need %s: %d× less.",
          c.kv_heads() == 1 ? "Multi-query attention (MQA)" : "Grouped-query attention (GQA)",
          c.n_head, c.kv_heads(), c.kv_heads() == 1 ? "" : "s",
          bytes_text(static_cast<double>(f32)).c_str(), bytes_text(mha).c_str(), c.group());
  }
  if (c.sliding_window > 0)
    ImGui::Text(
        "Sliding window of %d: each token sees only the %d tokens up to itself, so "
        "the cache keeps the last %d tokens' K and V and drops older ones; it "
        "stops growing at %s.",
        c.sliding_window, c.sliding_window, c.sliding_window,
        bytes_text(static_cast<double>(f32) * c.sliding_window).c_str());
  if (!c.llama_family())
    ImGui::TextDisabled(
        "GPT-2 gives every query head its own key/value head. Grouped-query attention (GQA) "
        "shares one K and V among several query heads and divides this cache by the group size; "
        "the stepper's Heads panel shows it on the gqa example.");
  ImGui::PopTextWrapPos();
}

}  // namespace attn
