// The model view: every layer × head's attention weights as a thumbnail (rows are layers, columns
// heads), as BertViz's model view; hover for what the head does, click to step through it.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/heatmap_widget.h"
#include "gui/panel_lm.h"

namespace attn {

const Matrix& LmPanel::head_weights(int l, int h) {
  const LmRun* r = session.run();
  const lm::Config& c = r->model->config;
  if (weights_serial != session.serial() ||
      weights.size() != static_cast<size_t>(c.n_layer) * c.n_head) {
    weights.assign(static_cast<size_t>(c.n_layer) * c.n_head, Matrix());
    weights_serial = session.serial();
  }
  Matrix& m = weights[static_cast<size_t>(l) * c.n_head + h];
  if (m.size() == 0) {
    const int T = r->acts.T;
    m = Eigen::Map<const Matrix>(r->acts.att_at(c, l, 0, h), T, T);
  }
  return m;
}

void draw_lm_model_view(Ui& ui, LmPanel& p) {
  const LmRun* r = p.session.run();
  const lm::Config& c = r->model->config;
  const int L = c.n_layer, NH = c.n_head;
  const float fs = ImGui::GetFontSize();
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted("Model view: every head of every layer");
  ImGui::PopTextWrapPos();
  // Today's models: query heads that share a K/V head stand together, under its label.
  const int group = c.group(), groups = c.kv_heads();
  const bool grouped = c.llama_family() && group > 1;
  std::string sharing;
  if (c.llama_family()) {
    char note[256];
    if (group == 1)
      std::snprintf(note, sizeof note,
                    "Multi-head attention (MHA): each of the %d query heads has its own K/V head.",
                    NH);
    else
      std::snprintf(note, sizeof note,
                    "%s: the %d query heads share %d K/V head%s, %d query heads each; heads under "
                    "one K/V label read the same keys and values.",
                    groups == 1 ? "Multi-query attention (MQA)" : "Grouped-query attention (GQA)",
                    NH, groups, groups == 1 ? "" : "s", group);
    sharing = note;
  }
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  // In presentation the thumbnails keep the height: how the heads share K/V is a hover away.
  const std::string help =
      "Each square is one head's attention weights on your sentence: a row per token (the "
      "query), a column per earlier token it may look at (the keys), brighter = more weight, "
      "scaled to that head's largest weight. Only the lower triangle can light up: the causal "
      "mask hides later tokens. Click a square to step through that head's arithmetic with its "
      "real Q, K and V." +
      (ui.presentation && !sharing.empty() ? "\n\n" + sharing : std::string());
  help_marker(help.c_str());
  if (!ui.presentation && !sharing.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", sharing.c_str());
    ImGui::PopTextWrapPos();
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float label_w = ImGui::CalcTextSize("L00").x + fs * 0.4f;
  const float head_h = ImGui::GetTextLineHeightWithSpacing() * (grouped ? 2 : 1);
  const float gap = std::max(2.0f, fs * 0.15f);
  const float group_gap = grouped ? std::max(gap * 3, fs * 0.5f) : 0.0f;
  // Square thumbnails as large as the room allows; where the height is what limits them (a
  // projector's wide, short window), they widen into the spare width, up to 1.5 times as wide.
  const float w_fit = (avail.x - label_w - group_gap * (groups - 1)) / NH - gap;
  const float h_fit = (avail.y - head_h - fs * 0.5f) / L - gap;
  const float tile_h = std::clamp(std::min(w_fit, h_fit), fs * 0.8f, fs * 7.0f);
  const float tile_w = std::clamp(std::min(w_fit, tile_h * 1.5f), tile_h, fs * 7.0f);
  // The left edge of head h's column.
  auto col_x = [&](int h) {
    return label_w + h * (tile_w + gap) + (grouped ? (h / group) * group_gap : 0.0f);
  };
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text),
              dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  // Column labels: every head when they fit, else every few.
  const float hw = ImGui::CalcTextSize("H00").x;
  const int every = std::max(1, static_cast<int>(std::ceil((hw + fs * 0.3f) / (tile_w + gap))));
  const float line = ImGui::GetTextLineHeightWithSpacing();
  if (grouped)  // "K/V g" over each group, with a rule the width of its heads
    for (int g = 0; g < groups; ++g) {
      const float x0 = o.x + col_x(g * group), x1 = o.x + col_x(g * group + group - 1) + tile_w;
      const std::string t = x1 - x0 > ImGui::CalcTextSize("K/V 00").x ? "K/V " + std::to_string(g)
                                                                      : std::to_string(g);
      const float w = ImGui::CalcTextSize(t.c_str()).x;
      dl->AddText({(x0 + x1 - w) / 2, o.y}, text, t.c_str());
      dl->AddLine({x0, o.y + line - 2}, {x1, o.y + line - 2}, dim, 1.5f);
    }
  const float head_y = grouped ? o.y + line : o.y;
  for (int h = 0; h < NH; h += every) {
    const std::string t = "H" + std::to_string(h);
    const float w = ImGui::CalcTextSize(t.c_str()).x;
    dl->AddText({o.x + col_x(h) + (tile_w - w) / 2, head_y}, dim, t.c_str());
  }
  const int every_l =
      std::max(1, static_cast<int>(std::ceil(ImGui::GetTextLineHeight() / (tile_h + gap))));
  int hovered_l = -1, hovered_h = -1;
  for (int l = 0; l < L; ++l) {
    const float y = o.y + head_h + l * (tile_h + gap);
    if (l % every_l == 0) {
      const std::string t = "L" + std::to_string(l);
      const float w = ImGui::CalcTextSize(t.c_str()).x;
      dl->AddText({o.x + label_w - w - fs * 0.3f, y + (tile_h - ImGui::GetTextLineHeight()) / 2},
                  dim, t.c_str());
    }
    for (int h = 0; h < NH; ++h) {
      const float x = o.x + col_x(h);
      const Matrix& m = p.head_weights(l, h);
      HeatmapSpec sp;
      sp.id = "lm-thumb-" + std::to_string(l) + "-" + std::to_string(h);
      sp.serial = p.session.serial();
      sp.m = &m;
      const float mx = m.size() ? m.maxCoeff() : 1.0f;
      sp.scale = {ui.settings.colormap, 0.0f, mx > 0 ? mx : 1.0f};
      sp.labels = false;
      sp.color_bar = false;
      sp.interactive = false;
      sp.size = {tile_w, tile_h};
      ImGui::SetCursorScreenPos({x, y});
      draw_heatmap(widgets(ui), sp);
      ImGui::SetCursorScreenPos({x, y});
      ImGui::PushID(l * NH + h);
      if (ImGui::InvisibleButton("head", {tile_w, tile_h})) open_lm_head_in_stepper(ui, l, h);
      if (ImGui::IsItemHovered()) hovered_l = l, hovered_h = h;
      ImGui::PopID();
      const bool selected = l == p.session.layer && h == p.session.head;
      if (selected || (l == hovered_l && h == hovered_h))
        dl->AddRect({x - 2, y - 2}, {x + tile_w + 2, y + tile_h + 2},
                    selected ? IM_COL32(230, 60, 20, 255) : text, 2, 0, selected ? 3.0f : 1.5f);
    }
  }
  ImGui::SetCursorScreenPos({o.x, o.y + head_h + L * (tile_h + gap)});
  ImGui::Dummy({col_x(NH - 1) + tile_w + gap, 1});
  if (hovered_l >= 0) {
    const lm::HeadScores& s = r->scores[static_cast<size_t>(hovered_l) * NH + hovered_h];
    ImGui::BeginTooltip();
    ImGui::Text("Layer %d, head %d", hovered_l, hovered_h);
    if (grouped) {
      const int g = hovered_h / group;
      ImGui::Text("reads K/V head %d, with heads %d–%d", g, g * group, g * group + group - 1);
    }
    for (int role = 0; role < 4; ++role) {
      const double v = lm_role_value(s, role);
      if (v < 0)
        ImGui::TextDisabled("%s: no repeated token", lm_role_name(role));
      else
        ImGui::Text("%s: %.2f", lm_role_name(role), v);
    }
    ImGui::TextDisabled("Click to step through it in the stepper.");
    ImGui::EndTooltip();
  }
}

}  // namespace attn
