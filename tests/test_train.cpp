// core/train: shards cover a batch's rows once each, a paused loop holds until resumed or stopped,
// and a live run turns whatever its body throws into the snapshot's error.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "attention/parallel.h"
#include "lm/parallel.h"
#include "train/live_run.h"
#include "train/run_control.h"

namespace attn::train {
namespace {

TEST(Shards, EveryRowOnceInContiguousShards) {
  for (int rows : {0, 1, 5, 7, 64}) {
    for (int threads : {1, 2, 3, 8}) {
      std::mutex m;
      std::vector<int> seen(static_cast<size_t>(rows), 0);
      std::vector<std::pair<int, int>> shards(static_cast<size_t>(shard_count(rows, threads)));
      run_shards(rows, threads, [&](int k, int lo, int hi) {
        std::lock_guard<std::mutex> lock(m);
        shards[static_cast<size_t>(k)] = {lo, hi};
        for (int r = lo; r < hi; ++r) ++seen[static_cast<size_t>(r)];
      });
      for (int r = 0; r < rows; ++r) EXPECT_EQ(seen[static_cast<size_t>(r)], 1) << rows;
      // Shard k is [rows·k/n, rows·(k+1)/n): contiguous and in order.
      const int n = static_cast<int>(shards.size());
      EXPECT_EQ(n, std::max(1, std::min(threads, rows)));
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(shards[static_cast<size_t>(k)].first, rows * k / n);
        EXPECT_EQ(shards[static_cast<size_t>(k)].second, rows * (k + 1) / n);
      }
    }
  }
  EXPECT_EQ(thread_count(3), 3);
  EXPECT_GE(thread_count(0), 1);
}

// The one worker pool (attention/parallel.h): a throw on any thread — the caller's or a helper's
// — comes back to the caller as that exception, after every thread has finished, in each way the
// pool is used: shards, the language model's ranges, items and the bare workers.
TEST(WorkerPool, AThrowOnAnyThreadIsTheCallersException) {
  struct Boom : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  for (int thrower : {0, 1, 2}) {
    SCOPED_TRACE(thrower);
    std::atomic<int> finished{0};
    EXPECT_THROW(run_shards(30, 3,
                            [&](int k, int, int) {
                              if (k == thrower) throw Boom("shard");
                              ++finished;
                            }),
                 Boom);
    EXPECT_EQ(finished.load(), 2);  // the others ran to their end: nothing was left running
    EXPECT_THROW(lm::split_range(300, 3, 4,
                                 [&](Eigen::Index begin, Eigen::Index) {
                                   if (begin == thrower * 100) throw Boom("range");
                                 }),
                 Boom);
    EXPECT_THROW(parallel_items(
                     50,
                     [&](int k) {
                       if (k == 10 + thrower) throw Boom("item");
                     },
                     3),
                 Boom);
    std::atomic<int> stopped{0};
    EXPECT_THROW(run_workers(3,
                             [&](int w, const std::atomic<bool>& stop) {
                               if (w == thrower) throw Boom("worker");
                               while (!stop) std::this_thread::yield();  // until told
                               ++stopped;
                             }),
                 Boom);
    EXPECT_EQ(stopped.load(), 2);
  }
  // An allocation failing on a helper thread, as in a trainer's allocate: std::bad_alloc here.
  EXPECT_THROW(run_shards(4, 2,
                          [](int k, int, int) {
                            if (k == 1) throw std::bad_alloc();
                          }),
               std::bad_alloc);
}

TEST(RunControl, APausedLoopHoldsUntilResumed) {
  RunControl c;
  c.set_paused(true);
  std::atomic<int> steps{0};
  std::thread loop([&] {
    while (c.wait_while_paused()) ++steps;
  });
  ASSERT_TRUE(c.wait_until_held(std::chrono::milliseconds(60000)));
  // Held: blocked inside wait_while_paused before its first step.
  EXPECT_TRUE(c.held());
  EXPECT_EQ(steps.load(), 0);
  c.set_paused(false);
  while (steps.load() < 3) std::this_thread::yield();
  c.set_paused(true);
  ASSERT_TRUE(c.wait_until_held(std::chrono::milliseconds(60000)));
  const int at_pause = steps.load();
  EXPECT_EQ(steps.load(), at_pause);  // held: no step runs
  c.stop();                           // wakes the paused loop, which then ends
  loop.join();
  EXPECT_FALSE(c.held());
  EXPECT_EQ(steps.load(), at_pause);
  EXPECT_TRUE(c.stop_requested());
  c.rearm();
  EXPECT_FALSE(c.stop_requested());
  EXPECT_TRUE(c.paused());  // a pause request outlives the run
}

struct Snap : RunStatus {
  int steps = 0;
};

Snap wait_for_end(const LiveRun<Snap>& run) {
  for (;;) {
    const Snap s = run.snapshot();
    if (!s.running) return s;
    std::this_thread::yield();
  }
}

TEST(LiveRun, FinishesWithItsSnapshots) {
  LiveRun<Snap> run;
  run.start(Snap{}, [&run](RunControl& c) {
    for (int i = 0; i < 5; ++i) {
      if (!c.wait_while_paused()) return RunEnd{false, ""};
      run.update([](Snap& s) { ++s.steps; });
    }
    return RunEnd{true, ""};
  });
  const Snap s = wait_for_end(run);
  EXPECT_EQ(s.steps, 5);
  EXPECT_TRUE(s.finished);
  EXPECT_FALSE(s.cancelled);
  EXPECT_TRUE(s.error.empty());
}

TEST(LiveRun, AnExceptionBecomesTheSnapshotsError) {
  LiveRun<Snap> run;
  run.start(Snap{}, [](RunControl&) -> RunEnd { throw std::runtime_error("NaN in the loss"); });
  Snap s = wait_for_end(run);
  EXPECT_EQ(s.error, "NaN in the loss");
  EXPECT_FALSE(s.finished);
  EXPECT_FALSE(s.cancelled);
  // Anything thrown, not only std::exception; and the run can start again afterwards.
  run.start(Snap{}, [](RunControl&) -> RunEnd { throw 3; });
  s = wait_for_end(run);
  EXPECT_EQ(s.error, "unknown error");
  run.start(Snap{}, [](RunControl&) { return RunEnd{false, "bad length bounds"}; });
  s = wait_for_end(run);
  EXPECT_EQ(s.error, "bad length bounds");
}

TEST(LiveRun, PauseHoldsAndStopCancels) {
  LiveRun<Snap> run;
  run.set_paused(true);
  run.start(Snap{}, [&run](RunControl& c) {
    while (c.wait_while_paused()) run.update([](Snap& s) { ++s.steps; });
    return RunEnd{false, ""};
  });
  ASSERT_TRUE(run.control().wait_until_held(std::chrono::milliseconds(60000)));
  EXPECT_TRUE(run.snapshot().paused);
  EXPECT_EQ(run.snapshot().steps, 0);
  run.set_paused(false);
  while (run.snapshot().steps < 3) std::this_thread::yield();
  run.stop();
  const Snap s = run.snapshot();
  EXPECT_FALSE(s.running);
  EXPECT_TRUE(s.cancelled);
  EXPECT_FALSE(s.finished);
}

}  // namespace
}  // namespace attn::train
