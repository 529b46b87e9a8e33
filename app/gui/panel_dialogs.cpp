// Modal dialogs: a path for open/save/export (ImGui has no file dialog), "discard unsaved edits?"
// and "recover the last session?".
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_class.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "io/atomic_file.h"
#include "lessons/lesson_html.h"
#include "lessons/lesson_sheet.h"
#include "render/heatmap_export.h"
#include "render/worksheet.h"

#ifndef ATTN_VERSION
#define ATTN_VERSION "unknown"
#endif

namespace attn {
namespace {

// `path` ending in `ext` (any case), with it added when it does not.
std::string with_extension(const std::string& path, const std::string& ext) {
  if (path.size() >= ext.size()) {
    std::string tail = path.substr(path.size() - ext.size());
    std::transform(tail.begin(), tail.end(), tail.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (tail == ext) return path;
  }
  return path + ext;
}

// The full path the status bar names: "wrote fear-is.png" tells nobody which folder.
std::string full_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// A picture's size in the format's units: pixels for PNG and SVG; a PDF page is laid out at two
// pixels a point, so 1920 × 1080 is the usual 960 × 540 pt (13.33 × 7.5 in) 16:9 slide.
ExportSize in_units(ExportSize size, ImageFormat format) {
  if (format != ImageFormat::kPdf || size.w <= 0) return size;
  return {(size.w + 1) / 2, (size.h + 1) / 2};
}

// The size the dialog's choice gives, or an error for a custom size out of range.
std::string chosen_size(const Ui& ui, bool deck, ExportSize& size) {
  const ExportSizeChoice choice = deck ? ui.dialogs.deck_size : ui.dialogs.export_size;
  size = export_size_of(choice, ui.dialogs.export_w, ui.dialogs.export_h);
  if (choice == ExportSizeChoice::kCustom && (size.w < kMinExportSide || size.h < kMinExportSide ||
                                              size.w > kMaxExportSide || size.h > kMaxExportSide))
    return "size: " + std::to_string(size.w) + " × " + std::to_string(size.h) +
           " is out of range; each side " + std::to_string(kMinExportSide) + " to " +
           std::to_string(kMaxExportSide) + " pixels";
  return "";
}

// FILE-answers.pdf beside FILE.pdf.
std::string answers_path(const std::string& pdf) {
  return pdf.substr(0, pdf.size() - 4) + "-answers.pdf";
}

// Renders one PDF into `bytes`; false with `error` when it cannot.
using RenderPdf = std::function<bool(std::string& bytes, std::string& error)>;

// Starts the worker that writes a worksheet to `path` (.pdf added when missing) and, when the
// dialog asks for it, its key beside it as FILE-answers.pdf: both together or neither
// (io/atomic_file.h).
void start_handout_job(Ui& ui, const std::string& path, RenderPdf handout, RenderPdf answers) {
  const std::string file = with_extension(path, ".pdf");
  const std::string key = ui.dialogs.worksheet_answers ? answers_path(file) : "";
  ui.exports.what = key.empty() ? full_path(file) : full_path(file) + " and " + full_path(key);
  ui.exports.where = full_path(file);
  ui.exports.job.start(
      [handout = std::move(handout), answers = std::move(answers), file, key](JobControl&) {
        std::string error, bytes;
        AtomicOutputs files;
        const int sheet = files.add(file, error);
        if (sheet < 0 || !handout(bytes, error) || !files.write(sheet, bytes, error)) return error;
        if (!key.empty()) {
          const int answer_file = files.add(key, error);
          if (answer_file < 0 || !answers(bytes, error) || !files.write(answer_file, bytes, error))
            return error;
        }
        return files.commit(error) ? std::string() : error;
      });
}

// Writes the open lesson's questions as a worksheet (and its key) on a worker thread; the
// questions and their answers are read from each step's trace first, here.
std::string start_lesson_worksheet(Ui& ui, const std::string& path) {
  WorksheetOptions o;
  o.paper = ui.dialogs.worksheet_letter ? Paper::kLetter : Paper::kA4;
  auto built = std::make_shared<OwnedLessonSheet>();
  std::string error;
  std::optional<LessonSheet> sheet =
      lesson_sheet(ui.lesson->lesson(), built->traces, o.precision, error);
  if (!sheet) return error;
  built->sheet = std::move(*sheet);
  auto render = [built, o](bool answers) -> RenderPdf {
    return [built, o, answers](std::string& bytes, std::string& e) {
      return render_lesson_sheet(built->sheet, o, answers, bytes, e);
    };
  };
  start_handout_job(ui, path, render(false), render(true));
  return "";
}

// Writes the worksheet (and its key) for the current scenario on a worker thread.
std::string start_worksheet(Ui& ui, const std::string& path) {
  if (ui.lesson && ui.dialogs.worksheet_lesson) return start_lesson_worksheet(ui, path);
  AppState& st = ui.state;
  Scenario s = st.scenario();
  WorksheetOptions o;
  o.paper = ui.dialogs.worksheet_letter ? Paper::kLetter : Paper::kA4;
  o.head = st.head();
  if (ui.dialogs.worksheet_fresh) {
    s = with_random_inputs(s, static_cast<uint64_t>(ui.dialogs.worksheet_seed));
    o.variant = "seed " + std::to_string(ui.dialogs.worksheet_seed);
  }
  std::string error;
  auto trace = std::make_shared<AttentionTrace>();
  if (ui.dialogs.worksheet_fresh) {
    std::unique_ptr<Backend> cpu = make_backend("cpu", error);
    if (!cpu) return error;
    *trace = compute_scenario_trace(s, *cpu);
  } else {
    *trace = st.trace();  // the worker's own copy
  }
  error = check_worksheet(*trace, o);
  if (!error.empty()) return error;
  start_handout_job(
      ui, path,
      [trace, o](std::string& bytes, std::string& e) {
        return render_worksheet(*trace, o, bytes, e);
      },
      [trace, o](std::string& bytes, std::string& e) {
        const NarrateQuery narrate = [&trace, &o](int query, std::string& narrate_error) {
          ExplainRequest r;
          r.query = query;
          r.head = o.head;
          r.precision = o.precision;
          return explain(*trace, r, narrate_error);
        };
        return render_answer_key(*trace, o, narrate, bytes, e);
      });
  return "";
}

// What each path dialog is: its title, the files it lists under the field, and for an export
// its format and whether it writes every stage (a folder of pictures, or one PDF of slides).
enum class FileList { kNone, kFiles, kFolders };
struct DialogRow {
  PathDialog id;
  const char* title;
  FileList files;
  bool is_export;
  ImageFormat format;
  bool every_stage;
};
using D = PathDialog;
constexpr ImageFormat kPng = ImageFormat::kPng, kSvg = ImageFormat::kSvg, kPdf = ImageFormat::kPdf;
constexpr DialogRow kDialogs[] = {
    {D::kNone, "", FileList::kNone, false, kPng, false},
    {D::kOpen, "Open scenario", FileList::kFiles, false, kPng, false},
    {D::kSave, "Save scenario as", FileList::kFiles, false, kPng, false},
    {D::kOpenLesson, "Open lesson (a lesson file, or a built-in lesson's name)", FileList::kFiles,
     false, kPng, false},
    {D::kRecordStep, "Record the current view as a step of the lesson file", FileList::kFiles,
     false, kPng, false},
    {D::kClassResults, "Save the class's answers (CSV: step, question, answers, share right)",
     FileList::kNone, false, kPng, false},
    {D::kOpenModel,
     "Open model folder (GPT-2, Llama, Mistral or Qwen2: config.json, model.safetensors, its "
     "tokenizer)",
     FileList::kFolders, false, kPng, false},
    {D::kExportPng, "Export this heatmap as a PNG image", FileList::kNone, true, kPng, false},
    {D::kExportSvg, "Export this heatmap as an SVG image", FileList::kNone, true, kSvg, false},
    {D::kExportPdf, "Export this heatmap as a PDF document", FileList::kNone, true, kPdf, false},
    {D::kExportAllPng, "Export every stage as PNG images into the folder", FileList::kNone, true,
     kPng, true},
    {D::kExportAllSvg, "Export every stage as SVG images into the folder", FileList::kNone, true,
     kSvg, true},
    {D::kExportAllPdf, "Export every stage as PDF pages (one slide per stage)", FileList::kNone,
     true, kPdf, true},
    {D::kWorksheet, "Worksheet to print (PDF)", FileList::kNone, false, kPdf, false},
    {D::kLessonHtml, "Export the lesson as a web page (one HTML file, for any device, offline)",
     FileList::kNone, false, kPng, false},
};
static_assert(sizeof kDialogs / sizeof kDialogs[0] == static_cast<size_t>(PathDialog::kCount),
              "one row per PathDialog");
constexpr bool dialogs_in_id_order() {
  for (int i = 0; i < static_cast<int>(PathDialog::kCount); ++i)
    if (static_cast<int>(kDialogs[i].id) != i) return false;
  return true;
}
static_assert(dialogs_in_id_order(), "row i is PathDialog i");
const DialogRow& dialog_row(PathDialog d) { return kDialogs[static_cast<int>(d)]; }

// The open lesson as one self-contained web page, written on a worker (a language-model lesson
// takes about a second); "" or the error.
std::string start_lesson_html(Ui& ui, const std::string& path) {
  if (!ui.lesson) return "open a lesson first (Lessons menu)";
  const std::string file = full_path(with_extension(path, ".html"));
  ui.exports.what = "the lesson as a web page, " + file;
  ui.exports.where = file;
  ui.exports.job.start([lesson = ui.lesson->lesson(), file](JobControl&) {
    std::string error;
    LessonHtmlOptions o;
    o.app_version = ATTN_VERSION;
    return save_lesson_html(lesson, o, file, error) ? std::string() : error;
  });
  return "";
}

// Runs the dialog's action; returns "" on success or the error to show in the dialog.
std::string run_path_action(Ui& ui, PathDialog kind, const std::string& path) {
  AppState& st = ui.state;
  if (path.empty()) return "type a file name";
  if (kind == PathDialog::kOpen) return st.load_file(path) ? "" : st.message();
  if (kind == PathDialog::kOpenLesson) {
    std::string error;
    return open_lesson(ui, path, error) ? "" : error;
  }
  if (kind == PathDialog::kRecordStep) return record_lesson_step(ui, with_extension(path, ".json"));
  if (kind == PathDialog::kClassResults)
    return save_class_results(ui, with_extension(path, ".csv"));
  if (kind == PathDialog::kSave) return st.save_file(path) ? "" : st.message();
  if (kind == PathDialog::kOpenModel) {
    LmSession& session = ui.lm.get().session;
    if (!session.open(path)) return session.error();
    ui.lm.open = true;  // the window shows the load's progress and any error in the files
    return "";
  }
  if (ui.exports.job.running()) return "an export is still running; try again when it has finished";
  // Exports run on a worker with their own copy of the trace: a 1024-token stage takes a while
  // and the window must keep drawing.
  const UiSettings settings = ui.settings;
  if (kind == PathDialog::kWorksheet) return start_worksheet(ui, path);
  if (kind == PathDialog::kLessonHtml) return start_lesson_html(ui, path);
  const DialogRow& row = dialog_row(kind);
  if (!row.is_export) return "nothing to do";
  const ImageFormat format = row.format;
  const std::string ext = std::string(".") + image_format_extension(format);
  const bool deck = row.every_stage && format == ImageFormat::kPdf;
  ExportSize size;
  const std::string size_error = chosen_size(ui, deck, size);
  if (!size_error.empty()) return size_error;
  size = in_units(size, format);
  if (!row.every_stage) {
    const std::string file = full_path(with_extension(path, ext));
    HeatmapOptions o;
    const StageId id = st.current_stage().id;
    o.step = id == StageId::kInputs ? StageId::kQ : id;  // the inputs: export Q
    const TraceStep* step = st.trace().find(o.step);
    if (!step) return "nothing to export yet";
    o.head = st.head();
    o.maps = colormaps(settings);
    o.precision = settings.decimals;
    ui.exports.what = file;
    ui.exports.where = file;
    ui.exports.job.start([trace = st.trace(), o, file, format, size](JobControl&) {
      std::string error, bytes;
      const bool drawn = size.w > 0
                             ? render_heatmap_sized(trace, o, size.w, size.h, format, bytes, error)
                             : render_heatmap(trace, o, format, bytes, error);
      if (!drawn) return error;
      return write_file_atomically(file, bytes, error) ? std::string() : error;
    });
    return "";
  }
  if (deck) {
    // Every stage on its own slide-sized page of one PDF.
    const std::string file = full_path(with_extension(path, ext));
    HeatmapOptions base;
    base.maps = colormaps(settings);
    base.precision = settings.decimals;
    ui.exports.what = "every stage into " + file;
    ui.exports.where = file;
    ui.exports.job.start([trace = st.trace(), base, file, size](JobControl&) {
      std::string error, bytes;
      if (!render_stage_pages_sized(trace, base, size.w, size.h, bytes, error)) return error;
      return write_file_atomically(file, bytes, error) ? std::string() : error;
    });
    return "";
  }
  const std::string folder = full_path(path);
  ui.exports.what = "every stage into " + folder;
  ui.exports.where = folder;
  ui.exports.job.start([trace = st.trace(), settings, folder, format, size](JobControl&) {
    std::string error;
    export_all_stages(trace, settings, folder, format, error, size);
    return error;
  });
  return "";
}

// The size of the pictures or slides, under the path field of an export.
void draw_size_options(Ui& ui, bool deck) {
  ExportSizeChoice& choice = deck ? ui.dialogs.deck_size : ui.dialogs.export_size;
  int c = static_cast<int>(choice);
  if (!deck) {
    ImGui::RadioButton("Natural size", &c, static_cast<int>(ExportSizeChoice::kNatural));
    ImGui::SameLine();
  }
  ImGui::RadioButton("16:9 slide (1920×1080)", &c, static_cast<int>(ExportSizeChoice::kWide));
  ImGui::SameLine();
  ImGui::RadioButton("4:3 (1600×1200)", &c, static_cast<int>(ExportSizeChoice::kFourThree));
  ImGui::SameLine();
  ImGui::RadioButton("Custom", &c, static_cast<int>(ExportSizeChoice::kCustom));
  choice = static_cast<ExportSizeChoice>(c);
  if (choice == ExportSizeChoice::kCustom) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
    ImGui::InputInt("##export-w", &ui.dialogs.export_w, 0);
    ImGui::SameLine();
    ImGui::TextUnformatted("×");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
    ImGui::InputInt("##export-h", &ui.dialogs.export_h, 0);
    ImGui::SameLine();
    ImGui::TextUnformatted("pixels");
  }
  ImGui::PushTextWrapPos(0.0f);
  if (choice == ExportSizeChoice::kNatural)
    ImGui::TextDisabled("As large as the heatmap needs.");
  else
    ImGui::TextDisabled(
        "The heatmap fills the picture. A PDF page is laid out at two pixels a point "
        "(1920×1080: a 960×540 pt slide).");
  ImGui::PopTextWrapPos();
}

// The worksheet's choices under the path field.
void draw_worksheet_options(Ui& ui) {
  if (ui.lesson) {
    int what = ui.dialogs.worksheet_lesson ? 0 : 1;
    const int questions = ui.lesson->question_count();
    const std::string lesson_label =
        "The lesson's " + std::to_string(questions) + (questions == 1 ? " question" : " questions");
    ImGui::RadioButton(lesson_label.c_str(), &what, 0);
    ImGui::SameLine();
    ImGui::RadioButton("This scenario, by hand", &what, 1);
    if (ui.dialogs.worksheet_lesson != (what == 0)) {
      // The suggested name follows the choice unless the user typed their own.
      const bool suggested = ui.dialogs.buffer == suggested_worksheet_path(ui);
      ui.dialogs.worksheet_lesson = what == 0;
      if (suggested) ui.dialogs.buffer = suggested_worksheet_path(ui);
    }
  }
  const bool lesson = ui.lesson && ui.dialogs.worksheet_lesson;
  // The dialog has a fixed width: long lines wrap rather than widen it past the screen.
  ImGui::PushTextWrapPos(0.0f);
  if (lesson)
    ImGui::TextDisabled(
        "%s — each question with the numbers it is asked on; the key has the "
        "answers, read from each step's own trace.",
        ui.lesson->lesson().title.c_str());
  else
    ImGui::TextDisabled("Q, K, V, blank grids and questions for the current head, by hand.");
  ImGui::PopTextWrapPos();
  int paper = ui.dialogs.worksheet_letter ? 1 : 0;
  ImGui::RadioButton("A4", &paper, 0);
  ImGui::SameLine();
  ImGui::RadioButton("US Letter", &paper, 1);
  ui.dialogs.worksheet_letter = paper == 1;
  const std::string key_label =
      "Answer key too: " +
      std::filesystem::path(answers_path(with_extension(ui.dialogs.buffer, ".pdf")))
          .filename()
          .string();
  ImGui::Checkbox(key_label.c_str(), &ui.dialogs.worksheet_answers);
  if (lesson) return;  // a lesson's questions quote its own numbers: no fresh seed
  ImGui::Checkbox("Fresh numbers from seed", &ui.dialogs.worksheet_fresh);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  ImGui::BeginDisabled(!ui.dialogs.worksheet_fresh);
  if (ImGui::InputInt("##seed", &ui.dialogs.worksheet_seed))
    ui.dialogs.worksheet_seed = std::max(0, ui.dialogs.worksheet_seed);
  ImGui::EndDisabled();
  ImGui::SameLine();
  help_marker(
      "Every seed gives its own one-decimal Q, K and V with the same shapes and mask, so each "
      "student can work their own numbers. The seed is printed on the sheet and its key.");
}

// ImGui has no file dialog: list the folders and scenario files beside the typed path, so a
// click fills the field (and a folder opens).
void draw_file_list(Ui& ui, bool folders_only) {
  namespace fs = std::filesystem;
  fs::path typed(ui.dialogs.buffer.empty() ? "." : ui.dialogs.buffer);
  std::error_code ec;
  fs::path dir = fs::is_directory(typed, ec) ? typed : typed.parent_path();
  if (dir.empty()) dir = ".";
  std::vector<std::pair<std::string, bool>> entries;  // name, is folder
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end && entries.size() < 500;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    const bool folder = it->is_directory(ec);
    if (folder || (!folders_only && it->path().extension() == ".json"))
      entries.push_back({name, folder});
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second : a.first < b.first;
  });
  // The folder by its full name: "in ." tells nobody where the files are.
  fs::path shown = fs::absolute(dir, ec).lexically_normal();
  if (ec || shown.empty()) shown = dir;
  std::string where = shown.string();
  if (where.size() > 1 && where.back() == '/') where.pop_back();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("in %s", where.c_str());
  ImGui::PopStyleColor();
  ImGui::BeginChild("files", {0, ImGui::GetFontSize() * 10}, true);
  if (ImGui::Selectable("../")) ui.dialogs.buffer = (dir / "..").lexically_normal().string() + "/";
  for (const auto& [name, folder] : entries) {
    if (ImGui::Selectable((name + (folder ? "/" : "")).c_str()))
      ui.dialogs.buffer = (dir / name).string() + (folder ? "/" : "");
  }
  ImGui::EndChild();
}

}  // namespace

void poll_export(Ui& ui) {
  std::optional<JobResult<std::string>> done = ui.exports.job.poll();
  if (!done) return;
  const std::string error = done->ok() ? *done->value : done->error;
  if (error.empty()) {
    ui.exports.written = ui.exports.where;
    ui.state.set_message("Exported " + ui.exports.what, false);
  } else {
    ui.state.set_message("export: " + error, true);
  }
}

void draw_dialogs(Ui& ui) {
  AppState& st = ui.state;
  poll_export(ui);
  std::string& dialog_error = ui.dialogs.error;
  PathDialog& open_kind = ui.dialogs.open_kind;
  const ImVec2 center = ImGui::GetMainViewport()->GetCenter();

  if (ui.dialogs.path != PathDialog::kNone && open_kind == PathDialog::kNone) {
    open_kind = ui.dialogs.path;
    dialog_error.clear();
    ImGui::OpenPopup("Path###path-dialog");
  }
  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({ImGui::GetFontSize() * 32, 0});
  // The title says what the dialog does; the ID after ### stays the same for every kind.
  const DialogRow& row = dialog_row(open_kind);
  const std::string dialog_title = std::string(row.title) + "###path-dialog";
  if (ImGui::BeginPopupModal(dialog_title.c_str(), nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::SetNextItemWidth(-1);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter =
        ImGui::InputText("##path", &ui.dialogs.buffer, ImGuiInputTextFlags_EnterReturnsTrue);
    if (row.files != FileList::kNone) draw_file_list(ui, row.files == FileList::kFolders);
    if (open_kind == PathDialog::kWorksheet) draw_worksheet_options(ui);
    if (open_kind == PathDialog::kLessonHtml) {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled(
          "Every step with its figure and question, checked in the page: a student opens it in "
          "any browser, on a phone too, with no internet. The answers are in the file (it is for "
          "self-study; class mode collects answers).");
      ImGui::PopTextWrapPos();
    }
    if (row.is_export) draw_size_options(ui, row.every_stage && row.format == ImageFormat::kPdf);
    if (!dialog_error.empty()) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 31);
      ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "%s", dialog_error.c_str());
      ImGui::PopTextWrapPos();
    }
    bool close = false;
    if (ImGui::Button("OK", {ImGui::GetFontSize() * 6, 0}) || enter) {
      dialog_error = run_path_action(ui, open_kind, ui.dialogs.buffer);
      close = dialog_error.empty();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel", {ImGui::GetFontSize() * 6, 0}) ||
        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
      close = true;
    if (close) {
      ImGui::CloseCurrentPopup();
      ui.dialogs.path = PathDialog::kNone;
      open_kind = PathDialog::kNone;
    }
    ImGui::EndPopup();
  }

  if (ui.dialogs.ask_discard) {
    ImGui::OpenPopup("Unsaved edits###discard");
    ui.dialogs.ask_discard = false;
  }
  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, {0.5f, 0.5f});
  if (ImGui::BeginPopupModal("Unsaved edits###discard", nullptr,
                             ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("The scenario \"%s\" has unsaved edits.", st.scenario().name.c_str());
    ImGui::TextDisabled("They are kept in the recovery file until you discard them.");
    const float bw = ImGui::GetFontSize() * 7;
    if (ImGui::Button("Save…", {bw, 0})) {
      ui.dialogs.path = PathDialog::kSave;
      ui.dialogs.buffer = st.file_path().empty() ? st.scenario().name + ".json" : st.file_path();
      ui.dialogs.after_discard = nullptr;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard", {bw, 0})) {
      st.discard_recovery();
      auto action = std::move(ui.dialogs.after_discard);
      ui.dialogs.after_discard = nullptr;
      ImGui::CloseCurrentPopup();
      if (action) action();
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel", {bw, 0})) {
      ui.dialogs.after_discard = nullptr;
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }

  if (ui.dialogs.ask_recovery) {
    ImGui::OpenPopup("Recover###recovery");
    ui.dialogs.ask_recovery = false;
  }
  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, {0.5f, 0.5f});
  if (ImGui::BeginPopupModal("Recover###recovery", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextUnformatted("The last session ended with unsaved edits.");
    ImGui::TextDisabled("%s", st.recovery_path.c_str());
    const float bw = ImGui::GetFontSize() * 7;
    if (ImGui::Button("Restore", {bw, 0})) {
      st.restore_recovery();
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button("Discard", {bw, 0})) {
      st.discard_recovery();
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace attn
