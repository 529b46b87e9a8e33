// What each head does: four scores per head (previous token, first token, self, induction), each
// defined on screen, as a layers × heads grid; the strongest heads are one click from the stepper.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "gui/heatmap_widget.h"
#include "gui/panel_lm.h"

namespace attn {

void draw_lm_sink_box(Ui& ui, LmPanel& p) {
  const LmRun* r = p.session.run();
  if (!r) return;
  // The run's strongest sink and its numbers, computed once per run (it reads T² weights).
  if (p.sink_serial != p.session.serial()) {
    p.sink = lm::strongest_sink(r->model->config, r->acts, r->scores);
    p.sink_text = lm::sink_explanation(p.sink, r->tokens);
    p.sink_serial = p.session.serial();
  }
  // A one-cell table: a framed box as tall as its wrapped text, at any font, never scrolling.
  const ImGuiTableFlags tf = ImGuiTableFlags_BordersOuter | ImGuiTableFlags_PadOuterX;
  if (!ImGui::BeginTable("sink-box", 1, tf)) return;
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, ImGui::GetColorU32(ImGuiCol_FrameBg));
  ImGui::Spacing();
  ImGui::PushTextWrapPos(0);
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("Attention sinks: why so much weight on the first token?");
  ImGui::PopFont();
  ImGui::TextUnformatted(p.sink_text.c_str());
  ImGui::PopTextWrapPos();
  if (p.sink.layer >= 0) {
    char label[64];
    std::snprintf(label, sizeof label, "Step through layer %d, head %d", p.sink.layer, p.sink.head);
    if (ImGui::Button(label)) open_lm_head_in_stepper(ui, p.sink.layer, p.sink.head);
  }
  ImGui::Spacing();
  ImGui::EndTable();
}

void draw_lm_head_roles(Ui& ui, LmPanel& p) {
  LmSession& s = p.session;
  const LmRun* r = s.run();
  const lm::Config& c = r->model->config;
  // On a slide (the lesson's words say what the score is and which head stands out) the four
  // scores share one line, as radio buttons where they fit, else as a list by their short names;
  // the definition is under the (?), and the figure takes the rest of the stage.
  const bool slide = ui.lesson_view.slide.on;
  static const char* const kShort[] = {"Previous token", "First token (sink)", "Self", "Induction"};
  float line = ImGui::CalcTextSize("(?)").x;
  for (int role = 0; role < 4; ++role)
    line += radio_width(lm_role_name(role)) + ImGui::GetStyle().ItemSpacing.x;
  if (slide && line > ImGui::GetContentRegionAvail().x) {
    float widest = 0;
    for (const char* name : kShort) widest = std::max(widest, ImGui::CalcTextSize(name).x);
    ImGui::SetNextItemWidth(widest + ImGui::GetStyle().FramePadding.x * 2 +
                            ImGui::GetFrameHeight());
    if (ImGui::BeginCombo("##lm-role", kShort[p.role])) {
      for (int role = 0; role < 4; ++role)
        if (ImGui::Selectable(kShort[role], p.role == role)) p.role = role;
      ImGui::EndCombo();
    }
  } else {
    for (int role = 0; role < 4; ++role) {
      // Side by side while they fit, else on the next line (narrow windows, large fonts).
      if (role) same_line_if_fits(radio_width(lm_role_name(role)));
      ImGui::RadioButton(lm_role_name(role), &p.role, role);
    }
  }
  if (slide) {
    ImGui::SameLine();
    help_marker(lm_role_definition(p.role));
  } else {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(lm_role_definition(p.role));
    ImGui::PopTextWrapPos();
  }
  const bool undefined = p.role == 3 && r->scores.front().induction < 0;
  if (undefined) {
    ImGui::Spacing();
    ImGui::TextColored(ImVec4(0.85f, 0.35f, 0.05f, 1),
                       "No token of this sentence appeared before (two tokens back or more), so "
                       "there is nothing to copy. Press “Repeat it” above.");
    return;
  }
  if (p.role == 1 && !slide) draw_lm_sink_box(ui, p);
  // The strongest heads for this score, best first.
  std::vector<std::pair<double, int>> ranked;
  for (size_t i = 0; i < r->scores.size(); ++i)
    ranked.push_back({lm_role_value(r->scores[i], p.role), static_cast<int>(i)});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Strongest:");
  for (size_t i = 0; i < std::min<size_t>(4, ranked.size()); ++i) {
    const int l = ranked[i].second / c.n_head, h = ranked[i].second % c.n_head;
    char label[64];
    std::snprintf(label, sizeof label, "L%d H%d  %.2f", l, h, ranked[i].first);
    // On a slide, those that fit the line.
    if (slide && !fits_on_line(button_width(label))) break;
    same_line_if_fits(button_width(label));
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Button(label)) open_lm_head_in_stepper(ui, l, h);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Step through layer %d, head %d", l, h);
    ImGui::PopID();
  }
  if (p.role == 3)
    ImGui::TextDisabled("averaged over %d tokens that appeared before",
                        r->scores.front().induction_queries);

  Matrix m(c.n_layer, c.n_head);
  for (int l = 0; l < c.n_layer; ++l)
    for (int h = 0; h < c.n_head; ++h)
      m(l, h) = static_cast<float>(
          lm_role_value(r->scores[static_cast<size_t>(l) * c.n_head + h], p.role));
  HeatmapSpec sp;
  sp.id = "lm-roles";
  sp.serial = s.serial() * 4 + static_cast<uint64_t>(p.role) + 1;
  sp.m = &m;
  sp.matrix_name = lm_role_name(p.role);
  for (int l = 0; l < c.n_layer; ++l) sp.row_labels.push_back("layer " + std::to_string(l));
  for (int h = 0; h < c.n_head; ++h) sp.col_labels.push_back("H" + std::to_string(h));
  sp.scale = {ui.settings.colormap, 0.0f, 1.0f};
  sp.selected_row = s.layer;
  sp.selected_col = s.head;
  const HeatmapEvent e = draw_heatmap(widgets(ui), sp);
  if (e.clicked && e.row >= 0 && e.col >= 0) {
    s.select(e.row, e.col);
    p.select_tab = "heads";
  }
}

}  // namespace attn
