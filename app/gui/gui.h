// Entry point of the desktop app, called by the `gui` subcommand and by a bare `attention-lab`.
#pragma once

#include <string>
#include <vector>

namespace attn {

struct GuiOptions {
  std::string example = "fear-is-the";
  std::string scenario_file;  // overrides example when set
  std::string step;           // initial step id, e.g. "weights"
  // The window's size: --size when given (size_given), else the monitor's work area, and this
  // size only when the work area is unknown (first_window_placement, gui_setup.h).
  int width = 1600, height = 1000;
  bool size_given = false;
  std::string screenshot;  // when set: render `frames` frames, save a PNG, exit
  int frames = 5;
  // Scripted starting state, for screenshots and demonstrations (the same calls the UI makes).
  int head = 0;
  std::string select;              // "I" (query row) or "I,J" (cell)
  std::string theme;               // "light" or "dark"; "" = the saved setting
  std::string colormap;            // sequential colour map; "" = the saved setting
  float font_px = 0;               // 0 = the saved setting
  std::vector<std::string> edits;  // "q[H][I][J]=VALUE" style cell edits, see cli --help
  bool frame_stats = false;        // print mean/max frame time when exiting
  bool animate = false;            // zoom and pan the main heatmap every frame (measurement)
  // With frame_stats: make this many edits (q[0][0][0] ± 0.25, one after the other's result is
  // drawn) and print how long each took to show its recomputed stages (measurement).
  int edit_stats = 0;
  bool presentation = false;  // start in presentation mode (full screen, larger text)
  std::string tab;      // left panel tab ("inputs", "variants") or a window ("seq2seq", "lm-…")
  std::string backend;  // "cpu", "opencl" or "auto"; "" = cpu
  // A GPT-2-format model (folder or shipped name): opens the language-model window on `text`
  // with head (layer, model_head) picked; with `step` too, that head opens in the stepper.
  std::string model, text;
  int layer = 0, model_head = 0;
  bool debug = false;         // the Debug menu (ImGui demo and metrics windows)
  bool no_animation = false;  // stage changes and edits do not animate
  std::string predict;        // start with a question: "value" or "pick" (with --step, --select)
  std::string predict_scope;  // "cell", "row" or "stage"
  std::string guess;          // a guess to type in (and reveal) for screenshots
  std::string transition;     // "FROM:P": the stage change into --step, held at progress P
  // A seq2seq model (file or shipped name, io/shipped.h): opens the seq2seq window on it.
  std::string seq2seq_model;
  // A lesson (file or built-in name, `attention-lab lessons`) opened on step `lesson_step`
  // (1-based); its view replaces --example/--step/--select.
  std::string lesson;
  int lesson_step = 1;
  // Class mode (cli.md, "Class mode"): the server students' browsers answer through, on
  // class_bind:class_port (0: any free port) with the session code class_code ("" = random).
  bool class_mode = false;
  int class_port = 8765;
  std::string class_bind = "0.0.0.0";
  std::string class_code;
};

// Returns the process exit code (0 ok, 1 runtime failure such as no display, 2 bad input).
int run_gui(const GuiOptions& options);

}  // namespace attn
