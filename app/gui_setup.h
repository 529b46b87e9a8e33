// Starting state of the app from its command-line options, and the persisted view settings.
#pragma once

#include <string>

#include "gui.h"
#include "ui.h"

namespace attn {

// Loads the scenario and applies --step, --head, --select, --edit, --theme, --colormap,
// --font-size. False with an error naming the flag (exit status 2).
bool setup_from_options(Ui& ui, const GuiOptions& options, std::string& error);

// settings.ini in the per-user config folder: theme, colour maps, font size, decimals.
std::string settings_path();
void load_settings(UiSettings& s, const std::string& path);
std::string settings_text(const UiSettings& s);

}  // namespace attn
