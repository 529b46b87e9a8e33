// Stop and pause for a training loop on a worker thread: the UI asks, the loop checks between
// steps and, while paused, sleeps on a condition variable until resumed or stopped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace attn::train {

class RunControl {
 public:
  // Asks the loop to stop at its next check (wakes it when paused).
  void stop();
  // Clears a stop request, for a new run; a pause request stays.
  void rearm();
  void set_paused(bool paused);
  bool stop_requested() const;
  bool paused() const;

  // Called by the loop between steps: blocks while paused; false once a stop was asked for (then
  // the loop ends).
  bool wait_while_paused();
  // Whether the loop is blocked in wait_while_paused right now: paused, and no step running.
  bool held() const;
  // Blocks until the loop is held, at most `timeout`; true when it is.
  bool wait_until_held(std::chrono::milliseconds timeout) const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool stop_ = false, pause_ = false, held_ = false;
};

}  // namespace attn::train
