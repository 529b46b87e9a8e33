// Training in the background for the app's "train live" mode: a worker thread trains a small
// model while the UI polls snapshots (loss curve, held-out accuracy, and the alignment of a fixed
// example redrawn as it learns), with pause and cancel. No GUI code: the panel only draws.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "seq2seq/trainer.h"
#include "train/live_run.h"

namespace attn::s2s {

struct LiveTrainingSetup {
  Score score = Score::kBahdanau;
  int hidden = 32, embed = 16, window = 8;
  uint64_t seed = 1;
  TrainOptions train;  // epochs, batch, train_size, threads, …
  std::string example = "sunday the 22nd of november, 2026";
  int redraw_every = 10;  // batches between alignment snapshots
  // Called on the worker after every batch with the epoch and batch index (the app: none). A
  // test throws from it to see the run end with a message.
  std::function<void(int epoch, int batch)> after_batch;
};

// running, paused, finished, cancelled and error come from train::RunStatus.
struct LiveSnapshot : train::RunStatus {
  std::vector<float> batch_loss;      // one entry per batch so far
  std::vector<float> epoch_accuracy;  // held-out exact match after each epoch
  int epoch = 0, batch = 0, batches = 0;
  std::string output;         // the example's translation at the last redraw
  Mat<float> alignment;       // (output steps, input length) at the last redraw
  long alignment_serial = 0;  // changes whenever the alignment is redrawn
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
  // Stop and pause as the worker sees them (tests wait until it holds).
  const train::RunControl& control() const { return run_.control(); }

 private:
  void redraw(const Model& m);
  LiveTrainingSetup setup_;
  mutable std::mutex model_mutex_;
  Model model_;
  train::LiveRun<LiveSnapshot> run_;  // last: its worker stops before the members it uses go
};

}  // namespace attn::s2s
