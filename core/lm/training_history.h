// A run's figures over its steps, read back from the training.json that `lm train` writes beside
// the model (lm/trainer.h): what `lm curve` draws as loss curves.
#pragma once

#include <string>
#include <vector>

namespace attn::lm {

struct TrainingHistory {
  std::string command;  // the `lm train` command that made the run
  std::vector<int> steps;
  std::vector<double> train_loss;
  // The held-out loss at each step: on the held-out text (--eval-corpus) when every point has it,
  // else on the trainer's own held-out batch.
  std::vector<double> heldout_loss;
  bool heldout_is_corpus = false;
};

// Reads FOLDER/training.json. False with an error naming the file and what is wrong: missing,
// not JSON, no history, a point without a step or a finite training loss, steps not increasing.
bool read_training_history(const std::string& folder, TrainingHistory& out, std::string& error);
// The same for training.json's text, read from `path` (named in the errors).
bool parse_training_history(const std::string& text, const std::string& path, TrainingHistory& out,
                            std::string& error);

}  // namespace attn::lm
