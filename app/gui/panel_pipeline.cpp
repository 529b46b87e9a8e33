// The pipeline strip across the top: every stage of attention with the current one highlighted,
// and the controls that move through them (first, previous, play at a pace, next, last). It fits
// the window: large chips when they fit on one line, smaller ones, then a second line; the
// controls follow on the same line when there is room. It reports its height for the layout.
#include <imgui.h>

#include <cmath>
#include <cstdio>

#include "gui/ui.h"

namespace attn {
namespace {

// Starts the next item on the current line when `width` more pixels fit before `right`.
void flow(float width, float right, bool first) {
  if (first) return;
  const float x = ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x;
  if (x + width <= right) ImGui::SameLine();
}

}  // namespace

namespace {

// Presentation mode keeps the strip to one row: at a size that does not fit (large text on a
// 720p projector), the strip is drawn smaller rather than wrapping into a second row that the
// heatmap needs. The font scale for that, measured at the font's own size.
float strip_scale(const Ui& ui, const std::vector<StageInfo>& stages) {
  const ImGuiStyle& style = ImGui::GetStyle();
  float scale = 1;
  // The row's width at the bold chips is `grows` (text, padding, buttons: all scale with the
  // font) plus `fixed` (the spacing between items, which does not).
  const float fs1 = ImGui::GetFontSize(), b = fs1 * 2.6f;
  ImFont* f = ui.fonts.bold;
  const float arrow = f->CalcTextSizeA(f->FontSize, FLT_MAX, 0, "→").x;
  // A slide leaves the controls to the keyboard and the lesson's Next: the chips take the row.
  float grows = ui.lesson_view.slide.on ? 0 : b * 2 + b * 1.9f;  // ◀ Play ▶
  for (size_t i = 0; i < stages.size(); ++i)
    grows +=
        f->CalcTextSizeA(f->FontSize, FLT_MAX, 0, stages[i].label).x + fs1 * 1.4f + (i ? arrow : 0);
  const float fixed = style.ItemSpacing.x * (2.0f * stages.size() + 3);
  const float avail1 = ImGui::GetContentRegionAvail().x;
  // Never under 16 px, a slide's smallest readable text: a second row rather than smaller.
  const float least = ui.lesson_view.slide.on ? std::min(1.0f, 16.0f / fs1) : 0.5f;
  if (grows + fixed > avail1) scale = std::max(least, (avail1 - fixed) / grows * 0.99f);
  return scale;
}

// The stage chips joined by arrows, the current one in the accent colour and those before it
// shaded; a click goes to that stage.
void draw_stage_chips(Ui& ui, const std::vector<StageInfo>& stages, ImVec2 chip_pad, float right) {
  AppState& st = ui.state;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float fs = ImGui::GetFontSize();
  const int current = st.stage_index();
  const bool light = ui.settings.light_theme;
  const ImVec4 accent = light ? ImVec4(0.16f, 0.38f, 0.78f, 1) : ImVec4(0.26f, 0.52f, 0.96f, 1);
  const ImVec4 done = light ? ImVec4(0.80f, 0.86f, 0.95f, 1) : ImVec4(0.20f, 0.27f, 0.38f, 1);
  const float arrow_w = ImGui::CalcTextSize("→").x;
  for (int i = 0; i < static_cast<int>(stages.size()); ++i) {
    const float chip_w = ImGui::CalcTextSize(stages[i].label).x + chip_pad.x * 2;
    if (i > 0) {
      flow(arrow_w + style.ItemSpacing.x + chip_w, right, false);
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
      ImGui::PushFont(ui.fonts.regular);
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
}

}  // namespace

void draw_pipeline_panel(Ui& ui) {
  AppState& st = ui.state;
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoScrollbar |
                                 ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoTitleBar;
  if (!ImGui::Begin("Pipeline###pipeline", nullptr, flags)) {
    ImGui::End();
    return;
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  const std::vector<StageInfo> stages = st.stages();
  const bool room = ui.presentation && !ui.panels_shown;
  ImGui::SetWindowFontScale(1);  // measured at the font's own size (the scale stays per window)
  const float scale = room ? strip_scale(ui, stages) : 1.0f;
  ImGui::SetWindowFontScale(scale);
  const float fs = ImGui::GetFontSize();
  const int current = st.stage_index();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const float avail = ImGui::GetContentRegionAvail().x;

  // The strip: large chips joined by arrows, so the class sees where we are in the computation.
  // The title font when the strip fits on one line, else the regular one (which may wrap).
  const ImVec2 chip_pad{fs * 0.7f, fs * 0.3f};
  auto strip_width = [&](ImFont* f) {
    float w = 0;
    const float size = f->FontSize * scale;
    const float arrow = f->CalcTextSizeA(size, FLT_MAX, 0, "→").x;
    for (size_t i = 0; i < stages.size(); ++i)
      w += f->CalcTextSizeA(size, FLT_MAX, 0, stages[i].label).x + chip_pad.x * 2 +
           (i ? arrow + style.ItemSpacing.x * 2 : 0);
    return w;
  };
  // Presentation mode keeps the height for the heatmap: the chips and a short set of controls
  // (previous, play, next) share one line when they fit.
  const float bw = fs * 2.6f;
  const float gap = style.ItemSpacing.x;
  const float nav_w = bw * 4 + bw * 1.9f + gap * 5;
  const float compact_w = bw * 2 + bw * 1.9f + gap * 3;
  // In presentation mode the strip keeps to previous, play and next (the keyboard does the rest),
  // on the chips' line when it fits in either chip size.
  const bool compact = room;
  const float controls_w = compact ? compact_w : nav_w;
  // Everything on one line when it fits with large chips, or with smaller ones; else the chips
  // on a line of their own and the controls flowing under them.
  char pace_text[32];
  std::snprintf(pace_text, sizeof pace_text, "%.1f s per stage", st.play_interval);
  char where[48];
  std::snprintf(where, sizeof where, "stage %d of %d", current + 1,
                static_cast<int>(stages.size()));
  const float slider_w = fs * 5;
  const float tail_w = compact ? 0
                               : gap * 3 + slider_w + ImGui::CalcTextSize(pace_text).x +
                                     ImGui::CalcTextSize(where).x + ImGui::CalcTextSize("(?)").x;
  ImFont* chip_font = ui.fonts.title;
  if (compact) {  // one row: the large chips when they fit beside the controls
    if (strip_width(ui.fonts.title) + gap + controls_w > avail) chip_font = ui.fonts.bold;
  } else if (strip_width(ui.fonts.title) + gap + controls_w + tail_w > avail &&
             (strip_width(ui.fonts.bold) + gap + controls_w + tail_w <= avail ||
              strip_width(ui.fonts.title) > avail))
    chip_font = ui.fonts.bold;
  ImGui::PushFont(chip_font);
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, chip_pad);
  ImGui::PushStyleVar(ImGuiStyleVar_FrameRounding, fs * 0.6f);
  draw_stage_chips(ui, stages, chip_pad, right);
  ImGui::PopStyleVar(2);
  ImGui::PopFont();

  if (ui.lesson_view.slide.on) {  // the stage strip alone (see above)
    ui.layout.pipeline_h =
        std::ceil(ImGui::GetCursorPosY() - style.ItemSpacing.y + style.WindowPadding.y);
    ImGui::End();
    return;
  }
  // Navigation, after the strip when it fits there, else on a line of its own (and wrapping).
  flow(compact ? compact_w : nav_w, right, false);
  auto button = [&](const char* label, float w, const char* tip, bool first = false) {
    flow(w, right, first);
    const bool pressed = ImGui::Button(label, {w, 0});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    return pressed;
  };
  if (!compact && button("|◀", bw, "First stage (Home)", true)) st.first_stage();
  if (button("◀", bw, "Previous stage (←)", compact)) st.prev_stage();
  if (button(st.playing ? "‖ Pause" : "▶ Play", bw * 1.9f, "Play through the stages (Space)")) {
    if (!st.playing && current + 1 >= static_cast<int>(stages.size())) st.first_stage();
    st.playing = !st.playing;
  }
  if (button("▶", bw, "Next stage (→)")) st.next_stage();
  if (compact) {  // the pace and the counter are in the full strip (Tab brings it back)
    ui.layout.pipeline_h =
        std::ceil(ImGui::GetCursorPosY() - style.ItemSpacing.y + style.WindowPadding.y);
    ImGui::End();
    return;
  }
  if (button("▶|", bw, "Last stage (End)")) st.last_stage();
  // The pace: the slider shows no text (its grab would cover it); the value sits beside it.
  flow(slider_w + gap + ImGui::CalcTextSize(pace_text).x, right, false);
  ImGui::SetNextItemWidth(slider_w);
  float pace = static_cast<float>(st.play_interval);
  if (ImGui::SliderFloat("##pace", &pace, 0.3f, 6.0f, "", ImGuiSliderFlags_AlwaysClamp))
    st.play_interval = std::round(pace * 10) / 10;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Seconds per stage when playing");
  ImGui::SameLine();
  ImGui::TextDisabled("%s", pace_text);
  flow(ImGui::CalcTextSize(where).x + gap + ImGui::CalcTextSize("(?)").x, right, false);
  ImGui::TextDisabled("%s", where);
  ImGui::SameLine();
  help_marker(st.current_stage().why);
  ui.layout.pipeline_h =
      std::ceil(ImGui::GetCursorPosY() - style.ItemSpacing.y + style.WindowPadding.y);
  ImGui::End();
}

}  // namespace attn
