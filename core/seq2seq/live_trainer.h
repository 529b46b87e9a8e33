// Training in the background for the app's "train live" mode: a worker thread trains a small
// model while the UI polls snapshots (loss curve, held-out accuracy, and the alignment of a fixed
// example redrawn as it learns), with pause and cancel. No GUI code: the panel only draws.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seq2seq/trainer.h"

namespace attn::s2s {

struct LiveTrainingSetup {
  Score score = Score::kBahdanau;
  int hidden = 32, embed = 16, window = 8;
  uint64_t seed = 1;
  TrainOptions train;  // epochs, batch, train_size, threads, …
  std::string example = "sunday the 22nd of november, 2026";
  int redraw_every = 10;  // batches between alignment snapshots
};

struct LiveSnapshot {
  std::vector<float> batch_loss;      // one entry per batch so far
  std::vector<float> epoch_accuracy;  // held-out exact match after each epoch
  int epoch = 0, batch = 0, batches = 0;
  std::string output;         // the example's translation at the last redraw
  Mat<float> alignment;       // (output steps, input length) at the last redraw
  long alignment_serial = 0;  // changes whenever the alignment is redrawn
  bool running = false, paused = false, finished = false, cancelled = false;
  std::string error;
};

class LiveTrainer {
 public:
  LiveTrainer() = default;
  ~LiveTrainer();
  LiveTrainer(const LiveTrainer&) = delete;
  LiveTrainer& operator=(const LiveTrainer&) = delete;

  // Starts a new run (cancelling any previous one). Returns false with `error` when the example
  // is not in the alphabet.
  bool start(const LiveTrainingSetup& setup, std::string& error);
  void set_paused(bool paused);
  void cancel();  // stops at the next batch; blocks until the worker ends
  LiveSnapshot snapshot() const;
  // A copy of the model after the last complete epoch (empty params before the first).
  Model model() const;

 private:
  void redraw(const Model& m);
  LiveTrainingSetup setup_;
  std::thread worker_;
  std::atomic<bool> stop_{false}, pause_{false};
  mutable std::mutex mutex_;
  LiveSnapshot snap_;
  Model model_;
};

}  // namespace attn::s2s
