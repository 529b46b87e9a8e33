// BackgroundJob (core/train/background_job.h): values and errors reach the UI thread,
// cancellation and progress are seen by both sides, and a job being destroyed while it runs waits
// for its thread.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>

#include "train/background_job.h"

namespace attn {
namespace {

// Polls until the job hands over its result (wait() first, so this never spins for long).
template <typename T>
JobResult<T> finish(BackgroundJob<T>& job) {
  job.wait();
  std::optional<JobResult<T>> r = job.poll();
  EXPECT_TRUE(r.has_value());
  return r ? std::move(*r) : JobResult<T>{};
}

// A gate the test opens when it has seen what it wants: the work blocks on it, so the job's state
// while running is observed deterministically.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void release() {
    std::lock_guard<std::mutex> l(m);
    open = true;
    cv.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return open; });
  }
};

TEST(BackgroundJob, DeliversTheValueOnce) {
  BackgroundJob<int> job;
  EXPECT_FALSE(job.running());
  EXPECT_FALSE(job.poll().has_value());
  job.start([](JobControl&) { return 6 * 7; });
  EXPECT_TRUE(job.running());
  const JobResult<int> r = finish(job);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value, 42);
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(r.cancelled);
  EXPECT_FALSE(job.running());
  EXPECT_FALSE(job.poll().has_value());  // handed over once
}

TEST(BackgroundJob, AnExceptionBecomesItsMessage) {
  BackgroundJob<std::string> job;
  job.start([](JobControl&) -> std::string { throw std::runtime_error("disk full"); });
  const JobResult<std::string> r = finish(job);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "disk full");
}

TEST(BackgroundJob, ANonStandardExceptionIsAnUnknownError) {
  BackgroundJob<int> job;
  job.start([](JobControl&) -> int { throw 17; });
  const JobResult<int> r = finish(job);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "unknown error");
}

TEST(BackgroundJob, TheWorkSeesCancel) {
  BackgroundJob<int> job;
  Gate started;
  job.start([&](JobControl& c) {
    started.release();
    int checks = 0;
    // Runs until cancelled: the test fails by timing out if the flag never arrives.
    while (!c.cancelled()) ++checks;
    return checks;
  });
  started.pass();
  EXPECT_TRUE(job.running());
  EXPECT_FALSE(job.ready());
  job.cancel();
  const JobResult<int> r = finish(job);
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.cancelled);
}

TEST(BackgroundJob, ProgressIsVisibleWhileItRuns) {
  BackgroundJob<int> job;
  Gate reported, go_on;
  job.start([&](JobControl& c) {
    c.set_progress(0.25);
    reported.release();
    go_on.pass();
    c.set_progress(2.0);  // clamped to 1
    return 1;
  });
  reported.pass();
  EXPECT_DOUBLE_EQ(job.progress(), 0.25);
  EXPECT_GE(job.elapsed_seconds(), 0.0);
  EXPECT_FALSE(job.ready());
  go_on.release();
  job.wait();
  EXPECT_DOUBLE_EQ(job.progress(), 1.0);
  EXPECT_TRUE(finish(job).ok());
  EXPECT_EQ(job.elapsed_seconds(), 0.0);
}

TEST(BackgroundJob, DestroyingARunningJobCancelsAndJoinsIt) {
  std::atomic<bool> ended{false};
  Gate started;
  {
    BackgroundJob<int> job;
    job.start([&](JobControl& c) {
      started.release();
      while (!c.cancelled()) std::this_thread::yield();
      ended = true;
      return 0;
    });
    started.pass();
  }  // the destructor cancels, then joins: the work has ended when it returns
  EXPECT_TRUE(ended.load());
}

TEST(BackgroundJob, StartingAgainDropsTheRunningJob) {
  BackgroundJob<int> job;
  Gate started;
  job.start([&](JobControl& c) {
    started.release();
    while (!c.cancelled()) std::this_thread::yield();
    return 1;
  });
  started.pass();
  job.start([](JobControl&) { return 2; });
  const JobResult<int> r = finish(job);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value, 2);
}

}  // namespace
}  // namespace attn
