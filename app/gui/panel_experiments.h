// The state of the experiment windows (panel_scores.cpp: additive vs dot-product scores timed;
// panel_sqrt_dk.cpp: why divide by √d_k), shared with the tests that drive them.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/score_compare.h"
#include "explain/scaling_experiment.h"
#include "train/background_job.h"

namespace attn {

// The score-function timings: measured case by case on a worker; `rows` grows as they finish.
// Destroying it cancels and joins the worker.
struct ScoreComparePanel {
  std::mutex mutex;
  std::vector<ScoreTiming> rows;  // measured so far
  BackgroundJob<int> job;         // the number of cases measured
  std::string error;              // why the last measuring failed

  bool running() const { return job.running(); }
  // Measures default_score_cases() from scratch on the worker (no-op while one runs).
  void start() {
    if (job.running()) return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      rows.clear();
    }
    error.clear();
    job.start([this](JobControl& control) {
      const std::vector<ScoreCompareCase> cases = default_score_cases();
      int measured = 0;
      for (const ScoreCompareCase& c : cases) {
        const ScoreTiming t = time_score_functions(c, 3, 16, control.cancel_flag());
        if (control.cancelled()) break;
        std::lock_guard<std::mutex> lock(mutex);
        rows.push_back(t);
        control.set_progress(static_cast<double>(++measured) / static_cast<double>(cases.size()));
      }
      return measured;
    });
  }
  // Picks up the finished worker; returns its failure once ("" when none).
  std::string poll() {
    std::optional<JobResult<int>> done = job.poll();
    if (!done || done->ok() || done->cancelled) return "";
    error = "Measuring the score functions failed: " + done->error;
    return error;
  }
};

// The √d_k experiment: the chosen d_k (index into scaling_dims()), the seed, and the rows
// computed for `computed_seed` (on a worker: `job`; `error` when it failed).
struct SqrtDkPanel {
  int dim_index = 5;  // d_k = 64
  int seed = 1, computed_seed = -1;
  std::vector<ScalingRow> rows;
  BackgroundJob<std::vector<ScalingRow>> job;
  std::string error;
};

}  // namespace attn
