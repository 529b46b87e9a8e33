// The heads as a grid: every query head's weights as a thumbnail, grouped in frames by the
// key/value head they share (MHA: one per frame; GQA: several; MQA: all in one), and the key/value
// cache each token costs with the current setting.
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "gui/heatmap_widget.h"
#include "gui/ui.h"

namespace attn {

void draw_heads_panel(Ui& ui) {
  if (ImGui::Begin("Heads###heads", nullptr, ImGuiWindowFlags_NoCollapse)) draw_heads_contents(ui);
  ImGui::End();
}

void draw_heads_contents(Ui& ui) {
  AppState& st = ui.state;
  auto measure = [&] {  // the height the window needs (title bar included), for the layout
    const ImGuiStyle& style = ImGui::GetStyle();
    ui.layout.heads_h =
        std::ceil(ImGui::GetCursorPosY() - style.ItemSpacing.y + style.WindowPadding.y);
  };
  if (!st.has_trace()) {  // nothing computed yet (no scenario, or a trace still on its way)
    ImGui::TextDisabled("No heads to show yet.");
    measure();
    return;
  }
  const AttentionTrace& t = st.trace();
  // A lesson question about the head counts or which key/value head a query head uses: these
  // lines and the grouped thumbnails would answer it.
  if (ui.secret.shape || ui.secret.kv_map) {
    ImGui::TextDisabled("The heads are hidden until the question is answered.");
    measure();
    return;
  }
  const int H = t.num_heads, G = std::max(1, t.num_kv_heads);
  const float fs = ImGui::GetFontSize();
  const char* kind = G == H   ? "multi-head (MHA)"
                     : G == 1 ? "multi-query (MQA)"
                              : "grouped-query (GQA)";
  ImGui::TextWrapped("H = %d, H_kv = %d: %s", H, G, H == 1 ? "a single head" : kind);
  // The key/value cache: each token keeps K and V for every key/value head.
  const int per_token = G * (t.d_k + t.d_v);
  const std::string share = G != H ? " (" + std::to_string(100 * G / H) + "% of MHA's " +
                                         std::to_string(H * (t.d_k + t.d_v)) + " values)"
                                   : "";
  ImGui::TextWrapped(
      "KV cache per token: H_kv·(d_k + d_v) = %d·(%d + %d) = %d values = %d bytes in fp32%s", G,
      t.d_k, t.d_v, per_token, per_token * 4, share.c_str());
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Why it matters: while generating, a model keeps every past token's keys and values so "
      "they are not recomputed. Sharing key/value heads between query heads (GQA, MQA) shrinks "
      "that cache, the main memory cost of long contexts.");
  const TraceStep* w = t.find(StageId::kWeights);
  if (!w || H == 1) {
    measure();
    return;
  }
  ImGui::Separator();
  // A prediction about the weights must not show them here.
  if (ui.predict.conceals_stage(StageId::kWeights) || ui.secret.conceals_stage(StageId::kWeights)) {
    ImGui::TextDisabled("The heads' weights are hidden until the reveal.");
    measure();
    return;
  }
  // Frames side by side, one per key/value head, wrapping to the panel width; the thumbnails are
  // sized from the width alone, so the panel's height follows from its content.
  // The width as if the scrollbar were there: thumbnails sized from the width with the scrollbar
  // coming and going would change the height that decides whether it comes.
  const float avail = ImGui::GetContentRegionAvail().x -
                      (ImGui::GetScrollMaxY() > 0 ? 0.0f : ImGui::GetStyle().ScrollbarSize);
  const int per_group = H / G;
  const float gap = ImGui::GetStyle().ItemSpacing.x, frame_pad = fs * 0.8f;
  const float one_row = (avail - G * (frame_pad + gap)) / std::max(1, H) - gap;
  const float by_group = (avail - frame_pad - gap) / std::max(1, per_group) - gap;
  const float tile = std::clamp(one_row >= fs * 2.5f ? one_row : by_group, fs * 2.0f, fs * 5);
  const ImU32 group_cols[] = {IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),
                              IM_COL32(44, 160, 44, 255),   IM_COL32(214, 39, 40, 255),
                              IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                              IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255)};
  float x_used = 0;
  for (int g = 0; g < G; ++g) {
    const float group_w = per_group * (tile + gap) + frame_pad;
    if (g > 0 && x_used + group_w <= avail)
      ImGui::SameLine(0, gap + fs * 0.3f);
    else if (g > 0)
      x_used = 0;
    x_used += group_w + gap + fs * 0.3f;
    ImGui::BeginGroup();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const ImU32 col = group_cols[g % 8];
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(col), " K/V %d", g);
    ImGui::Indent(fs * 0.3f);
    for (int k = 0; k < per_group; ++k) {
      const int h = g * per_group + k;
      if (k > 0) ImGui::SameLine();
      ImGui::BeginGroup();
      ImGui::PushID(h);
      const bool current = h == st.head();
      ImGui::TextColored(
          current ? ImVec4(0.85f, 0.25f, 0.05f, 1) : ImGui::GetStyle().Colors[ImGuiCol_Text], "h%d",
          h);
      HeatmapSpec sp;
      sp.id = "head-" + std::to_string(h);
      sp.m = &w->heads[h];
      sp.hidden = t.has_reasons(h) ? &t.hidden_of(h) : nullptr;
      // An edit of another head leaves this one's texture and colour range as they are.
      sp.serial = st.head_serial(h);
      sp.scale = color_scale_cached(ui, sp.id, StageId::kWeights, w->heads[h], sp.serial);
      sp.labels = false;
      sp.color_bar = false;
      sp.interactive = false;
      sp.size = {tile, tile};
      const ImVec2 tp = ImGui::GetCursorScreenPos();
      draw_heatmap(widgets(ui), sp);
      ImGui::SetCursorScreenPos(tp);
      if (ImGui::InvisibleButton("pick", {tile, tile})) st.set_head(h);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show head %d (uses key/value head %d)", h, g);
      if (current)
        ImGui::GetWindowDrawList()->AddRect({tp.x - 2, tp.y - 2},
                                            {tp.x + tile + 2, tp.y + tile + 2},
                                            IM_COL32(230, 60, 20, 255), 3, 0, 3);
      ImGui::PopID();
      ImGui::EndGroup();
    }
    ImGui::Unindent(fs * 0.3f);
    ImGui::EndGroup();
    const ImVec2 p1 = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRect({p0.x - 2, p0.y - 2}, {p1.x + fs * 0.3f, p1.y + fs * 0.3f},
                                        col, fs * 0.4f, 0, 2.5f);
  }
  ImGui::Dummy({1, fs * 0.3f});
  measure();
}

}  // namespace attn
