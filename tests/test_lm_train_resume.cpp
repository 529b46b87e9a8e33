// Resumable training and held-out figures (core/lm): a run stopped mid-interval, written to a
// checkpoint's bytes, read back and continued ends with the same weights, moments and figures as a
// run that never stopped (GPT-2's and the Llama architecture); a damaged checkpoint is refused;
// corpus_eval's loss, top-1 and top-5 against a plain double-precision loop over the logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "lm/corpus_eval.h"
#include "lm/stories.h"
#include "lm/train_checkpoint.h"
#include "lm/trainer.h"

namespace attn::lm {
namespace {

TrainOptions tiny_options(LmArch arch) {
  TrainOptions o;
  o.arch = arch;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_kv_head = arch == LmArch::kGpt2 ? 0 : 1;
  o.n_embd = 16;
  o.context = 16;
  o.batch = 4;
  o.steps = 12;
  o.warmup = 3;
  o.eval_every = 4;
  o.threads = 2;
  o.heldout_sequences = 4;
  o.probe_sequences = 2;
  return o;
}

TrainSet story_set(int context) {
  TrainSet set;
  std::string error;
  EXPECT_TRUE(text_set(write_stories(40, 3), 40, context, set, error)) << error;
  return set;
}

struct TrainRun {
  Model model;
  TrainState state;
  std::vector<EvalPoint> history;
  long done = 0;
};

// Trains from `run` (fresh or resumed) until `stop_after` steps are done (0: to the end).
void train(TrainRun& run, const TrainSet& set, const TrainOptions& o, long stop_after) {
  std::atomic<bool> stop{false};
  TrainCallbacks cb;
  cb.stop = &stop;
  cb.on_step = [&](long step, double, double) {
    if (step == stop_after) stop = true;
  };
  cb.on_eval = [&](const EvalPoint& e, const Model&, const Activations&) {
    run.history.push_back(e);
  };
  run.done = train_lm(run.model, set, o, cb, run.state);
}

bool same_floats(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

// With shape_steps > 0 the run is shaped (lm train --shape-previous) for its first steps, past
// the stop: a resumed run must keep shaping until the same step.
void expect_resume_matches(LmArch arch, const TrainSet& set, long shape_steps = 0) {
  TrainOptions o = tiny_options(arch);
  if (shape_steps > 0) {
    o.shape_previous = 2;
    o.shape_steps = shape_steps;
  }
  TrainRun whole;
  whole.model = new_training_model(o, set);
  train(whole, set, o, 0);
  ASSERT_EQ(whole.done, o.steps);

  // Stopped at step 6, inside the second interval (steps 5–8), so the interval's losses must be
  // carried over too; then through the checkpoint's bytes into a fresh model.
  TrainRun first;
  first.model = new_training_model(o, set);
  train(first, set, o, 6);
  ASSERT_EQ(first.done, 6);
  ASSERT_EQ(first.state.step, 6);
  TrainCheckpoint c;
  c.run = "{\"any\": 1}";
  c.state = first.state;
  c.params.assign(first.model.params.memory.begin(), first.model.params.memory.end());
  c.history = first.history;
  TrainCheckpoint back;
  std::string error;
  ASSERT_TRUE(parse_checkpoint(checkpoint_bytes(c), back, error)) << error;
  EXPECT_EQ(back.run, c.run);

  TrainRun second;
  second.model = new_training_model(o, set);
  std::copy(back.params.begin(), back.params.end(), second.model.params.memory.begin());
  if (second.model.config.llama_family()) llama_weights_from_params(second.model);
  second.state = back.state;
  second.history = back.history;
  train(second, set, o, 0);
  ASSERT_EQ(second.done, o.steps);

  const AlignedVector<float>& w = whole.model.params.memory;
  ASSERT_EQ(second.model.params.memory.size(), w.size());
  EXPECT_TRUE(same_floats(second.model.params.memory.data(), w.data(), w.size()));
  ASSERT_EQ(second.state.opt.m.size(), whole.state.opt.m.size());
  EXPECT_TRUE(
      same_floats(second.state.opt.m.data(), whole.state.opt.m.data(), whole.state.opt.m.size()));
  EXPECT_TRUE(
      same_floats(second.state.opt.v.data(), whole.state.opt.v.data(), whole.state.opt.v.size()));
  EXPECT_EQ(second.state.opt.steps, o.steps);
  // The same figures at steps 0, 4, 8 and 12: the interval around the stop included.
  ASSERT_EQ(second.history.size(), whole.history.size());
  for (size_t i = 0; i < whole.history.size(); ++i) {
    EXPECT_EQ(second.history[i].step, whole.history[i].step);
    EXPECT_EQ(second.history[i].train_loss, whole.history[i].train_loss) << "point " << i;
    EXPECT_EQ(second.history[i].heldout_loss, whole.history[i].heldout_loss) << "point " << i;
  }
  // A stop that changes nothing would pass the comparisons above trivially: the weights moved.
  TrainRun untrained;
  untrained.model = new_training_model(o, set);
  EXPECT_FALSE(same_floats(untrained.model.params.memory.data(), w.data(), w.size()));
}

TEST(LmTrainResume, Gpt2OnTheInductionTaskGivesTheSameBytes) {
  expect_resume_matches(LmArch::kGpt2, induction_set());
}

TEST(LmTrainResume, AShapedLlamaRunGivesTheSameBytes) {
  expect_resume_matches(LmArch::kLlama, induction_set(), 8);
}

TEST(LmTrainResume, LlamaOnTextGivesTheSameBytes) {
  expect_resume_matches(LmArch::kLlama, story_set(16));
}

TEST(LmTrainResume, DamagedOrForeignCheckpointsAreRefused) {
  TrainCheckpoint c;
  c.run = "{}";
  c.state.step = 3;
  c.params = {1.0f, 2.0f, 3.0f};
  c.state.opt.m = {0.1f, 0.2f, 0.3f};
  c.state.opt.v = {0.01f, 0.02f, 0.03f};
  const std::string bytes = checkpoint_bytes(c);
  TrainCheckpoint back;
  std::string error;
  ASSERT_TRUE(parse_checkpoint(bytes, back, error)) << error;
  EXPECT_EQ(back.state.step, 3);
  EXPECT_EQ(back.params, c.params);
  EXPECT_EQ(back.state.opt.v, c.state.opt.v);

  // A checkpoint of step 0 has no moments yet.
  TrainCheckpoint start = c;
  start.state.step = 0;
  start.state.opt.m.clear();
  start.state.opt.v.clear();
  ASSERT_TRUE(parse_checkpoint(checkpoint_bytes(start), back, error)) << error;
  EXPECT_TRUE(back.state.opt.m.empty());
  EXPECT_EQ(back.params, c.params);

  std::string flipped = bytes;
  flipped[bytes.size() - 20] ^= 1;  // inside the moments
  EXPECT_FALSE(parse_checkpoint(flipped, back, error));
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;
  EXPECT_FALSE(parse_checkpoint(bytes.substr(0, bytes.size() / 2), back, error));
  EXPECT_FALSE(parse_checkpoint("", back, error));
  EXPECT_FALSE(parse_checkpoint("PK\x03\x04 something else entirely", back, error));
  EXPECT_NE(error.find("not a training checkpoint"), std::string::npos) << error;
}

// The plain loop: window k reads ids[k·T … k·T+len−1] and predicts ids[k·T+1 … k·T+len]; each
// prediction's −ln softmax in double, its rank by sorting the logits.
struct Expected {
  double loss = 0;
  long top1 = 0, top5 = 0, count = 0;
};
Expected plain_figures(const Model& m, const std::vector<int>& ids) {
  const int T = m.config.n_positions, V = m.config.vocab_size;
  Expected x;
  for (size_t start = 0; start + 1 < ids.size(); start += static_cast<size_t>(T)) {
    const int len = static_cast<int>(std::min<size_t>(T, ids.size() - 1 - start));
    const std::vector<int> in(ids.begin() + static_cast<long>(start),
                              ids.begin() + static_cast<long>(start) + len);
    Activations a;
    gpt_forward(m, in, 1, len, a);
    for (int t = 0; t < len; ++t) {
      const int target = ids[start + static_cast<size_t>(t) + 1];
      std::vector<double> z(a.logits.begin() + static_cast<long>(t) * V,
                            a.logits.begin() + static_cast<long>(t + 1) * V);
      double sum = 0;
      for (double v : z) sum += std::exp(v);
      x.loss += std::log(sum) - z[static_cast<size_t>(target)];
      std::vector<double> sorted = z;
      std::sort(sorted.rbegin(), sorted.rend());
      x.top1 += z[static_cast<size_t>(target)] >= sorted[0] ? 1 : 0;
      x.top5 += z[static_cast<size_t>(target)] >= sorted[4] ? 1 : 0;
      ++x.count;
    }
  }
  x.loss /= static_cast<double>(x.count);
  return x;
}

TEST(LmCorpusEval, MatchesAPlainLoopOverTheLogits) {
  for (LmArch arch : {LmArch::kGpt2, LmArch::kLlama}) {
    const TrainSet set = story_set(16);
    TrainOptions o = tiny_options(arch);
    o.steps = 30;
    TrainRun run;
    run.model = new_training_model(o, set);
    train(run, set, o, 0);  // trained a little, so top-1 and top-5 are not at chance
    // Two full windows of 16 predictions and a last one of 7.
    const std::vector<int> ids(set.heldout.begin(), set.heldout.begin() + 40);
    const Expected x = plain_figures(run.model, ids);
    ASSERT_EQ(x.count, 39);
    const CorpusFigures f = corpus_eval(run.model, ids, 2);
    EXPECT_EQ(f.tokens, 39);
    EXPECT_NEAR(f.loss, x.loss, 1e-6);
    EXPECT_NEAR(f.perplexity(), std::exp(x.loss), 1e-5);
    EXPECT_DOUBLE_EQ(f.top1, static_cast<double>(x.top1) / 39);
    EXPECT_DOUBLE_EQ(f.top5, static_cast<double>(x.top5) / 39);
    EXPECT_GT(x.top5, x.top1);
    EXPECT_GT(x.top1, 0);
  }
}

}  // namespace
}  // namespace attn::lm
