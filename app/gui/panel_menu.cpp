// The main menu bar (files, examples, export, edit, view, compute backend, debug) and the status
// bar (messages, backend indicator, background work, unsaved edits).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_class.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui/window_registry.h"
#include "io/examples.h"
#include "render/colormap.h"

namespace attn {
namespace {

// Where an export goes unless the user types another path: a full path (the scenario's folder,
// else the working folder) named after the example, the stage and the head, so a slide's files
// say what they show.
std::string suggested_path(const AppState& st, const std::string& stem_suffix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir =
      st.file_path().empty() ? fs::current_path(ec) : fs::path(st.file_path()).parent_path();
  if (dir.empty()) dir = fs::current_path(ec);
  dir = fs::absolute(dir, ec);
  std::string name = st.scenario().name.empty() ? "attention" : st.scenario().name;
  for (char& c : name)
    if (c == '/' || c == ' ') c = '-';
  return (dir / (name + stem_suffix)).string();
}

std::string stage_stem(const AppState& st) {
  const StageId id =
      st.current_stage().id == StageId::kInputs ? StageId::kQ : st.current_stage().id;
  const bool heads =
      st.trace().num_heads > 1 && id != StageId::kConcat && id != StageId::kProjected;
  return "-" + std::string(stage_name(id)) + (heads ? "-h" + std::to_string(st.head()) : "");
}

}  // namespace

std::string suggested_worksheet_path(const Ui& ui) {
  const std::string scenario = suggested_path(ui.state, "-worksheet.pdf");
  if (!ui.lesson || !ui.dialogs.worksheet_lesson) return scenario;
  // The lesson's questions: named after the lesson, in the same folder.
  const std::filesystem::path lesson_file(ui.lesson->lesson().path);
  return (std::filesystem::path(scenario).parent_path() /
          (lesson_file.stem().string() + "-worksheet.pdf"))
      .string();
}

std::string suggested_lesson_html_path(const Ui& ui) {
  if (!ui.lesson) return "";
  const std::string lesson = ui.lesson->lesson().path;
  const std::string stem = std::filesystem::path(lesson).stem().string();
  return (std::filesystem::path(suggested_path(ui.state, ".html")).parent_path() /
          ((stem.empty() ? std::string("lesson") : stem) + ".html"))
      .string();
}

std::string suggested_export_path(const AppState& st, const std::string& ext) {
  return suggested_path(st, ext.empty() ? "-stages" : stage_stem(st) + "." + ext);
}

namespace {

// The built-in course, one item per lesson, then the teacher's own lessons.
void draw_lessons_menu(Ui& ui) {
  if (!ImGui::BeginMenu("Lessons")) return;
  // Listed once per Ui: the shipped files do not change while the app runs.
  if (!ui.lesson_view.course_listed) {
    ui.lesson_view.course = list_course(ui.lesson_view.course_error);
    ui.lesson_view.course_listed = true;
  }
  const std::vector<LessonInfo>& course = ui.lesson_view.course;
  const std::string& course_error = ui.lesson_view.course_error;
  if (course.empty()) ImGui::TextDisabled("%s", course_error.c_str());
  for (size_t i = 0; i < course.size(); ++i) {
    const LessonInfo& l = course[i];
    const bool current = ui.lesson && ui.lesson->lesson().path == l.path;
    const std::string label = std::to_string(i + 1) + ".  " + l.title;
    if (ImGui::MenuItem(label.c_str(), nullptr, current))
      ui.request_discard_check([&ui, path = l.path] {
        std::string error;
        if (!open_lesson(ui, path, error)) ui.state.set_message(error, true);
      });
    if (!l.summary.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.summary.c_str());
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Open lesson file…"))
    ui.request_discard_check([&ui] {
      ui.dialogs.path = PathDialog::kOpenLesson;
      ui.dialogs.buffer = ui.lesson ? ui.lesson->lesson().path : "";
    });
  if (ImGui::MenuItem("Record current view as a step…")) {
    ui.dialogs.path = PathDialog::kRecordStep;
    ui.dialogs.buffer = suggested_lesson_path(ui);
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Appends this scenario, stage, head and selection as a new step of a lesson file "
        "(created if missing); write its text and question in the file.");
  if (ImGui::MenuItem("Close lesson", nullptr, false, ui.lesson != nullptr)) close_lesson(ui);
  ImGui::EndMenu();
}

}  // namespace

namespace {

// File: open, save, export, the worksheet, quit.
void draw_file_menu(Ui& ui) {
  AppState& st = ui.state;
  if (!ImGui::BeginMenu("File")) return;
  if (ImGui::MenuItem("Open scenario…", "Ctrl+O"))
    ui.request_discard_check([&ui] {
      ui.dialogs.path = PathDialog::kOpen;
      ui.dialogs.buffer = ui.state.file_path();
    });
  if (ImGui::BeginMenu("Open example")) {
    for (const ExampleInfo& e : list_examples()) {
      if (ImGui::MenuItem(e.name.c_str(), nullptr, st.origin() == e.name))
        ui.request_discard_check([&ui, name = e.name] { ui.state.load_example(name); });
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", e.description.c_str());
    }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Open lesson…"))
    ui.request_discard_check([&ui] {
      ui.dialogs.path = PathDialog::kOpenLesson;
      ui.dialogs.buffer = ui.lesson ? ui.lesson->lesson().path : "";
    });
  if (ImGui::MenuItem("Open model folder…")) {
    ui.dialogs.path = PathDialog::kOpenModel;
    ui.dialogs.buffer = ui.lm.state && ui.lm.state->session.model()
                            ? ui.lm.state->session.model()->folder
                            : std::string();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "A GPT-2-format model: config.json, model.safetensors, vocab.json and "
        "merges.txt in one folder");
  ImGui::Separator();
  if (ImGui::MenuItem("Save", "Ctrl+S", false, true)) {
    if (st.file_path().empty()) {
      ui.dialogs.path = PathDialog::kSave;
      ui.dialogs.buffer = st.scenario().name + ".json";
    } else {
      st.save_file(st.file_path());
    }
  }
  if (ImGui::MenuItem("Save as…")) {
    ui.dialogs.path = PathDialog::kSave;
    ui.dialogs.buffer = st.file_path().empty() ? st.scenario().name + ".json" : st.file_path();
  }
  ImGui::Separator();
  // Full paths whose names say what they hold: ".../fear-is-the-weights.png", not a bare
  // "weights.png".
  if (ImGui::BeginMenu("Export this heatmap")) {
    const struct {
      PathDialog dialog;
      const char *ext, *item;
    } formats[] = {{PathDialog::kExportPng, "png", "PNG image…"},
                   {PathDialog::kExportSvg, "svg", "SVG image…"},
                   {PathDialog::kExportPdf, "pdf", "PDF document…"}};
    for (const auto& f : formats)
      if (ImGui::MenuItem(f.item)) {
        ui.dialogs.path = f.dialog;
        ui.dialogs.buffer = suggested_export_path(st, f.ext);
      }
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Export every stage")) {
    if (ImGui::MenuItem("PDF, one slide per stage…")) {
      ui.dialogs.path = PathDialog::kExportAllPdf;
      ui.dialogs.buffer = suggested_export_path(st, "") + ".pdf";
    }
    if (ImGui::MenuItem("PNG images into a folder…")) {
      ui.dialogs.path = PathDialog::kExportAllPng;
      ui.dialogs.buffer = suggested_export_path(st, "");
    }
    if (ImGui::MenuItem("SVG images into a folder…")) {
      ui.dialogs.path = PathDialog::kExportAllSvg;
      ui.dialogs.buffer = suggested_export_path(st, "");
    }
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Worksheet to print (PDF)…")) {
    ui.dialogs.path = PathDialog::kWorksheet;
    ui.dialogs.buffer = suggested_worksheet_path(ui);
  }
  if (ImGui::MenuItem("Export lesson as web page…", nullptr, false, ui.lesson != nullptr)) {
    ui.dialogs.path = PathDialog::kLessonHtml;
    ui.dialogs.buffer = suggested_lesson_html_path(ui);
  }
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", ui.lesson ? "One HTML file a student opens anywhere, offline"
                                      : "Open a lesson first (Lessons menu)");
  ImGui::Separator();
  if (ImGui::MenuItem("Quit")) ui.close_requested = true;
  ImGui::EndMenu();
}

// Edit: undo, redo, fresh or original inputs.
void draw_edit_menu(Ui& ui) {
  AppState& st = ui.state;
  if (!ImGui::BeginMenu("Edit")) return;
  if (ImGui::MenuItem("Undo", "Ctrl+Z", false, st.can_undo())) st.undo();
  if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, st.can_redo())) st.redo();
  ImGui::Separator();
  if (ImGui::MenuItem("Randomise inputs")) st.randomise(ui.editor.random_seed);
  if (ImGui::MenuItem(("Reset to " + st.origin()).c_str())) st.reset_to_origin();
  ImGui::EndMenu();
}

// View: theme, colour maps, decimals, text size, presentation, and the windows over the stepper.
void draw_view_menu(Ui& ui) {
  if (!ImGui::BeginMenu("View")) return;
  if (ImGui::MenuItem("Light theme (projectors)", nullptr, ui.settings.light_theme))
    ui.settings.light_theme = true;
  if (ImGui::MenuItem("Dark theme", nullptr, !ui.settings.light_theme))
    ui.settings.light_theme = false;
  ImGui::Separator();
  if (ImGui::BeginMenu("Colour map")) {
    for (const std::string& n : colormap_names())
      if (!is_diverging(n) && ImGui::MenuItem(n.c_str(), nullptr, ui.settings.colormap == n))
        ui.settings.colormap = n;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Colour map for signed values")) {
    for (const std::string& n : colormap_names())
      if (ImGui::MenuItem(n.c_str(), nullptr, ui.settings.signed_colormap == n))
        ui.settings.signed_colormap = n;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Decimals in cells")) {
    for (int d = 1; d <= 4; ++d)
      if (ImGui::MenuItem(std::to_string(d).c_str(), nullptr, ui.settings.decimals == d))
        ui.settings.decimals = d;
    ImGui::EndMenu();
  }
  ImGui::Separator();
  if (ImGui::MenuItem("Larger text", "Ctrl+="))
    ui.settings.font_px = std::min(ui.settings.font_px + 2.0f, 48.0f);
  if (ImGui::MenuItem("Smaller text", "Ctrl+-"))
    ui.settings.font_px = std::max(ui.settings.font_px - 2.0f, 12.0f);
  if (ImGui::MenuItem("Presentation mode", "F11", ui.presentation))
    ui.presentation = !ui.presentation;
  if (ImGui::MenuItem("Side panels in presentation", "Tab", ui.panels_shown, ui.presentation))
    ui.panels_shown = !ui.panels_shown;
  ImGui::MenuItem("Animate changes", nullptr, &ui.settings.animate);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Stage changes show what the stage does; an edit lights up what it changed");
  if (ImGui::MenuItem("Reset layout")) ui.layout.reset = true;
  draw_window_menu_items(ui, WindowMenu::kView);
  ImGui::EndMenu();
}

// Right of the menu bar: the scenario's name and the unsaved marker; in presentation mode the
// lesson's title first (its window has no title bar there), as much as fits. A model's stage names
// its model, not the example behind it.
void draw_menu_title(Ui& ui) {
  AppState& st = ui.state;
  std::string on_stage = st.scenario().name;
  if (ui.layout.model_stage == WindowId::kLm && ui.lm.state && ui.lm.state->session.model())
    on_stage = "language model " + ui.lm.state->session.model()->name;
  else if (ui.layout.model_stage == WindowId::kLm)
    on_stage = "language model";
  else if (ui.layout.model_stage == WindowId::kSeq2seq)
    on_stage = "seq2seq dates";
  else if (ui.layout.model_stage == WindowId::kLmTrain)
    on_stage = "training a transformer";
  const std::string unsaved = st.dirty() && !ui.layout.model_stage ? "  ● unsaved" : "";
  std::vector<std::string> titles;
  if (ui.presentation && ui.lesson && ui.lesson->is_open()) {
    titles.push_back("Lesson: " + ui.lesson->lesson().title + " · " + on_stage + unsaved);
    titles.push_back("Lesson: " + ui.lesson->lesson().title + unsaved);
    titles.push_back(ui.lesson->lesson().title + unsaved);
  } else {
    titles.push_back(on_stage + unsaved);
  }
  const float pad = ImGui::GetStyle().WindowPadding.x * 2;
  const float room = ImGui::GetWindowWidth() - ImGui::GetCursorPosX() - pad;
  for (const std::string& title : titles) {
    const bool last = &title == &titles.back();
    if (ImGui::CalcTextSize(title.c_str()).x > room && !last) continue;
    const std::string shown = elide_to_width(title, room);
    const float w = ImGui::CalcTextSize(shown.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowWidth() - w - pad));
    ImGui::TextDisabled("%s", shown.c_str());
    break;
  }
}

}  // namespace

void draw_menu_bar(Ui& ui) {
  if (!ImGui::BeginMainMenuBar()) return;
  draw_file_menu(ui);
  draw_lessons_menu(ui);
  draw_edit_menu(ui);
  draw_view_menu(ui);
  if (ImGui::BeginMenu("Compute")) {
    for (const std::string& b : available_backends())
      if (ImGui::MenuItem(b.c_str(), nullptr, ui.state.backend_name().rfind(b, 0) == 0))
        ui.state.set_backend(b);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    draw_window_menu_items(ui, WindowMenu::kHelp);
    ImGui::EndMenu();
  }
  // Developers only (gui --debug or ATTN_DEBUG=1): not in a student's menu bar.
  if (ui.debug_menu && ImGui::BeginMenu("Debug")) {
    draw_window_menu_items(ui, WindowMenu::kDebug);
    ImGui::EndMenu();
  }
  draw_menu_title(ui);
  ImGui::EndMainMenuBar();
}

void draw_status_bar(Ui& ui) {
  AppState& st = ui.state;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
  ImGui::SetNextWindowPos({vp->Pos.x, vp->Pos.y + vp->Size.y - h});
  ImGui::SetNextWindowSize({vp->Size.x, h});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {ImGui::GetFontSize() * 0.6f, 3});
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  if (ImGui::Begin("##status", nullptr, flags)) {
    // Backend indicator first: the teacher can see at a glance what computes the numbers.
    const std::string& b = st.backend_name();
    const bool gpu = b.rfind("cpu", 0) != 0;
    // "opencl: <device>" reads as "OpenCL · <device>".
    const std::string device =
        gpu && b.find(": ") != std::string::npos ? b.substr(b.find(": ") + 2) : "";
    ImGui::TextColored(gpu ? ImVec4(0.1f, 0.55f, 0.25f, 1) : ImVec4(0.25f, 0.4f, 0.75f, 1),
                       "%s%s%s", gpu ? "OpenCL" : "CPU", device.empty() ? "" : " · ",
                       device.c_str());
    ImGui::SameLine();
    draw_class_status(ui);
    if (st.computing()) {
      const char* spin = "|/-\\";
      ImGui::Text("  %c computing the trace… %d%%  %.1f s",
                  spin[static_cast<int>(ImGui::GetTime() * 8) % 4],
                  static_cast<int>(st.computing_progress() * 100), st.computing_seconds());
      ImGui::SameLine();
    }
    if (ui.exports.job.running()) {
      ImGui::Text("  exporting %s…", ui.exports.what.c_str());
      ImGui::SameLine();
    }
    const AttentionTrace& t = st.trace();
    char sizes[160];
    std::snprintf(sizes, sizeof sizes, "  n_q %d · n_k %d · d_k %d · d_v %d · H %d · H_kv %d  ",
                  t.n_q, t.n_k, t.d_k, t.d_v, t.num_heads, t.num_kv_heads);
    // A slide too long for the screen says so to whoever wrote the lesson (an error first).
    const bool long_step =
        ui.lesson_view.slide.on && !ui.lesson_view.slide.fits && !st.message_is_error();
    const std::string message =
        long_step ? "This step is longer than one slide at this size: its words scroll (a slide "
                    "holds about 60 words at 1280×720 with 32 px text)"
        : st.message().empty() ? ""
                               : (st.message_is_error() ? "⚠ " : "") + st.message();
    const float avail = ImGui::GetContentRegionAvail().x;
    // The sizes, unless a lesson question asks for one of them, a model's stage hides the
    // example they describe, or the message needs the room.
    if (!ui.secret.shape && !ui.layout.model_stage &&
        ImGui::CalcTextSize(sizes).x +
                std::min(ImGui::CalcTextSize(message.c_str()).x, avail * 0.5f) <=
            avail) {
      ImGui::TextDisabled("%s", sizes);
      ImGui::SameLine();
    }
    if (!message.empty()) {
      // Cut to the bar's width with "…", whole in a tooltip.
      const std::string shown = elide_to_width(message, ImGui::GetContentRegionAvail().x);
      const bool cut = shown != message;
      if (st.message_is_error())
        ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "%s", shown.c_str());
      else
        ImGui::TextUnformatted(shown.c_str());
      if (cut && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", message.c_str());
    }
  }
  ImGui::End();
  ImGui::PopStyleVar();
}

}  // namespace attn
