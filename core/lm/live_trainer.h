// Training a transformer in the background for the app's "train live" view: a worker thread runs
// lm::train_lm while the UI polls snapshots — the loss of every step, the figures of every
// interval (every head's induction and previous-token scores), the attention of every head on a
// fixed repeated sequence redrawn as it learns, and the phase change once it is found — with pause,
// resume and cancel. No GUI code: the panel only draws.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lm/trainer.h"
#include "train/live_run.h"

namespace attn::lm {

struct LiveSetup {
  DataKind data = DataKind::kInduction;
  int stories = 600, merges = 300;  // text: stories written by the grammar (lm/stories.h)
  TrainOptions train;
  // Called on the worker after every step with the steps done (the app: none). A test throws
  // from it to see the run end with a message.
  std::function<void(long step)> after_step;
};

// The sizes the app trains with by default: a 2-layer attention-only model with two heads per
// layer and a context of 64 on the induction task, with repeats of (T+1)/10 to 3(T+1)/8 letters;
// a previous-token head and an induction head form, and the in-context accuracy jumps, within
// 5000 steps.
LiveSetup default_live_setup();

// running, paused, finished, cancelled and error come from train::RunStatus.
struct LiveSnapshot : train::RunStatus {
  long step = 0, steps = 0;
  std::vector<float> step_loss;    // the batch loss of every step so far
  std::vector<EvalPoint> history;  // the figures at every interval
  PhaseChange phase;               // from history
  Config config;
  // The fixed repeated sequence (the first repeat probe) and every head's attention on it at the
  // last interval: (L, NH, T, T), row-major.
  std::vector<std::string> probe_tokens;
  std::string probe_text;  // the same sequence as text (decoded), for the sentence field
  std::vector<float> probe_att;
  long probe_serial = 0;  // changes whenever probe_att is redrawn
};

class LiveTrainer {
 public:
  LiveTrainer() = default;
  ~LiveTrainer();
  LiveTrainer(const LiveTrainer&) = delete;
  LiveTrainer& operator=(const LiveTrainer&) = delete;

  // Starts a new run (cancelling any previous one). False with `error` for options that cannot
  // train.
  bool start(const LiveSetup& setup, std::string& error);
  void set_paused(bool paused);
  void cancel();  // stops at the next step; blocks until the worker ends
  LiveSnapshot snapshot() const;
  // The model at the last interval (null before the first).
  std::shared_ptr<const Model> model() const;
  const LiveSetup& setup() const { return setup_; }
  // Stop and pause as the worker sees them (tests wait until it holds).
  const train::RunControl& control() const { return run_.control(); }

 private:
  LiveSetup setup_;
  mutable std::mutex model_mutex_;
  std::shared_ptr<const Model> model_;
  train::LiveRun<LiveSnapshot> run_;  // last: its worker stops before the members it uses go
};

}  // namespace attn::lm
