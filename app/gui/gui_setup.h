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

// --model, --text, --layer and --head (GuiOptions::model_head): loads the model and runs the
// text (waiting for both), opens the language-model window on that head, and with --step opens
// the head in the stepper instead (panel_lm.cpp). False with an error naming the flag.
bool setup_lm_from_options(Ui& ui, const GuiOptions& options, std::string& error);

// Whether the Debug menu (ImGui demo and metrics) shows: gui --debug, or ATTN_DEBUG set to
// anything but "" or "0" (`env` is its value, or null when unset). A student never sees it.
bool debug_menu_wanted(bool debug_flag, const char* env);

// settings.ini in the per-user config folder: theme, colour maps, font size, decimals.
std::string settings_path();
void load_settings(UiSettings& s, const std::string& path);
std::string settings_text(const UiSettings& s);

}  // namespace attn
