// The "Train a transformer" window's model, with no ImGui (panel_lm_train.cpp draws it): the live
// trainer, the task and options the student picks, starting a run with an error that names the
// window's controls, saving the model trained so far, and what the window reports.
#pragma once

#include <optional>
#include <string>

#include "lm/live_trainer.h"

namespace attn {

class LmTrainSession {
 public:
  enum Task { kInduction = 0, kStories = 1 };

  lm::LiveTrainer live;
  lm::LiveSetup setup = lm::default_live_setup();
  std::string save_folder = "trained-induction";
  std::string error, status;  // the window's last error (red) and status (grey)

  Task task() const { return task_; }
  // The induction task (letters, attention-only) or short stories (with an MLP, which they need
  // to say anything); the save folder's default follows.
  void choose_task(Task task);
  // Starts a run with `setup` (unpaused). False with `error` naming the window's controls
  // ("layers", "learning rate") where the trainer names its options' fields.
  bool start();
  // Writes the model trained so far (snapshot `s`'s last step) to save_folder: the model folder
  // and its training.json. Sets status, or error and false.
  bool save(const lm::LiveSnapshot& s);
  // The run's failure when it is new since the last call (the window puts it in the status bar
  // once), else nothing.
  std::optional<std::string> new_failure(const lm::LiveSnapshot& s);

 private:
  Task task_ = kInduction;
  std::string reported_failure_;
};

}  // namespace attn
