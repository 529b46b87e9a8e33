// Entry point of the desktop app, called by the `gui` subcommand and by a bare `attention-lab`.
#pragma once

#include <string>

namespace attn {

struct GuiOptions {
  std::string example = "fear-is-the";
  std::string scenario_file;  // overrides example when set
  std::string step;           // initial step id, e.g. "weights"
  int width = 1600, height = 1000;
  std::string screenshot;  // when set: render `frames` frames, save a PNG, exit
  int frames = 5;
};

// Returns the process exit code (0 ok, 1 runtime failure such as no display, 2 bad input).
int run_gui(const GuiOptions& options);

}  // namespace attn
