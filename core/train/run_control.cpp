// Stop and pause for training loops (see run_control.h).
#include "train/run_control.h"

namespace attn::train {

void RunControl::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_ = true;
  changed_.notify_all();
}

void RunControl::rearm() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_ = false;
}

void RunControl::set_paused(bool paused) {
  std::lock_guard<std::mutex> lock(mutex_);
  pause_ = paused;
  changed_.notify_all();
}

bool RunControl::stop_requested() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_;
}

bool RunControl::paused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pause_;
}

bool RunControl::wait_while_paused() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (pause_ && !stop_) {
    held_ = true;
    changed_.notify_all();  // wait_until_held sees it
    changed_.wait(lock, [this] { return !pause_ || stop_; });
    held_ = false;
  }
  return !stop_;
}

bool RunControl::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

bool RunControl::wait_until_held(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, timeout, [this] { return held_; });
}

}  // namespace attn::train
