// Ctrl+C during a long run (training): the first press asks the loop to stop at the next safe point
// so that the last complete checkpoint stays intact; a second press (the default action is back)
// ends the program at once. One guard at a time restores the previous handler when it goes.
#pragma once

#include <atomic>

namespace attn::cli {

class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // Set once Ctrl+C (SIGINT) has arrived; the training loops poll it.
  const std::atomic<bool>* flag() const;
  bool interrupted() const { return flag()->load(); }

 private:
  void (*previous_)(int);
};

}  // namespace attn::cli
