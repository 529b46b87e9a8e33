// Turns GuiOptions into a starting state (scenario, step, head, selection, scripted edits,
// settings) with errors that name the flag; shared by the real window and the headless tests.
#include "gui/gui_setup.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "attention/format.h"
#include "gui/gui.h"
#include "gui/model/lesson_player.h"
#include "gui/model/stage_motion.h"
#include "gui/panel_class.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/panel_seq2seq.h"
#include "gui/window_registry.h"
#include "io/input_file.h"
#include "io/shipped.h"
#include "render/colormap.h"
#include "seq2seq/model_io.h"

namespace attn {
namespace {

bool parse_tensor(const std::string& name, Tensor& t) {
  static const std::pair<const char*, Tensor> names[] = {
      {"q", Tensor::kQ},    {"k", Tensor::kK},      {"v", Tensor::kV},
      {"x", Tensor::kX},    {"x_kv", Tensor::kXkv}, {"w_q", Tensor::kWq},
      {"w_k", Tensor::kWk}, {"w_v", Tensor::kWv},   {"w_o", Tensor::kWo}};
  for (auto& [n, v] : names)
    if (name == n) {
      t = v;
      return true;
    }
  return false;
}

}  // namespace

std::string settings_path(bool create) {
  const std::string dir = config_dir(create);
  return dir.empty() ? "" : dir + "/settings.ini";
}

void load_settings(UiSettings& s, const std::string& path) {
  // Through the one input reader: a settings.ini that is a FIFO or huge must not stop the app.
  std::string text, error;
  if (!read_input_file(path, kMaxSettingsFileBytes, text, error)) return;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    if (k == "theme") s.light_theme = v != "dark";
    if (k == "colormap" && is_colormap(v)) s.colormap = v;
    if (k == "signed_colormap" && is_colormap(v)) s.signed_colormap = v;
    if (k == "font_px") {
      float px = 0;
      if (std::sscanf(v.c_str(), "%f", &px) == 1 && px >= 12 && px <= 48) s.font_px = px;
    }
    if (k == "animate") s.animate = v != "0";
    if (k == "welcomed") s.welcomed = v == "1";
    if (k == "decimals") {
      int d = 0;
      if (std::sscanf(v.c_str(), "%d", &d) == 1 && d >= 1 && d <= 4) s.decimals = d;
    }
  }
}

std::string settings_text(const UiSettings& s) {
  std::ostringstream os;
  os << "theme=" << (s.light_theme ? "light" : "dark") << "\ncolormap=" << s.colormap
     << "\nsigned_colormap=" << s.signed_colormap << "\nfont_px=" << s.font_px
     << "\ndecimals=" << s.decimals << "\nanimate=" << (s.animate ? 1 : 0)
     << "\nwelcomed=" << (s.welcomed ? 1 : 0) << "\n";
  return os.str();
}

WindowPlacement first_window_placement(const GuiOptions& o, int area_x, int area_y, int area_w,
                                       int area_h) {
  WindowPlacement p;
  p.w = o.width;
  p.h = o.height;
  if (o.size_given || area_w <= 0 || area_h <= 0) return p;
  // The smallest window --size accepts, even on a smaller work area.
  p.w = std::max(area_w, 320);
  p.h = std::max(area_h, 240);
  p.x = area_x;
  p.y = area_y;
  p.place = true;
  return p;
}

bool debug_menu_wanted(bool debug_flag, const char* env) {
  return debug_flag || (env && *env && std::string(env) != "0");
}

namespace {

// `gui --tab NAME`: a tab of the scenario panel, a view of the rope stage (with --step rope), or
// a window of the registry and a view in it (`opened`). False with an error naming every choice.
bool apply_tab(Ui& ui, const std::string& tab, std::optional<WindowId>& opened,
               std::string& error) {
  if (tab == "inputs" || tab == "variants") {
    ui.select_tab = tab;
    return true;
  }
  const std::pair<const char*, int> rope_views[] = {
      {"rope-angles", kRopeAngles}, {"rope-turned", kRopeTurned}, {"rope-distance", kRopeDistance}};
  for (const auto& [name, view] : rope_views)
    if (tab == name) {
      ui.rope.request = view;
      return true;
    }
  std::string view;
  opened = window_for_tab(tab, view);
  if (opened) return open_window_for_tab(ui, *opened, view, error);
  error = "--tab: expected inputs, variants, rope-angles, rope-turned, rope-distance, " +
          window_tab_names() + ", got '" + tab + "'";
  return false;
}

}  // namespace

namespace {

// --model (the language model, and the example behind it), or --example / a scenario file; then
// --backend. The model and scenario errors name their flag; a backend the machine lacks sets
// exit code 1.
bool load_from_options(Ui& ui, const GuiOptions& o, std::string& error, int* exit_code) {
  AppState& st = ui.state;
  bool ok = false;
  if (!o.model.empty()) {
    if (!setup_lm_from_options(ui, o, error)) return false;
    ok = !o.step.empty() || st.load_example(o.example);
    // The status bar names the model on screen, not the example loaded behind it.
    if (ok && o.step.empty()) st.set_message(ui.lm.state->session.status(), false);
  } else {
    ok = o.scenario_file.empty() ? st.load_example(o.example) : st.load_file(o.scenario_file);
  }
  if (!ok) {
    error = st.message();
    const std::string suffix = " (kept the current scenario)";
    if (error.size() > suffix.size() &&
        error.compare(error.size() - suffix.size(), suffix.size(), suffix) == 0)
      error.erase(error.size() - suffix.size());
    // The options came from the command line: name its flag, as the other subcommands do.
    if (error.rfind("example:", 0) == 0) error += "; 'attention-lab examples' lists them";
    error = name_fields(error, {{"example", "--example"}});
    return false;
  }
  if (!o.backend.empty()) {
    if (o.backend != "cpu" && o.backend != "opencl" && o.backend != "auto") {
      error = "--backend: unknown backend '" + o.backend + "'; expected cpu, opencl or auto";
      return false;
    }
    if (!st.set_backend(o.backend)) {
      error = "--" + st.message();    // "--backend opencl: no OpenCL platform found"
      if (exit_code) *exit_code = 1;  // the machine, not the input (cli.md)
      return false;
    }
  }
  return true;
}

// --edit q:H:I:J=VALUE, each through the same validation and undo as typing into a cell.
bool apply_edits(Ui& ui, const GuiOptions& o, std::string& error) {
  AppState& st = ui.state;
  for (const std::string& e : o.edits) {
    // q:H:I:J=VALUE
    const size_t eq = e.find('=');
    Tensor t;
    int h = 0, i = 0, j = 0;
    char name[16] = {0};
    if (eq == std::string::npos ||
        std::sscanf(e.substr(0, eq).c_str(), "%15[a-z_]:%d:%d:%d", name, &h, &i, &j) != 4 ||
        !parse_tensor(name, t)) {
      error = "--edit: expected TENSOR:HEAD:ROW:COL=VALUE (e.g. q:0:1:2=0.9), got '" + e + "'";
      return false;
    }
    if (!st.set_value_text(t, h, i, j, e.substr(eq + 1))) {
      error = "--edit " + e + ": " + st.message();
      return false;
    }
  }
  return true;
}

// --step, --head, --select, --theme, --colormap, --font-size, --presentation, --no-animation and
// --transition: what is on screen.
bool apply_view_options(Ui& ui, const GuiOptions& o, std::string& error) {
  AppState& st = ui.state;
  if (!o.step.empty()) {
    const std::optional<StageId> id = stage_from_name(o.step);
    if (!id || !st.set_stage(*id)) {
      error = "--step: unknown stage '" + o.step + "' for this scenario; expected one of " +
              stage_names(st.trace(), true);
      return false;
    }
  }
  if (o.head < 0 || o.head >= st.trace().num_heads) {
    error = "--head: " + std::to_string(o.head) + " is outside 0.." +
            std::to_string(st.trace().num_heads - 1);
    return false;
  }
  st.set_head(o.head);
  if (!o.select.empty()) {
    int i = -1, j = -1;
    char extra = 0;
    const int n = std::sscanf(o.select.c_str(), "%d,%d%c", &i, &j, &extra);
    if (n < 1 || n > 2 || i < 0 || i >= st.trace().n_q ||
        (n == 2 && (j < 0 || j >= st.trace().n_k))) {
      error = "--select: expected I or I,J inside the " + std::to_string(st.trace().n_q) + " × " +
              std::to_string(st.trace().n_k) + " weights, got '" + o.select + "'";
      return false;
    }
    st.select_cell(i, n == 2 ? j : -1);
  }
  if (!o.theme.empty()) {
    if (o.theme != "light" && o.theme != "dark") {
      error = "--theme: expected light or dark, got '" + o.theme + "'";
      return false;
    }
    ui.settings.light_theme = o.theme == "light";
  }
  if (!o.colormap.empty()) {
    if (!is_colormap(o.colormap)) {
      error = "--colormap: unknown colour map '" + o.colormap + "'";
      return false;
    }
    if (is_diverging(o.colormap))
      ui.settings.signed_colormap = o.colormap;
    else
      ui.settings.colormap = o.colormap;
  }
  if (o.font_px != 0) {  // 0: not given; NaN is not 0 and fails the range, as it must
    if (!(o.font_px >= 12 && o.font_px <= 48)) {
      error = "--font-size: expected 12..48 pixels";
      return false;
    }
    ui.settings.font_px = o.font_px;
  }
  ui.presentation = o.presentation;
  ui.settings.animate = !o.no_animation && ui.settings.animate;
  if (!o.transition.empty()) {
    const size_t colon = o.transition.rfind(':');
    float p = -1;
    char extra = 0;
    const std::optional<StageId> from =
        colon == std::string::npos ? std::nullopt : stage_from_name(o.transition.substr(0, colon));
    if (!from || std::sscanf(o.transition.c_str() + colon + 1, "%f%c", &p, &extra) != 1 ||
        !(p >= 0) || p > 1 || !stage_change_animates(*from, st.current_stage().id)) {
      error =
          "--transition: expected FROM:P with FROM the stage before --step and P in 0..1, "
          "got '" +
          o.transition + "'";
      return false;
    }
    ui.motion.transition = {*from, st.current_stage().id, 0, 1, p};
    ui.motion.shown_stage = st.current_stage().id;
  }
  return true;
}

// --predict, --predict-scope and --guess: a question to the class, and its answer revealed.
bool apply_predict_options(Ui& ui, const GuiOptions& o, std::string& error) {
  AppState& st = ui.state;
  if (o.predict != "value" && o.predict != "pick") {
    error = "--predict: expected value or pick, got '" + o.predict + "'";
    return false;
  }
  ui.predict_form.kind = o.predict == "pick" ? PredictKind::kPick : PredictKind::kValue;
  const std::string& sc = o.predict_scope.empty() ? std::string("cell") : o.predict_scope;
  if (sc != "cell" && sc != "row" && sc != "stage") {
    error = "--predict-scope: expected cell, row or stage, got '" + sc + "'";
    return false;
  }
  ui.predict_form.scope = sc == "cell"  ? PredictScope::kCell
                          : sc == "row" ? PredictScope::kRow
                                        : PredictScope::kStage;
  start_prediction(ui);
  if (!ui.predict.active()) {
    error = "--predict: " + st.message();
    return false;
  }
  ui.motion.shown_stage = st.current_stage().id;
  if (!o.guess.empty()) {
    if (ui.predict_form.kind == PredictKind::kPick) {
      int j = -1;
      char extra = 0;
      if (std::sscanf(o.guess.c_str(), "%d%c", &j, &extra) != 1 || j < 0 || j >= st.trace().n_k) {
        error = "--guess: expected a key index 0.." + std::to_string(st.trace().n_k - 1) +
                ", got '" + o.guess + "'";
        return false;
      }
      ui.predict.guess_pick(j);
    } else if (!ui.predict.guess_text(o.guess, error)) {
      error = "--guess: " + error;
      return false;
    }
    reveal_prediction(ui);
  }
  return true;
}

// --seq2seq-model: checked like every other flag (a bad name or file is exit 2) and selected.
bool open_seq2seq_model(Ui& ui, const GuiOptions& o, std::string& error) {
  const std::optional<std::string> path = resolve_shipped(kSeq2seqModels, o.seq2seq_model, error);
  s2s::Model m;
  if (!path || !s2s::load_model(*path, m, error)) {
    error = "--seq2seq-model: " + error;
    return false;
  }
  ui.seq2seq.state->session.add_loaded(*path, std::move(m));
  ui.seq2seq.state->session.open_model = *path;
  return true;
}

// --class-mode: the server starts before the first frame and its address is printed.
bool start_class_from_options(Ui& ui, const GuiOptions& o, std::string& error) {
  std::string why;
  if (!start_class_mode(ui, o.class_bind, o.class_port, o.class_code, why)) {
    // A bad code is the flag's fault; a port in use or an address that is not this computer's
    // is named with the flag that chose it.
    error = why.rfind("--class-code", 0) == 0 ? why
                                              : "--class-port " + std::to_string(o.class_port) +
                                                    " / --class-bind " + o.class_bind + ": " + why;
    return false;
  }
  poll_class_mode(ui);  // the step is served from the start, before the first frame
  // Where students go, for a teacher who started the app from a terminal (and for tests that
  // ask for any free port).
  const ClassModePanel& c = *ui.class_mode.state;
  std::printf("class mode: %s\n", c.url.c_str());
  std::fflush(stdout);
  return true;
}

}  // namespace

bool setup_from_options(Ui& ui, const GuiOptions& o, std::string& error, int* exit_code) {
  if (exit_code) *exit_code = 2;
  if (!load_from_options(ui, o, error, exit_code)) return false;
  ui.state.wait_for_trace();
  if (!apply_edits(ui, o, error)) return false;
  ui.state.wait_for_trace();
  if (!apply_view_options(ui, o, error)) return false;
  const bool asks = !o.predict.empty() || !o.predict_scope.empty() || !o.guess.empty();
  if (asks && !apply_predict_options(ui, o, error)) return false;
  // A seq2seq model opens its window afresh (unless --tab just did).
  std::optional<WindowId> tab_window;
  if (!o.tab.empty() && !apply_tab(ui, o.tab, tab_window, error)) return false;
  if (!o.seq2seq_model.empty() && tab_window != WindowId::kSeq2seq &&
      !open_window_for_tab(ui, WindowId::kSeq2seq, "", error))
    return false;
  if (!o.lesson.empty()) {
    if (!open_lesson(ui, o.lesson, error)) {
      error = "--lesson: " + error;
      return false;
    }
    if (!ui.lesson->go_to(o.lesson_step - 1)) {
      error = "--lesson-step: expected 1.." + std::to_string(ui.lesson->step_count()) + ", got " +
              std::to_string(o.lesson_step);
      return false;
    }
    apply_lesson_step(ui);
  }
  if (!o.seq2seq_model.empty() && !open_seq2seq_model(ui, o, error)) return false;
  return !o.class_mode || start_class_from_options(ui, o, error);
}

}  // namespace attn
