// The one worker pool of core (design.md): every parallel loop — the engine's (head, block of
// rows) items, the fused CPU path, the trainers' shards, the language model's forward pass, the
// bench — runs its threads through run_workers, which joins them all and carries the first
// exception a worker throws back to the caller (a throw on any thread is an error, never a
// terminate). A caller (the app recomputing after an edit) can watch progress and cancel.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>

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

// `requested` threads, or every hardware thread for 0 or less.
inline int thread_count(int requested) {
  return requested > 0 ? requested
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs body(worker, stop) on `workers` threads at once, the calling thread being worker 0, and
// returns when all have finished. When one throws, `stop` turns true (long bodies may check it
// and end early) and the first exception is rethrown here; the others' are dropped.
void run_workers(int workers, const std::function<void(int, const std::atomic<bool>&)>& body);

// The number of shards run_shards splits `rows` into: `threads`, at least 1 and at most `rows`.
inline int shard_count(int rows, int threads) { return std::max(1, std::min(threads, rows)); }

// Runs fn(shard, first_row, end_row) on shard_count(rows, threads) contiguous shards of `rows`
// (shard k holds rows [rows·k/n, rows·(k+1)/n)), one thread each, the calling thread shard 0: a
// gradient summed in shard order depends on the thread count only, never on timing.
template <typename F>
void run_shards(int rows, int threads, const F& fn) {
  const int n = shard_count(rows, threads);
  if (n == 1) {
    fn(0, 0, rows);
    return;
  }
  run_workers(n, [&fn, rows, n](int k, const std::atomic<bool>&) {
    fn(k, rows * k / n, rows * (k + 1) / n);
  });
}

// Calls item(k) for every k in [0, count), spread over min(threads, count) threads (threads <= 0:
// every hardware thread); items are handed out in order, one at a time, so uneven items even
// out. The first exception an item throws stops the hand-out and is rethrown here after every
// thread has finished; a cancelled WorkControl throws WorkCancelled the same way.
void parallel_items(int count, const std::function<void(int)>& item, int threads = 0);

}  // namespace attn
