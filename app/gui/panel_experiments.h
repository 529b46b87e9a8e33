// The state of the experiment windows (panel_scores.cpp: additive vs dot-product scores timed;
// panel_sqrt_dk.cpp: why divide by √d_k), shared with the tests that drive them.
#pragma once

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/score_compare.h"
#include "explain/scaling_experiment.h"

namespace attn {

// The score-function timings: measured case by case on a worker thread; `rows` grows as they
// finish. Destroying it cancels and joins the worker.
struct ScoreComparePanel {
  std::mutex mutex;
  std::vector<ScoreTiming> rows;  // measured so far
  std::atomic<bool> running{false}, cancel{false};
  std::thread worker;

  ~ScoreComparePanel() {
    cancel = true;
    if (worker.joinable()) worker.join();
  }
  // Measures default_score_cases() from scratch on the worker (no-op while one runs).
  void start() {
    if (running) return;
    if (worker.joinable()) worker.join();
    {
      std::lock_guard<std::mutex> lock(mutex);
      rows.clear();
    }
    cancel = false;
    running = true;
    worker = std::thread([this] {
      for (const ScoreCompareCase& c : default_score_cases()) {
        const ScoreTiming t = time_score_functions(c, 3, 16, &cancel);
        if (cancel) break;
        std::lock_guard<std::mutex> lock(mutex);
        rows.push_back(t);
      }
      running = false;
    });
  }
};

// The √d_k experiment: the chosen d_k (index into scaling_dims()), the seed, and the rows
// computed for `computed_seed` (on a worker: `job`).
struct SqrtDkPanel {
  int dim_index = 5;  // d_k = 64
  int seed = 1, computed_seed = -1;
  std::vector<ScalingRow> rows;
  std::future<std::vector<ScalingRow>> job;
};

}  // namespace attn
