// A work loop over every hardware thread, for the engine's independent (head, block of rows)
// items: the staged path uses both cores of a small machine the way the fused path does. A caller
// (the app recomputing after an edit) can watch its progress and cancel it.
#pragma once

#include <atomic>
#include <functional>

namespace attn {

// Progress and cancellation of the parallel_items loops run on a thread while a WorkScope for it
// is alive: `done` of `total` items so far; setting `cancel` stops the loops at their next item.
struct WorkControl {
  std::atomic<bool> cancel{false};
  std::atomic<long long> done{0}, total{0};
  double fraction() const {
    const long long t = total.load();
    return t > 0 ? static_cast<double>(done.load()) / static_cast<double>(t) : 0.0;
  }
};

// Thrown by parallel_items (on the calling thread) when its WorkControl was cancelled.
struct WorkCancelled {};

// Makes `control` the WorkControl of the parallel_items loops this thread runs until the scope
// ends.
class WorkScope {
 public:
  explicit WorkScope(WorkControl* control);
  ~WorkScope();
  WorkScope(const WorkScope&) = delete;
  WorkScope& operator=(const WorkScope&) = delete;

 private:
  WorkControl* previous_;
};

// Calls item(k) for every k in [0, count), spread over min(threads, count) threads (threads <= 0:
// every hardware thread); items are handed out in order, one at a time, so uneven items even
// out. The first exception an item throws stops the hand-out and is rethrown here after every
// thread has finished; a cancelled WorkControl throws WorkCancelled the same way.
void parallel_items(int count, const std::function<void(int)>& item, int threads = 0);

}  // namespace attn
