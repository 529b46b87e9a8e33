// Training and evaluation of the date models: seeded mini-batches, gradients computed on
// `threads` shards of each batch and summed in shard order (deterministic for a given seed and
// thread count), Adam, held-out exact-match accuracy per epoch and by input length.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "seq2seq/dates.h"
#include "seq2seq/model_io.h"
#include "train/run_control.h"

namespace attn::s2s {

// The held-out set every command evaluates on (its dates never occur in training).
constexpr uint64_t kHeldOutSeed = 20261122;
std::vector<DateExample> heldout_dates(int count, int min_length = 1, int max_length = 200);

struct TrainOptions {
  int epochs = 10;
  int batch = 32;
  int train_size = 20000;
  int heldout_size = 1000;
  double lr = 3e-3;
  uint64_t seed = 1;
  int threads = 1;
  int min_length = 1, max_length = 200;  // input lengths of the training set
};

struct EpochStats {
  int epoch = 0;                // 1-based
  double loss = 0;              // mean cross-entropy per output character over the epoch
  double heldout_accuracy = 0;  // exact match, 0..1
  double seconds = 0;
};

struct TrainCallbacks {
  // After every batch: epoch (1-based), batch index (0-based), batch count, batch loss, and the
  // model as it is now (on the training thread, between updates).
  std::function<void(int, int, int, double, const Model&)> on_batch;
  // After every complete epoch, with the model as it is at that point (write checkpoints here).
  std::function<void(const EpochStats&, const Model&)> on_epoch;
  // Checked between batches: when set, training stops and the epoch in progress is dropped.
  // A flag, so a signal handler can set it (the command line's Ctrl+C).
  const std::atomic<bool>* stop = nullptr;
  // Checked between batches: a stop ends training as `stop` does; while paused, training waits
  // on it (the app's pause button).
  train::RunControl* control = nullptr;
};

// Trains `model` in place. Returns the number of complete epochs (fewer than asked when
// stopped); on error (e.g. impossible length bounds) returns -1 with `error` set. When stopped
// mid-epoch, `model` is restored to the last complete epoch.
int train_model(Model& model, const TrainOptions& options, const TrainCallbacks& callbacks,
                std::string& error);

// Mean loss per output character and gradient (same scale) of one batch, on `threads` shards.
double batch_gradient(const Model& model, const Batch& batch, int threads, Params<float>& grad);

// Greedy translations of many inputs; an input the model's alphabet cannot encode (or an empty
// one) gives "".
std::vector<std::string> predict(const Model& model, const std::vector<std::string>& inputs,
                                 int threads = 1);

// Whether the model's alphabets can read and write the dates of the task (every character of
// default_input_vocab() and default_output_vocab(), none twice); evaluating a model that cannot
// would only measure its alphabet. Error names the missing character.
bool check_date_alphabets(const Model& model, std::string& error);

// Exact-match accuracy by input-length bucket; the last row is "all".
struct LengthBucket {
  std::string label;
  int lo = 0, hi = 0;  // inclusive input-length range
  int count = 0, correct = 0;
  double accuracy() const { return count ? static_cast<double>(correct) / count : 0.0; }
};
std::vector<LengthBucket> accuracy_by_length(const Model& model,
                                             const std::vector<DateExample>& data, int threads = 1);

// One input through the model with the full trace (B = 1). Returns false with an error naming the
// character when the input is not in the model's alphabet or is empty/too long.
bool translate(const Model& model, const std::string& input, ForwardCache<float>& trace,
               std::string& output, std::string& error, int max_steps = 16);

}  // namespace attn::s2s
