// One frame of the app: lays the panels out over the window, routes keyboard shortcuts, and holds
// the small helpers panels share (help markers, colour scales, export of every stage).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attention/format.h"
#include "gui/model/layout.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_class.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/ui.h"
#include "gui/window_registry.h"
#include "io/atomic_file.h"
#include "render/heatmap_export.h"

namespace attn {

void Ui::request_discard_check(std::function<void()> action) {
  if (!state.dirty()) {
    action();
    return;
  }
  dialogs.after_discard = std::move(action);
  dialogs.ask_discard = true;
}

void Ui::run_deferred() {
  std::vector<std::function<void()>> now;
  now.swap(deferred);
  for (auto& f : now) f();
}

namespace {

// ImGui 1.86 reserves 4 vertices per byte of a text it draws, and one draw of more than 65,536
// vertices aborts ("too many vertices in ImDrawList using 16-bit indices"): a text the helpers
// draw or measure is cut to this many bytes first (docs/robustness.md). Lessons bound their own
// strings well below it (core/lessons/lesson.h); this holds for any other text as well.
constexpr size_t kMaxDrawnTextBytes = 8000;

// The length of the character that starts at s[k] (1 for a stray continuation byte).
size_t char_length(const std::string& s, size_t k) {
  size_t n = 1;
  while (k + n < s.size() && (static_cast<unsigned char>(s[k + n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

std::string elide_to_width(const std::string& text, float width) {
  if (text.size() <= kMaxDrawnTextBytes && ImGui::CalcTextSize(text.c_str()).x <= width)
    return text;
  // The longest prefix of whole characters that fits with "…": found by bisection over the
  // character boundaries, so a long text costs O(n log n), not a measure per character.
  std::vector<size_t> ends{0};  // byte length after each character
  for (size_t k = 0; k < text.size() && k < kMaxDrawnTextBytes;) {
    k += char_length(text, k);
    ends.push_back(k);
  }
  size_t lo = 0, hi = ends.size() - 1;  // ends[lo] fits (0 always does); find the largest
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (ImGui::CalcTextSize((text.substr(0, ends[mid]) + "…").c_str()).x <= width)
      lo = mid;
    else
      hi = mid - 1;
  }
  return text.substr(0, ends[lo]) + "…";
}

float item_content_bottom() {
  return ImGui::GetItemRectMax().y - ImGui::GetWindowPos().y + ImGui::GetScrollY();
}

std::string formula_for_wrapping(const std::string& formula, bool inside_brackets) {
  std::string out;
  int depth = 0;  // inside brackets a comma separates arguments, not formulas: no break there
  for (size_t i = 0; i < formula.size(); ++i) {
    const char c = formula[i];
    depth += c == '(' || c == '[' || c == '{' ? 1 : c == ')' || c == ']' || c == '}' ? -1 : 0;
    const bool run =
        (i > 0 && formula[i - 1] == ' ') || (i + 1 < formula.size() && formula[i + 1] == ' ');
    const bool after_break =
        depth <= 0 && i > 0 && (formula[i - 1] == ',' || formula[i - 1] == ';');
    // Before a binary operator outside brackets ("a × b", "x = y"): the line may end at "a" and
    // the next begin with "× b". Relations such as ≤ stay with both sides.
    bool before_operator = false;
    if (c == ' ' && (depth <= 0 || inside_brackets))
      for (const char* op : {"=", "×", "+", "−", "-", "÷", "·", "≈"}) {
        const size_t n = std::strlen(op);
        if (formula.compare(i + 1, n, op) == 0 && i + 1 + n < formula.size() &&
            formula[i + 1 + n] == ' ')
          before_operator = true;
      }
    if (c == ' ' && !run && !after_break && !before_operator)
      out += "\xc2\xa0";
    else
      out += c;
  }
  return out;
}

std::string formula_fitting(const std::string& formula, float width) {
  const std::string strict = formula_for_wrapping(formula);
  for (size_t a = 0; a <= strict.size();) {
    size_t b = strict.find(' ', a);
    if (b == std::string::npos) b = strict.size();
    if (ImGui::CalcTextSize(strict.c_str() + a, strict.c_str() + b).x > width)
      return formula_for_wrapping(formula, true);
    a = b + 1;
  }
  return strict;
}

std::vector<std::string> wrapped_lines(const std::string& full, float width) {
  const std::string text = clip_utf8(full, kMaxDrawnTextBytes);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string paragraph = text.substr(start, end - start);
    std::string line;
    size_t k = 0;
    while (k <= paragraph.size()) {
      size_t sp = paragraph.find(' ', k);
      if (sp == std::string::npos) sp = paragraph.size();
      const std::string word = paragraph.substr(k, sp - k);
      const std::string longer = line.empty() ? word : line + " " + word;
      if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
        lines.push_back(line);
        line = word;
      } else {
        line = longer;
      }
      k = sp + 1;
    }
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

void text_wrapped_at_spaces(const std::string& full, std::vector<float>* line_bottoms) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4);
  for (const std::string& line : wrapped_lines(full, width)) {
    ImGui::TextUnformatted(line.c_str());
    if (line_bottoms) line_bottoms->push_back(item_content_bottom());
  }
}

float wrapped_height(const std::string& text, float width, ImFont* font) {
  if (font) ImGui::PushFont(font);
  const float w = std::max(width, ImGui::GetFontSize() * 4);
  const float h = static_cast<float>(wrapped_lines(text, w).size()) *
                  (ImGui::GetFontSize() + ImGui::GetStyle().ItemSpacing.y);
  if (font) ImGui::PopFont();
  return h;
}

void text_disabled_wrapped(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  text_wrapped_at_spaces(text);
  ImGui::PopStyleColor();
}

void help_marker(const char* text) {
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28.0f);
    ImGui::TextUnformatted(clip_utf8(text, kMaxDrawnTextBytes).c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

ImGuiWindowFlags place_as_stage(const Ui& ui, WindowId which) {
  if (ui.layout.model_stage != which || ui.layout.stage_rect.z <= 0) return 0;
  ImGui::SetNextWindowPos({ui.layout.stage_rect.x, ui.layout.stage_rect.y}, ImGuiCond_Always);
  ImGui::SetNextWindowSize({ui.layout.stage_rect.z, ui.layout.stage_rect.w}, ImGuiCond_Always);
  // On a slide the lesson's column says what the stage is and moves it on: its title bar would
  // only take a line from the figure (and its close button the end of the title).
  return ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
         (ui.lesson_view.slide.on ? ImGuiWindowFlags_NoTitleBar : 0);
}

void place_beside_lesson(const Ui& ui, bool& pending) {
  if (!pending || ui.lesson_view.rect.z <= 0) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float x0 = vp->Pos.x, y0 = ui.lesson_view.rect.y;
  ImGui::SetNextWindowPos({x0, y0}, ImGuiCond_Always);
  ImGui::SetNextWindowSize({std::max(320.0f, ui.lesson_view.rect.x - x0), ui.lesson_view.rect.w},
                           ImGuiCond_Always);
  ImGui::SetNextWindowFocus();
  pending = false;
}

bool fits_on_line(float width) {
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  return ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + width <= right;
}

void same_line_if_fits(float width) {
  if (fits_on_line(width)) ImGui::SameLine();
}

float radio_width(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label).x;
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
}

bool slider_float_beside(const char* id, const char* label, float* v, float lo, float hi,
                         const char* format, float width, ImGuiSliderFlags flags) {
  ImGui::SetNextItemWidth(width);
  const bool changed = ImGui::SliderFloat(id, v, lo, hi, "", flags | ImGuiSliderFlags_AlwaysClamp);
  char value[48];
  std::snprintf(value, sizeof value, format, *v);
  const std::string text = std::string(label) + value;
  same_line_if_fits(ImGui::CalcTextSize(text.c_str()).x);
  ImGui::TextUnformatted(text.c_str());
  return changed;
}

bool slider_int_beside(const char* id, const char* label, int* v, int lo, int hi, float width) {
  ImGui::SetNextItemWidth(width);
  const bool changed = ImGui::SliderInt(id, v, lo, hi, "", ImGuiSliderFlags_AlwaysClamp);
  const std::string text = std::string(label) + std::to_string(*v);
  same_line_if_fits(ImGui::CalcTextSize(text.c_str()).x);
  ImGui::TextUnformatted(text.c_str());
  return changed;
}

ColormapChoice colormaps(const UiSettings& s) { return {s.colormap, s.signed_colormap}; }

ColorScale color_scale_for(const UiSettings& s, StageId step, const Matrix& m) {
  return attn::color_scale_for(step, m, colormaps(s));
}

const ColorScale& color_scale_cached(Ui& ui, const std::string& key, StageId step, const Matrix& m,
                                     uint64_t serial) {
  if (serial == 0) serial = ui.state.trace_serial();
  CachedColorScale& e = ui.color_scales[key];
  const ColormapChoice maps = colormaps(ui.settings);
  if (e.serial != serial || e.step != step || e.rows != m.rows() || e.cols != m.cols() ||
      e.maps.sequential != maps.sequential || e.maps.diverging != maps.diverging) {
    e = {serial, step, maps, m.rows(), m.cols(), color_scale_for(ui.settings, step, m)};
  }
  return e.scale;
}

ExportSize export_size_of(ExportSizeChoice choice, int w, int h) {
  switch (choice) {
    case ExportSizeChoice::kNatural:
      return {};
    case ExportSizeChoice::kWide:
      return {1920, 1080};
    case ExportSizeChoice::kFourThree:
      return {1600, 1200};
    case ExportSizeChoice::kCustom:
      return {w, h};
  }
  return {};
}

int export_all_stages(const AttentionTrace& trace, const UiSettings& s, const std::string& folder,
                      ImageFormat format, std::string& error, ExportSize size) {
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
    const bool drawn =
        size.w > 0 ? render_heatmap_sized(trace, c.options, size.w, size.h, format, bytes, error)
                   : render_heatmap(trace, c.options, format, bytes, error);
    if (index < 0 || !drawn || !files.write(index, bytes, error)) return 0;
  }
  const int count = static_cast<int>(files.size());
  return files.commit(error) ? count : 0;
}

namespace {

bool key_pressed(int key) { return ImGui::IsKeyPressed(key, false); }
bool named_key_pressed(ImGuiKey k, bool repeat = false) {
  return ImGui::IsKeyPressed(ImGui::GetKeyIndex(k), repeat);
}

// Places the next window at `r`: always when the layout changed (F11, Ctrl+=, a resize, another
// stage strip height), else only the first time, so a panel the user moved stays put until then.
void place(bool relayout, const LayoutRect& r) {
  const ImGuiCond cond = relayout ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos({r.x, r.y}, cond);
  ImGui::SetNextWindowSize({r.w, r.h}, cond);
}

std::string signature(const PanelLayout& L) {
  std::string s = L.tabbed ? "T" : "W";
  char buf[64];
  for (const LayoutRect* r : {&L.pipeline, &L.scenario, &L.heatmap, &L.narration, &L.heads}) {
    std::snprintf(buf, sizeof buf, "|%d,%.0f,%.0f,%.0f,%.0f", r->shown ? 1 : 0, r->x, r->y, r->w,
                  r->h);
    s += buf;
  }
  return s;
}

// The scenario panel's two tabs, or the same two among the tabbed column's.
bool tab(Ui& ui, const char* label, const char* id) {
  const ImGuiTabItemFlags f =
      ui.select_tab == id ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  return ImGui::BeginTabItem(label, nullptr, f);
}

}  // namespace

WidgetContext widgets(Ui& ui) {
  WidgetContext c;
  c.light_theme = ui.settings.light_theme;
  c.decimals = ui.settings.decimals;
  c.cell_font = ui.fonts.cells;
  c.renderer = ui.renderer;
  c.views = &ui.views;
  c.text_log = ui.probes.text_log;
  c.trace_serial = ui.state.trace_serial();
  return c;
}

bool Ui::working() const { return busy() || state.computing() || exports.job.running(); }

bool Ui::wants_frames() const {
  return frames_wanted > 0 || state.playing || working() || motion.transition.active(now) ||
         motion.changes.active(now);
}

float Ui::font_px(float window_w, float window_h) const {
  return presentation ? presentation_font(settings.font_px, window_w, window_h) : settings.font_px;
}

void start_prediction(Ui& ui, int row, int col) {
  AppState& st = ui.state;
  if (!st.has_trace()) return;
  StageId stage = st.current_stage().id;
  if (stage == StageId::kInputs) {  // the inputs are given: predict the first thing computed
    st.set_stage(StageId::kScores);
    stage = StageId::kScores;
  }
  PredictKind kind = ui.predict_form.kind;
  if (!stage_supports(stage, kind)) kind = PredictKind::kValue;
  const TraceStep* step = st.trace().find(stage);
  const int index = step && step->num_heads() == 1 ? 0 : st.head();
  const Selection sel = st.selection();
  const bool attention = is_query_key(stage);
  if (row < 0) {  // the selection: a cell of an attention stage, else its row
    row = sel.query;
    col = attention ? sel.key : -1;
  }
  std::string why;
  if (!ui.predict.start(st.trace(), stage, index, row, col, kind, ui.predict_form.scope, why)) {
    st.set_message(why, true);
    return;
  }
  ui.predict_form.buffer.clear();
  ui.predict_form.error.clear();
  st.playing = false;
  st.clear_selection();  // the narration of a selected cell would give the answer away
}

void reveal_prediction(Ui& ui) {
  AppState& st = ui.state;
  Prediction& p = ui.predict;
  p.reveal(st.trace(), ui.settings.decimals);
  const PredictQuestion& q = p.question();
  if (is_query_key(q.stage) && q.kind == PredictKind::kValue)
    st.select_cell(q.row, q.col);
  else
    st.select_row(q.row);
}

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
      ui.dialogs.path = PathDialog::kSave;
      ui.dialogs.buffer = st.scenario().name + ".json";
    } else {
      st.save_file(st.file_path());
    }
  }
  if (io.KeyCtrl && key_pressed(kKeyO)) {
    ui.request_discard_check([&ui] {
      ui.dialogs.path = PathDialog::kOpen;
      ui.dialogs.buffer = ui.state.file_path();
    });
  }
  if (io.KeyCtrl || io.KeyAlt) return;
  lesson_shortcuts(ui);
  if (named_key_pressed(ImGuiKey_Tab) && ui.presentation) ui.panels_shown = !ui.panels_shown;
  if (key_pressed(kKeyP) && !ui.predict.active()) start_prediction(ui);
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
  if (named_key_pressed(ImGuiKey_Escape)) {
    // One step back at a time: an open question, then the selection, then presentation mode.
    if (ui.predict.active())
      ui.predict.cancel();
    else if (st.selection().active())
      st.clear_selection();
    else if (ui.presentation)
      ui.presentation = false;
  }
}

namespace {

// The width a slide's figure needs for its labels and numbers to be read at the back of the
// room (cells for 16 px numbers, a label column, the colour bar), at most 70 % of the window.
float figure_min_width(const Ui& ui, float window_w) {
  const float fs = ImGui::GetFontSize();
  if (ui.layout.model_stage) return window_w * 0.42f;  // a model's views: most of half
  const AppState& st = ui.state;
  if (!st.has_trace()) return 0;
  const AttentionTrace& t = st.trace();
  const StageId id = st.current_stage().id;
  const float cell = 16.0f * 3;  // "0.77" at 16 px and the cell's margins
  float w = 0;
  if (id == StageId::kInputs)
    w = static_cast<float>(t.d_k * 2 + t.d_v) * cell + fs * 7;  // Q, K, V; Q's and K's labels
  else
    w = static_cast<float>(t.head(id, std::min(st.head(), t.step(id).num_heads() - 1)).cols()) *
            cell +
        fs * 6;
  return std::min(w, window_w * 0.7f);
}

}  // namespace

namespace {

// The scenario's two tabs, Inputs and Variants: in the scenario panel, or among the tabbed
// column's in a narrow window.
void draw_scenario_tabs(Ui& ui) {
  if (tab(ui, "Inputs", "inputs")) {
    draw_editor_panel(ui);
    ImGui::EndTabItem();
  }
  if (tab(ui, "Variants", "variants")) {
    draw_variants_panel(ui);
    ImGui::EndTabItem();
  }
}

// The scenario panel left of the heatmap: its Inputs and Variants tabs.
void draw_scenario_panel(Ui& ui, bool relayout, const LayoutRect& r) {
  place(relayout, r);
  if (ImGui::Begin("Scenario###scenario", nullptr, ImGuiWindowFlags_NoCollapse)) {
    if (ImGui::BeginTabBar("left-tabs")) {
      draw_scenario_tabs(ui);
      ImGui::EndTabBar();
      ui.select_tab.clear();
    }
  }
  ImGui::End();
}

// The column beside the figure: the lesson or the narration, with the heads under it; or, when the
// window is too narrow for three columns, one column of tabs.
void draw_side_column(Ui& ui, bool relayout, const PanelLayout& L) {
  AppState& st = ui.state;
  if (L.tabbed) {
    // One column of tabs beside the heatmap: the window is too narrow for three columns.
    place(relayout, L.narration);
    // Its scrollbar always shows: tabs whose content height depends on the width (wrapped text,
    // thumbnails) would otherwise make it come and go every other frame.
    if (ImGui::Begin("Panels###side", nullptr,
                     ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_AlwaysVerticalScrollbar)) {
      if (ImGui::BeginTabBar("side-tabs")) {
        if (ui.lesson &&
            ImGui::BeginTabItem(lesson_tab_label(ui).c_str(), nullptr,
                                ui.lesson_view.select_tab ? ImGuiTabItemFlags_SetSelected
                                                          : ImGuiTabItemFlags_None)) {
          draw_lesson_contents(ui);
          ImGui::EndTabItem();
        }
        ui.lesson_view.select_tab = false;
        if (tab(ui, ui.predict.active() ? "Predict" : "Narration", "narration")) {
          draw_narration_contents(ui);
          ImGui::EndTabItem();
        }
        if (st.has_trace() && st.trace().num_heads > 1 && tab(ui, "Heads", "heads")) {
          draw_heads_contents(ui);
          ImGui::EndTabItem();
        }
        draw_scenario_tabs(ui);
        ImGui::EndTabBar();
        ui.select_tab.clear();
      }
    }
    ImGui::End();
  } else if (L.narration.shown) {
    place(relayout, L.narration);
    if (ui.lesson)
      draw_lesson_window(ui);
    else
      draw_narration_panel(ui);
    if (L.heads.shown) {
      place(relayout, L.heads);
      draw_heads_panel(ui);
    }
  }
}

}  // namespace

bool status_has_news(const Ui& ui) {
  const AppState& st = ui.state;
  return (!st.message().empty() && st.message_is_error()) || st.computing() ||
         ui.exports.job.running() || class_mode_on(ui);
}

void draw_app(Ui& ui) {
  AppState& st = ui.state;
  ui.now = ImGui::GetTime();
  if (ui.lesson) ui.settings.welcomed = true;  // the first-start hint pointed there: done
  handle_shortcuts(ui);
  draw_menu_bar(ui);

  // What moves: a stage change starts its animation; an edit lights up the cells it changed; a
  // question about a stage the class has left is dropped.
  const std::optional<StageId> stage =
      st.has_trace() ? std::optional<StageId>(st.current_stage().id) : std::nullopt;
  if (stage != ui.motion.shown_stage) {
    const std::optional<StageId> from = ui.motion.shown_stage;
    if (ui.settings.animate && from && stage && stage_change_animates(*from, *stage))
      ui.motion.transition = {*from, *stage, ui.now, stage_change_seconds(*from, *stage)};
    else
      ui.motion.transition = {};
    ui.motion.shown_stage = stage;
  }
  if (ui.predict.active() && ui.predict.question().stage != stage) ui.predict.cancel();
  ui.secret = ui.lesson && ui.lesson->is_open() && st.has_trace() ? ui.lesson->secret(st.trace())
                                                                  : QuestionSecret{};
  if (st.has_trace())
    ui.motion.changes.update(st.trace(), st.trace_serial(),
                             ui.settings.animate && st.load_serial() == ui.motion.loads_seen,
                             ui.now);
  ui.motion.loads_seen = st.load_serial();

  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float fs = ImGui::GetFontSize();
  LayoutInput in;
  in.x = vp->Pos.x;
  in.y = vp->Pos.y;
  in.width = vp->Size.x;
  in.height = vp->Size.y;
  in.font = fs;
  // From Pos, not WorkPos: the menu bar reserves its height only from the next frame on, and the
  // first frame is the one that places the windows.
  in.menu_h = ImGui::GetFrameHeight();
  in.status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
  in.pipeline_h = ui.layout.pipeline_h > 0 ? ui.layout.pipeline_h : std::round(fs * 5.2f);
  in.heads_h =
      ui.layout.heads_h > 0 ? ui.layout.heads_h : std::round(fs * 7);  // until the panel measures
  // A lesson's text and question take the whole column unless there are heads to compare.
  if (ui.lesson && !(st.has_trace() && st.trace().num_heads > 1)) in.heads_h = 0;
  in.lesson = ui.lesson && ui.lesson->is_open();
  in.presentation = ui.presentation;
  in.panels_shown = ui.panels_shown;
  // A model window open is a stage of its own: it takes the stepper's room (strip, scenario and
  // heatmap) and a lesson's column stays beside it, from the top; with no lesson open it takes the
  // whole body. Closing it brings the stepper back.
  ui.layout.model_stage = model_stage_window(ui);
  const bool stepper = !ui.layout.model_stage;
  if (!stepper) in.pipeline_h = 0;
  in.model_stage = !stepper;
  if (in.presentation && !in.panels_shown && in.lesson) {
    // A slide: the column is as wide as the step's words need, the figure keeps what it needs to
    // be read, and the status bar steps aside unless it has something to say.
    in.lesson_height = [&ui](float w) { return lesson_slide_height(ui, w); };
    in.figure_min_w = figure_min_width(ui, in.width);
    if (!status_has_news(ui)) in.status_h = 0;
  }
  PanelLayout L = compute_layout(in);
  if (L.slide && !L.slide_fits && in.status_h == 0) {
    // Too long for a slide: the status bar comes back to say so (panel_menu.cpp).
    in.status_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y;
    L = compute_layout(in);
    L.slide_fits = false;
  }
  ui.lesson_view.slide.on = L.slide;
  ui.lesson_view.slide.fits = L.slide_fits;
  ui.layout.status_shown = in.status_h > 0;
  const std::string sig = signature(L);
  const bool relayout = ui.layout.reset || sig != ui.layout.applied;
  ui.layout.applied = sig;

  {
    const float x0 = L.scenario.shown ? L.scenario.x : L.heatmap.x;
    ui.layout.stage_rect = {x0, L.pipeline.y, L.heatmap.right() - x0,
                            L.heatmap.bottom() - L.pipeline.y};
  }
  if (stepper) {
    place(relayout, L.pipeline);
    draw_pipeline_panel(ui);
  }

  if (L.scenario.shown && stepper) draw_scenario_panel(ui, relayout, L.scenario);
  if (stepper) {
    place(relayout, L.heatmap);
    draw_heatmap_panel(ui);
  }

  draw_side_column(ui, relayout, L);
  if (ui.layout.status_shown) draw_status_bar(ui);
  draw_windows(ui);
  draw_dialogs(ui);
  ui.run_deferred();
  ui.layout.reset = false;
}

}  // namespace attn
