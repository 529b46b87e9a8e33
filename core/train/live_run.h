// A training run on a worker thread that the UI watches through snapshots: start, stop, pause,
// and whatever the training throws caught at the thread's edge into the snapshot's error, so a
// failed run is a message in the panel, never the end of the program.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

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
    worker_ = std::thread([this, body = std::move(body)] {
      RunEnd end;
      // Everything is caught here: an exception leaving a thread would call std::terminate.
      try {
        end = body(control_);
      } catch (const std::exception& e) {
        end.error = e.what();
        if (end.error.empty()) end.error = "unknown error";
      } catch (...) {
        end.error = "unknown error";
      }
      std::lock_guard<std::mutex> lock(mutex_);
      snap_.running = false;
      snap_.error = end.error;
      snap_.finished = end.error.empty() && end.finished;
      snap_.cancelled = end.error.empty() && !end.finished;
    });
  }
  // Stops the run at the body's next check and waits for the worker.
  void stop() {
    control_.stop();
    if (worker_.joinable()) worker_.join();
  }
  void set_paused(bool paused) {
    control_.set_paused(paused);
    update([paused](Snapshot& s) { s.paused = paused; });
  }
  Snapshot snapshot() const {
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
  mutable std::mutex mutex_;
  Snapshot snap_;
  RunControl control_;
  std::thread worker_;
};

}  // namespace attn::train
