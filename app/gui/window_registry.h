// The registry of windows over the stepper: one row per window (window_id.h), in drawing order.
// The menus, `gui --tab`, Ui::busy()/training(), the model stages and the frame loop are derived
// from it. To add a window, see app/gui/README.md.
#pragma once

#include <optional>
#include <string>

#include "gui/ui.h"
#include "gui/window_id.h"

namespace attn {

enum class WindowMenu { kView, kHelp, kDebug };

struct WindowRow {
  WindowId id;
  // Its name: `gui --tab NAME` opens it, and a model stage is called by it ("lm", "seq2seq").
  const char* name;
  WindowMenu menu;
  const char* menu_label;
  bool separator_before;  // a line above its menu entry (a group of its own)
  // A model's window: open, it takes the stepper's room as the stage (model/layout.h).
  bool model_stage;
  WindowFlags& (*flags)(Ui&);  // its slot in Ui (the state lives beside the flags)
  void (*draw)(Ui&);           // while it is open
  // Every frame, open or not (a model loading behind a closed window still lands); null: a
  // closed window runs nothing, and its busy and training are cleared.
  void (*poll)(Ui&);
  // The menu entry: null toggles `open` with a check mark; otherwise it opens the window its own
  // way (the tour from its first page, class mode's join screen) and `checked` marks it.
  void (*menu_open)(Ui&);
  bool (*checked)(const Ui&);
  // `gui --tab NAME-SUB` names a view inside the window: the SUBs it has ("" for none), and
  // what opening on one does (null: only opens). Returns false with `error`.
  const char* views;
  bool (*open_on)(Ui&, const std::string& view, std::string& error);
};

// Every row, in drawing order; window(id) is row `id`.
const WindowRow* window_rows();
constexpr int kWindowCount = static_cast<int>(WindowId::kCount);
const WindowRow& window(WindowId id);
WindowFlags& window_flags(Ui& ui, WindowId id);
const WindowFlags& window_flags(const Ui& ui, WindowId id);
bool window_open(const Ui& ui, WindowId id);

// The window `gui --tab` names (NAME or NAME-VIEW), and the view ("" for none); nullopt when no
// window has that name.
std::optional<WindowId> window_for_tab(const std::string& tab, std::string& view);
// Opens the window for `gui --tab` (and the view in it); false with an error naming what was
// wrong.
bool open_window_for_tab(Ui& ui, WindowId id, const std::string& view, std::string& error);
// Every `--tab` name the windows answer to, comma separated (for the error message).
std::string window_tab_names();

// The menu entries of `menu`, in table order.
void draw_window_menu_items(Ui& ui, WindowMenu menu);
// Polls every window and draws the open ones (draw_app, after the stepper's panels).
void draw_windows(Ui& ui);
// The model window that is the stage this frame (the first open one), or none.
std::optional<WindowId> model_stage_window(const Ui& ui);

}  // namespace attn
