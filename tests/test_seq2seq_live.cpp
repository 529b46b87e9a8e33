// The background trainer behind the app's "train live" mode: it trains, its loss falls, the
// example's alignment is redrawn as it learns, and pause and cancel work.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "seq2seq/live_trainer.h"

namespace attn::s2s {
namespace {

LiveTrainingSetup tiny() {
  LiveTrainingSetup s;
  s.hidden = 8;
  s.embed = 4;
  s.train.epochs = 3;
  s.train.batch = 16;
  s.train.train_size = 96;
  s.train.heldout_size = 20;
  s.train.max_length = 20;
  s.train.lr = 1e-2;
  s.example = "nov 22 26";
  s.redraw_every = 2;
  return s;
}

bool wait_until(const LiveTrainer& t, bool (*done)(const LiveSnapshot&), int seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done(t.snapshot())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Seq2SeqLive, TrainsAndRedrawsTheAlignment) {
  LiveTrainer t;
  std::string error;
  ASSERT_TRUE(t.start(tiny(), error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& s) { return !s.running; }));
  const LiveSnapshot s = t.snapshot();
  EXPECT_TRUE(s.finished);
  EXPECT_FALSE(s.cancelled);
  ASSERT_EQ(s.batch_loss.size(), 18u);  // 3 epochs of 6 batches
  EXPECT_EQ(s.epoch_accuracy.size(), 3u);
  const float first = std::accumulate(s.batch_loss.begin(), s.batch_loss.begin() + 6, 0.0f);
  const float last = std::accumulate(s.batch_loss.end() - 6, s.batch_loss.end(), 0.0f);
  EXPECT_LT(last, first);
  EXPECT_GE(s.alignment_serial, 10);  // the start, then every second batch
  ASSERT_GT(s.alignment.rows(), 0);
  ASSERT_EQ(s.alignment.cols(), 9);  // "nov 22 26"
  for (int i = 0; i < s.alignment.rows(); ++i) EXPECT_NEAR(s.alignment.row(i).sum(), 1.0f, 1e-4);
  EXPECT_GT(t.model().params.w_s.size(), 0);
}

TEST(Seq2SeqLive, PauseHoldsAndCancelStops) {
  LiveTrainer t;
  std::string error;
  LiveTrainingSetup setup = tiny();
  setup.train.epochs = 1000;
  t.set_paused(true);
  ASSERT_TRUE(t.start(setup, error)) << error;
  // The worker holds in its pause before the first batch: none has run.
  ASSERT_TRUE(t.control().wait_until_held(std::chrono::seconds(60)));
  EXPECT_TRUE(t.snapshot().batch_loss.empty());
  EXPECT_TRUE(t.snapshot().paused);
  t.set_paused(false);
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& s) { return s.batch_loss.size() >= 3; }));
  t.cancel();
  const LiveSnapshot s = t.snapshot();
  EXPECT_FALSE(s.running);
  EXPECT_TRUE(s.cancelled);
  EXPECT_FALSE(s.finished);

  setup.example = "22 Nov";
  EXPECT_FALSE(t.start(setup, error));
  EXPECT_NE(error.find("character 3"), std::string::npos) << error;
}

TEST(Seq2SeqLive, AFailureEndsTheRunWithItsMessage) {
  LiveTrainingSetup setup = tiny();
  setup.after_batch = [](int epoch, int batch) {
    if (epoch == 1 && batch == 1) throw std::runtime_error("out of memory");
  };
  LiveTrainer t;
  std::string error;
  ASSERT_TRUE(t.start(setup, error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& s) { return !s.running; }));
  const LiveSnapshot s = t.snapshot();
  EXPECT_EQ(s.error, "out of memory");
  EXPECT_EQ(s.batch_loss.size(), 2u);
  EXPECT_FALSE(s.finished);
  EXPECT_FALSE(s.cancelled);
  // Anything thrown, not only a std::exception.
  setup.after_batch = [](int, int) { throw 42; };
  ASSERT_TRUE(t.start(setup, error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& x) { return !x.running; }));
  EXPECT_EQ(t.snapshot().error, "unknown error");
}

}  // namespace
}  // namespace attn::s2s
