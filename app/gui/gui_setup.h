// Starting state of the app from its command-line options, and the persisted view settings.
#pragma once

#include <string>

#include "gui/gui.h"
#include "gui/ui.h"

namespace attn {

// Loads the scenario and applies --step, --head, --select, --edit, --theme, --colormap,
// --font-size, --backend. False with an error naming the flag and the exit status to use (2 for
// bad input, 1 when the machine cannot, e.g. no OpenCL platform).
bool setup_from_options(Ui& ui, const GuiOptions& options, std::string& error,
                        int* exit_code = nullptr);

// Whether the Debug menu (ImGui demo and metrics) shows: gui --debug, or ATTN_DEBUG set to
// anything but "" or "0" (`env` is its value, or null when unset). A student never sees it.
bool debug_menu_wanted(bool debug_flag, const char* env);

// Where the window opens: --size when given; else the monitor's work area (the screen less its
// panels and docks, glfwGetMonitorWorkarea), so the menu bar, the narration and the status bar
// all show on a 1280 × 720 projector; else (no work area known) the default size. `place`: move
// the window to (x, y).
struct WindowPlacement {
  int x = 0, y = 0, w = 0, h = 0;
  bool place = false;
};
WindowPlacement first_window_placement(const GuiOptions& o, int area_x, int area_y, int area_w,
                                       int area_h);

// settings.ini in the per-user config folder: theme, colour maps, font size, decimals, and
// whether the first-start hint has done its work (UiSettings::welcomed). "" when there is no
// config folder; `create` makes the folder (saving) or not (reading).
std::string settings_path(bool create);
void load_settings(UiSettings& s, const std::string& path);
std::string settings_text(const UiSettings& s);

}  // namespace attn
