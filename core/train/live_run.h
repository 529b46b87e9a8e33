// A training run on a worker (a BackgroundJob) that the UI watches through snapshots: start, stop,
// pause, and whatever the training throws caught at the thread's edge into the snapshot's error, so
// a failed run is a message in the panel, never the end of the program.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include "train/background_job.h"
#include "train/run_control.h"

namespace attn::train {

// What every snapshot of a live run says about the run itself.
struct RunStatus {
  bool running = false, paused = false, finished = false, cancelled = false;
  std::string error;  // why the run failed ("" unless it did)
};

// How a run's body ended: it did all its steps, or it was stopped; or it failed with `error`.
struct RunEnd {
  bool finished = false;
  std::string error;
};

// Snapshot: what the UI reads, a type derived from RunStatus; the body fills the rest through
// update().
template <typename Snapshot>
class LiveRun {
 public:
  LiveRun() = default;
  ~LiveRun() { stop(); }
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  // Stops any run in progress, then runs `body` on a worker with `first` as the snapshot (marked
  // running). The body checks control.wait_while_paused() between steps.
  void start(Snapshot first, std::function<RunEnd(RunControl&)> body) {
    stop();
    control_.rearm();
    first.running = true;
    first.paused = control_.paused();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      snap_ = std::move(first);
    }
    std::lock_guard<std::mutex> lock(job_mutex_);
    job_.start([this, body = std::move(body)](JobControl&) { return body(control_); });
  }
  // Stops the run at the body's next check and waits for the worker.
  void stop() {
    control_.stop();
    std::lock_guard<std::mutex> lock(job_mutex_);
    job_.wait();
    collect();
  }
  void set_paused(bool paused) {
    control_.set_paused(paused);
    update([paused](Snapshot& s) { s.paused = paused; });
  }
  // What the UI shows; once the body has ended, its end (or the message of what it threw).
  Snapshot snapshot() const {
    {
      std::lock_guard<std::mutex> lock(job_mutex_);
      collect();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return snap_;
  }
  // Calls f(snapshot) under the snapshot's lock (the body reporting a step).
  template <typename F>
  void update(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    f(snap_);
  }
  const RunControl& control() const { return control_; }

 private:
  // Folds the finished body's end into the snapshot; the job caught anything it threw. Called
  // with job_mutex_ held (then mutex_ is taken: always in that order).
  void collect() const {
    auto r = job_.poll();
    if (!r) return;
    const RunEnd end = r->ok() ? *r->value : RunEnd{false, r->error};
    std::lock_guard<std::mutex> lock(mutex_);
    snap_.running = false;
    snap_.error = end.error;
    snap_.finished = end.error.empty() && end.finished;
    snap_.cancelled = end.error.empty() && !end.finished;
  }

  mutable std::mutex job_mutex_;  // job_: any thread may ask for a snapshot
  mutable std::mutex mutex_;      // snap_: the body reports while the UI reads
  mutable Snapshot snap_;
  RunControl control_;
  mutable BackgroundJob<RunEnd> job_;  // last: its worker stops before the members it uses go
};

}  // namespace attn::train
