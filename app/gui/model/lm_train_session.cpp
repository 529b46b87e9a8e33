// The "Train a transformer" window's model (see lm_train_session.h).
#include "gui/model/lm_train_session.h"

#include "attention/format.h"
#include "io/atomic_file.h"
#include "lm/model.h"
#include "lm/trainer.h"

namespace attn {

void LmTrainSession::choose_task(Task task) {
  task_ = task;
  setup.data = task == kInduction ? lm::DataKind::kInduction : lm::DataKind::kText;
  setup.train.attention_only = task == kInduction;
  save_folder = task == kInduction ? "trained-induction" : "trained-stories";
}

bool LmTrainSession::start() {
  live.set_paused(false);
  error.clear();
  if (live.start(setup, error)) return true;
  error = "Cannot train: " + name_fields(error, {{"n_layer", "layers"},
                                                 {"n_head", "heads"},
                                                 {"n_embd", "width"},
                                                 {"lr", "learning rate"}});
  return false;
}

bool LmTrainSession::save(const lm::LiveSnapshot& s) {
  const auto model = live.model();
  if (!model || s.history.empty()) {
    error = "Not saved: no model has been trained yet";
    return false;
  }
  const long step = s.history.back().step;
  const std::string cmd = "trained in the app (Train a transformer window)";
  std::string why;
  if (!lm::save_model(*model, save_folder, why) ||
      !write_file_atomically(save_folder + "/training.json",
                             lm::training_json(cmd, model->config, step, s.steps, s.history),
                             why)) {
    error = "Not saved: " + why;
    return false;
  }
  status = "Saved the model after step " + std::to_string(step) + " to " + save_folder + ".";
  error.clear();
  return true;
}

std::optional<std::string> LmTrainSession::new_failure(const lm::LiveSnapshot& s) {
  if (s.error.empty()) {
    reported_failure_.clear();
    return std::nullopt;
  }
  if (s.error == reported_failure_) return std::nullopt;
  reported_failure_ = s.error;
  return s.error;
}

}  // namespace attn
