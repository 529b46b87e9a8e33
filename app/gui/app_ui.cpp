// One frame of the app: lays the panels out over the window, routes keyboard shortcuts, and holds
// the small helpers panels share (help markers, colour scales, export of every stage).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "io/atomic_file.h"
#include "render/heatmap_export.h"

namespace attn {

void Ui::request_discard_check(std::function<void()> action) {
  if (!state.dirty()) {
    action();
    return;
  }
  after_discard = std::move(action);
  ask_discard = true;
}

void Ui::run_deferred() {
  std::vector<std::function<void()>> now;
  now.swap(deferred);
  for (auto& f : now) f();
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

ColormapChoice colormaps(const UiSettings& s) { return {s.colormap, s.signed_colormap}; }

ColorScale color_scale_for(const UiSettings& s, const std::string& step, const Matrix& m) {
  return attn::color_scale_for(step, m, colormaps(s));
}

int export_all_stages(const AttentionTrace& trace, const UiSettings& s, const std::string& folder,
                      ImageFormat format, std::string& error) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    error = "cannot create folder '" + folder + "': " + ec.message();
    return 0;
  }
  // Every image or none: all are rendered and written to temporary files first, then put in
  // place together (io/atomic_file.h).
  HeatmapOptions base;
  base.maps = colormaps(s);
  base.precision = s.decimals;
  AtomicOutputs files;
  for (const StageChoice& c : every_stage(trace, base)) {
    const std::string name = c.stem + "." + image_format_extension(format);
    std::string bytes;
    const int index = files.add((std::filesystem::path(folder) / name).string(), error);
    if (index < 0 || !render_heatmap(trace, c.options, format, bytes, error) ||
        !files.write(index, bytes, error))
      return 0;
  }
  const int count = static_cast<int>(files.size());
  return files.commit(error) ? count : 0;
}

namespace {

bool key_pressed(int key) { return ImGui::IsKeyPressed(key, false); }
bool named_key_pressed(ImGuiKey k, bool repeat = false) {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), repeat);
}

// Places a window as a fraction of the work area (below the menu and pipeline, above the status
// bar), once (then the user's layout, saved in imgui.ini, wins) or always after "Reset layout".
void place(const Ui& ui, ImVec2 pos, ImVec2 size) {
  const ImGuiCond cond = ui.reset_layout ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos(pos, cond);
  ImGui::SetNextWindowSize(size, cond);
}

}  // namespace

void handle_shortcuts(Ui& ui) {
  ImGuiIO& io = ImGui::GetIO();
  AppState& st = ui.state;
  // Font size works everywhere; the rest must not steal keys from a text field being edited.
  if (io.KeyCtrl && (key_pressed(kKeyEqual) || key_pressed(kKeyKpAdd)))
    ui.settings.font_px = std::min(ui.settings.font_px + 2.0f, 48.0f);
  if (io.KeyCtrl && (key_pressed(kKeyMinus) || key_pressed(kKeyKpSubtract)))
    ui.settings.font_px = std::max(ui.settings.font_px - 2.0f, 12.0f);
  if (key_pressed(kKeyF11)) ui.presentation = !ui.presentation;
  if (io.WantTextInput) return;
  if (io.KeyCtrl && named_key_pressed(ImGuiKey_Z)) {
    if (io.KeyShift)
      st.redo();
    else
      st.undo();
  }
  if (io.KeyCtrl && named_key_pressed(ImGuiKey_Y)) st.redo();
  if (io.KeyCtrl && key_pressed(kKeyS)) {
    if (st.file_path().empty()) {
      ui.path_dialog = "save";
      ui.path_buffer = "scenario.json";
    } else {
      st.save_file(st.file_path());
    }
  }
  if (io.KeyCtrl && key_pressed(kKeyO)) {
    ui.request_discard_check([&ui] {
      ui.path_dialog = "open";
      ui.path_buffer = ui.state.file_path();
    });
  }
  if (io.KeyCtrl || io.KeyAlt) return;
  lesson_shortcuts(ui);
  if (named_key_pressed(ImGuiKey_RightArrow, true)) st.next_stage();
  if (named_key_pressed(ImGuiKey_LeftArrow, true)) st.prev_stage();
  if (named_key_pressed(ImGuiKey_Home)) st.first_stage();
  if (named_key_pressed(ImGuiKey_End)) st.last_stage();
  if (named_key_pressed(ImGuiKey_Space)) {
    // Play from the start when already at the end, as a media player does.
    if (!st.playing && st.stage_index() + 1 >= static_cast<int>(st.stages().size()))
      st.first_stage();
    st.playing = !st.playing;
  }
  if (named_key_pressed(ImGuiKey_Escape)) ui.state.clear_selection();
}

void draw_app(Ui& ui) {
  AppState& st = ui.state;
  handle_shortcuts(ui);
  draw_menu_bar(ui);

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float fs = ImGui::GetFontSize();
  // From Pos, not WorkPos: the menu bar reserves its height only from the next frame on, and the
  // first frame is the one that places the windows.
  const float top = vp->Pos.y + ImGui::GetFrameHeight(), W = vp->Size.x;
  const float status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
  const float pipe_h = fs * 5.0f;
  const float body_y = top + pipe_h, body_h = vp->Size.y - (top - vp->Pos.y) - pipe_h - status_h;
  // Presenting a lesson: the heatmap and the lesson share the room; the inputs fold away.
  const bool presenting_lesson = ui.presentation && ui.lesson;
  const float left_w = presenting_lesson ? 0.0f : std::round(W * 0.25f);
  const float right_w = std::round(W * (presenting_lesson ? 0.4f : 0.31f));
  const float mid_w = W - left_w - right_w;

  place(ui, {vp->Pos.x, top}, {W, pipe_h});
  draw_pipeline_panel(ui);
  // Opening or closing a lesson, or a step with another number of heads, re-lays the column out.
  const std::string column = std::string(presenting_lesson ? "P" : "") +
                             (!ui.lesson                                   ? ""
                              : st.has_trace() && st.trace().num_heads > 1 ? "L+H"
                                                                           : "L");
  if (column != ui.lesson_column) {
    ui.lesson_column = column;
    ui.reset_layout = true;
  }

  if (!presenting_lesson) {
    place(ui, {vp->Pos.x, body_y}, {left_w, body_h});
    if (ImGui::Begin("Scenario###scenario", nullptr, ImGuiWindowFlags_NoCollapse)) {
      if (ImGui::BeginTabBar("left-tabs")) {
        auto flags = [&ui](const char* tab) {
          return ui.select_tab == tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
        };
        if (ImGui::BeginTabItem("Inputs", nullptr, flags("inputs"))) {
          draw_editor_panel(ui);
          ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Variants", nullptr, flags("variants"))) {
          draw_variants_panel(ui);
          ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
        ui.select_tab.clear();
      }
    }
    ImGui::End();
  }

  place(ui, {vp->Pos.x + left_w, body_y}, {mid_w, body_h});
  draw_heatmap_panel(ui);

  // A lesson's text and question take the whole column unless there are heads to compare.
  const bool heads_shown = !ui.lesson || (st.has_trace() && st.trace().num_heads > 1);
  const float narr_h = std::round(body_h * (!heads_shown ? 1.0f : ui.lesson ? 0.7f : 0.6f));
  place(ui, {vp->Pos.x + left_w + mid_w, body_y}, {right_w, narr_h});
  if (ui.lesson)
    draw_lesson_window(ui);
  else
    draw_narration_panel(ui);
  if (heads_shown) {
    place(ui, {vp->Pos.x + left_w + mid_w, body_y + narr_h}, {right_w, body_h - narr_h});
    draw_heads_panel(ui);
  }

  draw_status_bar(ui);
  if (ui.show_seq2seq) draw_seq2seq_panel(ui);
  draw_lm_panel(ui);  // polls the model's background work even while the window is hidden
  draw_dialogs(ui);
  if (ui.show_demo) ImGui::ShowDemoWindow(&ui.show_demo);
  if (ui.show_metrics) ImGui::ShowMetricsWindow(&ui.show_metrics);
  ui.run_deferred();
  ui.reset_layout = false;
}

}  // namespace attn
