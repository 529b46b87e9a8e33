// State of the "Train a transformer" window (panel_lm_train.cpp), kept in Ui::lm_train: its
// session (gui/model/lm_train_session.h: the background trainer, the options the student picks,
// saving) and what only the window's drawing needs. Tests read and set it.
#pragma once

#include <string>

#include "gui/model/lm_train_session.h"
#include "gui/ui.h"

namespace attn {

struct LmTrainPanel {
  LmTrainSession session;
  bool autostart = false;  // press Train on the first frame (gui --tab lm-train)
  // Close the settings (their header still sums them up) at the next frame: set when training
  // starts, so the curves and heatmaps get the room.
  bool collapse_settings = false;
  bool show_save = false;
  bool open_requested = false;  // "Open in the model view", handled after the window is drawn
  Matrix probe_weights[2];      // the two heads the window draws, from the last snapshot
};

// The window; draws nothing unless Ui::lm_train.open.
void draw_lm_train_panel(Ui& ui);
// Opens the model trained so far in the language-model window on the fixed repeated sentence,
// on the induction-circuit tab.
void open_trained_model(Ui& ui);

}  // namespace attn
