// State of the "Train a transformer" window (panel_lm_train.cpp), kept in Ui::lm_train: the
// background trainer, the options the student picks, and what the window shows. Tests read and set
// it.
#pragma once

#include <string>

#include "gui/ui.h"
#include "lm/live_trainer.h"

namespace attn {

struct LmTrainPanel {
  lm::LiveTrainer live;
  lm::LiveSetup setup = lm::default_live_setup();
  int data = 0;  // 0 the induction task, 1 stories
  std::string error, status;
  std::string reported_failure;  // the run's failure already put in the status bar
  bool autostart = false;        // press Train on the first frame (gui --tab lm-train)
  // Close the settings (their header still sums them up) at the next frame: set when training
  // starts, so the curves and heatmaps get the room.
  bool collapse_settings = false;
  std::string save_folder = "trained-induction";
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
