// Training a transformer (core/lm): the learning-rate schedule and AdamW against hand-derived
// numbers, the induction data and the repeat probes, a short run whose loss falls, reruns giving
// the same bytes, the phase-change detector, the copy accuracy, and the background trainer behind
// the app's live view.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

#include "lm/live_trainer.h"
#include "lm/stories.h"
#include "lm/trainer.h"

namespace attn::lm {
namespace {

TEST(LmSchedule, WarmUpThenCosineOrLinearDecay) {
  // Warm-up: lr·(step+1)/warmup.
  EXPECT_DOUBLE_EQ(scheduled_lr(0, 100, 10, 1e-3, 0.1, LrSchedule::kCosine), 1e-4);
  EXPECT_DOUBLE_EQ(scheduled_lr(9, 100, 10, 1e-3, 0.1, LrSchedule::kCosine), 1e-3);
  // No warm-up, 11 steps: progress = step/10, floor 0.1.
  EXPECT_DOUBLE_EQ(scheduled_lr(0, 11, 0, 1.0, 0.1, LrSchedule::kCosine), 1.0);
  EXPECT_NEAR(scheduled_lr(5, 11, 0, 1.0, 0.1, LrSchedule::kCosine), 0.55, 1e-12);
  // 0.1 + 0.9·0.5·(1 + cos(0.2π)) = 0.1 + 0.45·1.809017 = 0.9140576
  EXPECT_NEAR(scheduled_lr(2, 11, 0, 1.0, 0.1, LrSchedule::kCosine), 0.9140576, 1e-7);
  EXPECT_NEAR(scheduled_lr(10, 11, 0, 1.0, 0.1, LrSchedule::kCosine), 0.1, 1e-12);
  EXPECT_NEAR(scheduled_lr(2, 11, 0, 1.0, 0.1, LrSchedule::kLinear), 0.82, 1e-12);
  EXPECT_DOUBLE_EQ(scheduled_lr(7, 11, 0, 1.0, 0.1, LrSchedule::kConstant), 1.0);
  LrSchedule s;
  EXPECT_TRUE(parse_lr_schedule("linear", s));
  EXPECT_EQ(s, LrSchedule::kLinear);
  EXPECT_FALSE(parse_lr_schedule("step", s));
}

TEST(LmAdamW, FirstStepMovesEachWeightByTheLearningRate) {
  Config c;
  c.n_layer = 1;
  c.n_head = 1;
  c.n_embd = 2;
  c.n_positions = 3;
  c.vocab_size = 4;
  Parameters p, g;
  p.allocate(c);
  g.allocate(c);
  std::fill(p.memory.begin(), p.memory.end(), 1.0f);
  std::fill(g.memory.begin(), g.memory.end(), 0.5f);
  AdamW opt;
  opt.weight_decay = 0.1;
  opt.clip = 0;
  opt.frozen[kFcB] = true;
  opt.step(p, g, 0.1);
  // Bias-corrected first moments are g and g²: the step is lr·g/|g| = 0.1; decayed tensors also
  // lose lr·wd·p = 0.01.
  EXPECT_NEAR(p.ptr(kWte)[0], 1.0 - 0.01 - 0.1, 1e-6);
  EXPECT_NEAR(p.ptr(kQkvW)[3], 0.89, 1e-6);
  EXPECT_NEAR(p.ptr(kLn1W)[1], 0.9, 1e-6);
  EXPECT_NEAR(p.ptr(kQkvB)[0], 0.9, 1e-6);
  EXPECT_EQ(p.ptr(kFcB)[0], 1.0f);
  // Clipping scales the gradient, which Adam's first step does not see; the norm is returned.
  std::fill(g.memory.begin(), g.memory.end(), 10.0f);
  AdamW clipped;
  clipped.clip = 1.0;
  const double norm = clipped.step(p, g, 0.1);
  EXPECT_NEAR(norm, 10.0 * std::sqrt(static_cast<double>(p.total())), 1e-3);
}

TEST(LmTrainData, LettersAreOneTokenEach) {
  const TrainSet s = induction_set();
  ASSERT_EQ(s.letters.size(), 26u);
  EXPECT_EQ(s.tokenizer.size(), 283);
  EXPECT_EQ(s.tokenizer.token(s.letters[16]), "\xC4\xA0q");  // "Ġq"
  const std::vector<int> ids = s.tokenizer.encode(" q x m q x m");
  ASSERT_EQ(ids.size(), 6u);
  EXPECT_EQ(ids[0], s.letters[16]);
  EXPECT_EQ(ids[0], ids[3]);
  const std::vector<int> bare = s.tokenizer.encode("q x");
  ASSERT_EQ(bare.size(), 2u);
  EXPECT_EQ(bare[0], s.bare_letters[16]);
}

TEST(LmTrainData, InductionSequencesHoldARepeatedSegment) {
  const TrainSet s = induction_set();
  Rng rng(5);
  std::vector<int> distances(33, 0);
  for (int i = 0; i < 1000; ++i) {
    std::vector<int> seq;
    int n = 0;
    const int second = induction_sequence(s, rng, 32, seq, n);
    ASSERT_EQ(seq.size(), 33u);
    ASSERT_GE(n, 4);
    ASSERT_LE(n, 11);
    ASSERT_LE(second + n, 33);
    int found = -1;
    for (int first = 0; first + n <= second && found < 0; ++first) {
      bool same = true;
      for (int k = first == 0 ? 1 : 0; k < n; ++k) same = same && seq[first + k] == seq[second + k];
      if (same) found = first;
    }
    ASSERT_GE(found, 0) << "no earlier copy of the segment at " << second;
    ++distances[second - found];
  }
  // The copy's distance from the original varies (no fixed look-back predicts it): every
  // distance from 4 to 29 occurs, none in more than a fifth of the sequences.
  for (int d = 4; d <= 29; ++d) EXPECT_GT(distances[d], 0) << d;
  for (int d : distances) EXPECT_LT(d, 200);
  TokenBatch b;
  sample_batch(s, rng, 3, 32, b);
  ASSERT_EQ(b.tokens.size(), 96u);
  for (int r = 0; r < 3; ++r)
    for (int t = 0; t + 1 < 32; ++t) EXPECT_EQ(b.targets[r * 32 + t], b.tokens[r * 32 + t + 1]);

  // Probes of 64 tokens: 13 distinct letters (half the alphabet; a quarter would be 16), filler
  // from the other 13, the copy ending the sequence, targets on the copy's last 12 tokens.
  const TokenBatch p = repeat_probes(s, 2, 64);
  ASSERT_EQ(p.T, 64);
  for (int r = 0; r < 2; ++r) {
    const int* tok = p.tokens.data() + r * 64;
    const int gap = r == 0 ? 0 : 64 - 26;  // the first probe's gap is 0, the last one's T − 2n
    const int first = 64 - 26 - gap;
    for (int i = 0; i < 13; ++i) {
      EXPECT_EQ(tok[first + i], tok[51 + i]) << r << " " << i;
      for (int j = 0; j < 13; ++j)
        if (j != i) {
          EXPECT_NE(tok[51 + i], tok[51 + j]);
        }
    }
    for (int t = 0; t < 64; ++t) {
      const bool in_segment = (t >= first && t < first + 13) || t >= 51;
      if (!in_segment) {  // filler: no letter of the segment
        for (int i = 0; i < 13; ++i) EXPECT_NE(tok[t], tok[51 + i]) << r << " " << t;
      }
      EXPECT_EQ(p.targets[r * 64 + t], t >= 51 && t < 63 ? tok[t + 1] : -1);
    }
  }
}

// How often a rule predicts the probes' targets: `look_back` > 0 predicts the token that came
// look_back − 1 tokens before the current one (a head reading a fixed distance back and copying
// what followed there); 0 looks up the current token's latest earlier occurrence and predicts what
// followed it (an induction head).
double probe_accuracy(const TokenBatch& p, int look_back) {
  int right = 0, total = 0;
  for (int b = 0; b < p.B; ++b) {
    const int* tok = p.tokens.data() + b * p.T;
    for (int t = 0; t < p.T; ++t) {
      const int target = p.targets[b * p.T + t];
      if (target < 0) continue;
      int guess = -1;
      if (look_back > 0) {
        if (t - look_back + 1 >= 0) guess = tok[t - look_back + 1];
      } else {
        for (int s = t - 1; s >= 0; --s)
          if (tok[s] == tok[t]) {
            guess = tok[s + 1];
            break;
          }
      }
      right += guess == target ? 1 : 0;
      ++total;
    }
  }
  return static_cast<double>(right) / total;
}

TEST(LmTrainData, NoFixedLookBackPassesTheRepeatProbes) {
  // The trainer's probes (8 sequences) on the induction task at contexts 32 and 64, and on text.
  const TrainSet letters = induction_set();
  TrainSet text;
  std::string error;
  ASSERT_TRUE(text_set(write_stories(200, 1), 100, 64, text, error)) << error;
  for (const TrainSet* set : {&letters, static_cast<const TrainSet*>(&text)})
    for (int T : {32, 64}) {
      const TokenBatch p = repeat_probes(*set, 8, T);
      // Copying what followed the earlier occurrence predicts every target of the letters (text
      // repeats tokens inside the segment and the filler, so less there: 0.68 and more).
      EXPECT_GE(probe_accuracy(p, 0), set == &letters ? 1.0 : 0.5) << T;
      // Every fixed distance is right on at most one probe in four (the distances differ from
      // probe to probe; text's own repeats can add a few).
      for (int d = 1; d < T; ++d) EXPECT_LE(probe_accuracy(p, d), 0.25) << "T " << T << " d " << d;
    }
}

TEST(LmTrainData, TheRepeatedSegmentsLengthCanBeChosen) {
  TrainSet s = induction_set();
  s.repeat_min = 8;
  s.repeat_max = 16;  // 2 · 16 = 33 − 1: the longest pair that fits in 33 tokens
  Rng rng(7);
  std::vector<int> lengths(17, 0);
  for (int i = 0; i < 500; ++i) {
    std::vector<int> seq;
    int n = 0;
    const int second = induction_sequence(s, rng, 32, seq, n);
    ASSERT_GE(n, 8);
    ASSERT_LE(n, 16);
    ASSERT_GE(second, n);  // the copy starts after the original ends
    ASSERT_LE(second + n, 33);
    ++lengths[static_cast<size_t>(n)];
  }
  for (int n = 8; n <= 16; ++n) EXPECT_GT(lengths[static_cast<size_t>(n)], 0) << n;
  EXPECT_EQ(check_repeat_range(8, 16, 32), "");
  EXPECT_EQ(check_repeat_range(0, 0, 32), "");   // the defaults: 4 to 11
  EXPECT_NE(check_repeat_range(8, 17, 32), "");  // 34 tokens > 33
  EXPECT_EQ(check_repeat_range(12, 0, 32), "");  // the maximum follows a larger minimum
  EXPECT_NE(check_repeat_range(0, 3, 32), "");   // below the default minimum 4
  EXPECT_NE(check_repeat_range(9, 8, 32), "");
}

TEST(LmTrainData, StoriesMakeATextSet) {
  const std::string text = write_stories(40, 3);
  EXPECT_EQ(text, write_stories(40, 3));
  EXPECT_NE(text.find("The end."), std::string::npos);
  TrainSet s;
  std::string error;
  ASSERT_TRUE(text_set(text, 120, 32, s, error)) << error;
  EXPECT_EQ(s.kind, DataKind::kText);
  EXPECT_GT(s.tokenizer.merges().size(), 100u);
  EXPECT_NEAR(static_cast<double>(s.heldout.size()) / (s.train.size() + s.heldout.size()), 0.1,
              0.01);
  EXPECT_FALSE(text_set("too short", 10, 32, s, error));
  EXPECT_NE(error.find("at least 330"), std::string::npos) << error;
}

// A text window with a span written again: the copy equals the original, lies wholly after it,
// and its distance varies; with a share of 0 the batches are the plain windows (same draws).
TEST(LmTrainData, TextWindowsCanRepeatASpanAtVariedDistances) {
  Rng rng(9);
  std::vector<int> counts(65, 0);
  for (int i = 0; i < 2000; ++i) {
    std::vector<int> seq(65);
    for (int k = 0; k < 65; ++k) seq[static_cast<size_t>(k)] = 1000 + k;  // all distinct
    const std::vector<int> before = seq;
    const int to = repeat_span(seq, rng);
    ASSERT_GE(to, 0);
    // Where it changed is the copy; each copied token names its source by its value.
    int n = 0, from = -1;
    for (int k = 0; k < 65; ++k) {
      if (seq[static_cast<size_t>(k)] == before[static_cast<size_t>(k)]) continue;
      ASSERT_GE(k, to);
      const int source = seq[static_cast<size_t>(k)] - 1000;
      if (from < 0) from = source;
      ASSERT_EQ(source, from + (k - to)) << "the copy is not one contiguous span";
      ++n;
    }
    ASSERT_GE(n, 4);   // 65/16
    ASSERT_LE(n, 16);  // 65/4
    ASSERT_LE(from + n, to) << "the copy overlaps its original";
    ++counts[static_cast<size_t>(to - from)];
  }
  int distances = 0, most = 0;
  for (int c : counts) {
    distances += c > 0;
    most = std::max(most, c);
  }
  EXPECT_GE(distances, 40);
  EXPECT_LT(most, 200);  // no distance in a tenth of the windows
  // The share: about a quarter of a batch's windows are no longer a slice of the text.
  TrainSet s;
  std::string error;
  ASSERT_TRUE(text_set(write_stories(200, 3), 120, 32, s, error)) << error;
  auto edited = [&s](const TokenBatch& batch) {
    int out = 0;
    for (int b = 0; b < batch.B; ++b) {
      const auto first = batch.tokens.begin() + static_cast<long>(b) * batch.T;
      out += std::search(s.train.begin(), s.train.end(), first, first + batch.T) == s.train.end();
    }
    return out;
  };
  Rng plain_rng(4);
  TokenBatch plain;
  sample_batch(s, plain_rng, 400, 32, plain);
  EXPECT_EQ(edited(plain), 0);
  s.repeat_share = 0.25;
  Rng mixed_rng(4);
  TokenBatch mixed;
  sample_batch(s, mixed_rng, 400, 32, mixed);
  EXPECT_GT(edited(mixed), 60);  // 100 expected; a copy may land on equal tokens
  EXPECT_LT(edited(mixed), 140);
}

TEST(LmTrainData, AScrambledWindowIsRealTokensInNoOrderWithCopiesAtVariedDistances) {
  std::vector<int> train;
  for (int i = 0; i < 100000; ++i) train.push_back(1000 + i);  // every token distinct, in order
  Rng rng(11);
  int copied = 0, total = 0;
  std::set<int> distances;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int> w;
    const int to = scramble_window(train, rng, 257, w);
    ASSERT_EQ(w.size(), 257u);
    ASSERT_GT(to, 0);
    for (int t : w) EXPECT_TRUE(t >= 1000 && t < 101000);
    // A token is a copy when it and the token before it occurred, in that order, earlier: the
    // induction rule predicts it. Its distance is how far back that earlier pair lies.
    for (int i = 1; i < 257; ++i) {
      ++total;
      for (int j = i - 1; j >= 1; --j)
        if (w[static_cast<size_t>(j)] == w[static_cast<size_t>(i)] &&
            w[static_cast<size_t>(j) - 1] == w[static_cast<size_t>(i) - 1]) {
          ++copied;
          distances.insert(i - j);
          break;
        }
    }
    // Before the first copy, neighbours are not neighbours in the text (order is noise).
    int in_order = 0;
    for (int i = 0; i + 1 < to; ++i)
      in_order += w[static_cast<size_t>(i) + 1] == w[static_cast<size_t>(i)] + 1;
    EXPECT_LT(in_order, 3) << "trial " << trial;
  }
  // Segments of 8 to 64 tokens, gaps of 0 to n: about two fifths of the tokens are copies.
  EXPECT_GT(copied, total / 4);
  EXPECT_LT(copied, total / 2);
  // The copies' distances vary, from 8 to 128: no fixed look-back predicts them.
  EXPECT_GT(distances.size(), 60u);
  EXPECT_LE(*distances.begin(), 16);
  EXPECT_GE(*distances.rbegin(), 100);
}

// --copy-vocab: the most frequent tokens, and scrambled windows made of them alone.
TEST(LmTrainData, ACopyPoolIsTheMostFrequentTokensAndScrambledWindowsUseOnlyIt) {
  const std::vector<int> ids = {5, 3, 5, 9, 3, 5, 7, 9, 5, 3, 1};  // 5 ×4, 3 ×3, 9 ×2, 1 and 7 ×1
  EXPECT_EQ(most_frequent_tokens(ids, 3), (std::vector<int>{5, 3, 9}));
  EXPECT_EQ(most_frequent_tokens(ids, 4), (std::vector<int>{5, 3, 9, 1}));  // a tie: the lower id
  EXPECT_EQ(most_frequent_tokens(ids, 50).size(), 5u);
  TrainSet s;
  s.kind = DataKind::kText;
  for (int i = 0; i < 5000; ++i) s.train.push_back(100 + i % 700);
  s.copy_share = 1.0;
  s.copy_pool = {100, 101, 102, 103};
  Rng rng(3);
  TokenBatch b;
  sample_batch(s, rng, 8, 64, b);
  std::set<int> seen(b.tokens.begin(), b.tokens.end());
  seen.insert(b.targets.begin(), b.targets.end());
  EXPECT_EQ(seen, (std::set<int>{100, 101, 102, 103}));
}

TrainOptions tiny_options() {
  TrainOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 16;
  o.context = 16;
  o.batch = 8;
  o.steps = 60;
  o.warmup = 5;
  o.lr = 5e-3;
  o.eval_every = 20;
  o.heldout_sequences = 8;
  o.probe_sequences = 2;
  return o;
}

TEST(LmTrain, TheLossFalls) {
  const TrainSet set = induction_set();
  TrainOptions o = tiny_options();
  o.attention_only = true;
  Model m = new_training_model(o, set);
  EXPECT_FALSE(m.mlp);
  std::vector<double> losses;
  std::vector<EvalPoint> evals;
  TrainCallbacks cb;
  cb.on_step = [&](long, double loss, double) { losses.push_back(loss); };
  cb.on_eval = [&](const EvalPoint& e, const Model&, const Activations&) { evals.push_back(e); };
  EXPECT_EQ(train_lm(m, set, o, cb), 60);
  ASSERT_EQ(losses.size(), 60u);
  ASSERT_EQ(evals.size(), 4u);  // steps 0, 20, 40, 60
  EXPECT_EQ(evals.back().step, 60);
  // From log(283) ≈ 5.65 towards log(26) ≈ 3.26: the letters at least.
  EXPECT_NEAR(evals.front().heldout_loss, std::log(283.0), 0.3);
  EXPECT_LT(evals.back().heldout_loss, evals.front().heldout_loss - 1.5);
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  EXPECT_LT(last, first - 1.5);
  // The MLP of an attention-only model stays exactly zero.
  EXPECT_TRUE(mlp_is_zero(m.params));
  EXPECT_EQ(evals.back().heads.size(), 4u);
}

TEST(LmTrain, RerunsGiveTheSameBytes) {
  const TrainSet set = induction_set();
  auto run = [&](int threads, uint64_t seed) {
    TrainOptions o = tiny_options();
    o.steps = 12;
    o.threads = threads;
    o.seed = seed;
    Model m = new_training_model(o, set);
    train_lm(m, set, o, {});
    return m.params.memory;
  };
  const auto a = run(2, 7), b = run(2, 7);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  const auto c = run(1, 7), d = run(1, 7);
  EXPECT_EQ(std::memcmp(c.data(), d.data(), c.size() * sizeof(float)), 0);
  EXPECT_NE(run(2, 8), a);
  // Two threads split the batch in two and sum: the same numbers to rounding.
  for (size_t i = 0; i < a.size(); i += 97) EXPECT_NEAR(a[i], c[i], 2e-4);
}

TEST(LmTrain, ShardsSumToTheWholeBatchGradient) {
  const TrainSet set = induction_set();
  const TrainOptions o = tiny_options();
  const Model m = new_training_model(o, set);
  Rng rng(3);
  TokenBatch batch;
  sample_batch(set, rng, 6, 16, batch);
  Parameters g1, g3;
  GradientWorkspace w1, w3;
  const double l1 = batch_gradient(m, batch, 1, g1, w1);
  const double l3 = batch_gradient(m, batch, 3, g3, w3);
  EXPECT_NEAR(l1, l3, 1e-5);
  for (size_t i = 0; i < g1.total(); ++i) ASSERT_NEAR(g1.memory[i], g3.memory[i], 1e-6) << i;
}

// Attention shaping's weight is a mean over the whole batch: the shards' gradients sum to the
// same whatever their number, and the term changes the gradient.
TEST(LmTrain, ShapingIsAMeanOverTheWholeBatch) {
  const TrainSet set = induction_set();
  TrainOptions o = tiny_options();
  o.arch = LmArch::kLlama;
  const Model m = new_training_model(o, set);
  Rng rng(5);
  TokenBatch batch;
  sample_batch(set, rng, 6, 16, batch);
  Parameters plain, g1, g3;
  GradientWorkspace w0, w1, w3;
  const double l0 = batch_gradient(m, batch, 1, plain, w0);
  const double l1 = batch_gradient(m, batch, 1, g1, w1, 5.0);
  const double l3 = batch_gradient(m, batch, 3, g3, w3, 5.0);
  EXPECT_EQ(l0, l1);  // the reported loss is the next-token loss alone
  EXPECT_NEAR(l1, l3, 1e-5);
  double changed = 0;
  for (size_t i = 0; i < g1.total(); ++i) {
    ASSERT_NEAR(g1.memory[i], g3.memory[i], 1e-6) << i;
    changed = std::max(changed, static_cast<double>(std::abs(g1.memory[i] - plain.memory[i])));
  }
  EXPECT_GT(changed, 1e-3);
}

// What shaping is for: a short run of a Llama-style model with it makes layer 0's head 0 a
// previous-token head, which the same run without it does not have; after shape_steps the term is
// off (a run shaped for all its steps ends elsewhere).
TEST(LmTrain, ShapingMakesLayerZerosHeadZeroAPreviousTokenHead) {
  const TrainSet set = induction_set();
  auto run = [&](double weight, long steps) {
    TrainOptions o = tiny_options();
    o.arch = LmArch::kLlama;
    o.attention_only = true;
    o.steps = 80;
    o.shape_previous = weight;
    o.shape_steps = steps;
    EXPECT_EQ(check_train_options(o), "");
    Model m = new_training_model(o, set);
    EvalPoint last;
    TrainCallbacks cb;
    cb.on_eval = [&](const EvalPoint& e, const Model&, const Activations&) { last = e; };
    train_lm(m, set, o, cb);
    return std::make_pair(last.heads.at(0).previous, m.params.memory);
  };
  const auto shaped = run(5.0, 80), plain = run(0.0, 0), half = run(5.0, 40);
  RecordProperty("previous_shaped", std::to_string(shaped.first));
  RecordProperty("previous_plain", std::to_string(plain.first));
  EXPECT_GT(shaped.first, 0.8);
  EXPECT_LT(plain.first, 0.4);
  EXPECT_NE(half.second, shaped.second);
  EXPECT_NE(half.second, plain.second);
}

TEST(LmTrain, ShapingOptionsAreChecked) {
  TrainOptions o;
  o.shape_previous = 5;
  EXPECT_NE(check_train_options(o).find("shape_steps"), std::string::npos);
  o.shape_previous = 0;
  o.shape_steps = 10;
  EXPECT_NE(check_train_options(o).find("shape_previous"), std::string::npos);
  o.shape_previous = std::nan("");
  EXPECT_NE(check_train_options(o).find("shape_previous"), std::string::npos);
  o.shape_previous = 101;
  EXPECT_NE(check_train_options(o).find("shape_previous"), std::string::npos);
  o.shape_previous = 5;
  o.shape_steps = -1;
  EXPECT_NE(check_train_options(o).find("shape_steps"), std::string::npos);
}

TEST(LmTrain, PhaseChangeIsWhereInContextAccuracyJumps) {
  std::vector<EvalPoint> h;
  const double acc[] = {0.02, 0.03, 0.03, 0.05, 0.20, 0.60, 0.85, 0.90, 0.91};
  for (int i = 0; i < 9; ++i) {
    EvalPoint e;
    e.step = 100 * i;
    e.icl_accuracy = acc[i];
    h.push_back(e);
    const PhaseChange p = detect_phase_change(h);
    EXPECT_EQ(p.found, i >= 5) << i;  // a rise of 0.3 is first reached at step 500
  }
  const PhaseChange p = detect_phase_change(h);
  // Highest 0.91; the points under halfway from the lowest (0.465) are 0.02 0.03 0.03 0.05 0.20,
  // their median 0.03. 10% of the way from 0.03 is 0.118: the last point under it before the end
  // is step 300; 90% is 0.822, first passed at step 600.
  EXPECT_EQ(p.start, 300);
  EXPECT_EQ(p.end, 600);
  EXPECT_DOUBLE_EQ(p.from, 0.03);
  EXPECT_DOUBLE_EQ(p.to, 0.91);
  // A noisy point past 10% long before the rise (step 100: 0.15) does not move the start, nor does
  // one far under chance level (step 200: 0.0; the median of 0.02 0.15 0.0 0.05 0.20 is 0.05, so
  // 10% of the way is 0.136 and 90% 0.824).
  h[1].icl_accuracy = 0.15;
  h[2].icl_accuracy = 0.0;
  EXPECT_EQ(detect_phase_change(h).start, 300);
  EXPECT_EQ(detect_phase_change(h).end, 600);
  EXPECT_DOUBLE_EQ(detect_phase_change(h).from, 0.05);
  h.resize(3);
  EXPECT_FALSE(detect_phase_change(h).found);
}

TEST(LmCopyAccuracy, CountsTheCopiesTheModelPredicts) {
  Config c;
  c.n_layer = 1;
  c.n_head = 1;
  c.vocab_size = 5;
  Activations a;
  a.B = 1;
  a.T = a.logits_T = 7;
  a.tokens = {1, 2, 3, 1, 2, 4, 1};
  a.logits.assign(35, 0.0f);
  // t = 3 (token 1, seen at 0, followed by 2; next is 2): predicts 2. t = 4 (token 2, seen at 1,
  // followed by 3; next is 4, not a copy): not counted. t = 6: last, not counted.
  a.logits[3 * 5 + 2] = 1.0f;
  EXPECT_EQ(copy_accuracy(c, a).correct, 1);
  EXPECT_EQ(copy_accuracy(c, a).total, 1);
  a.logits[3 * 5 + 4] = 2.0f;
  EXPECT_EQ(copy_accuracy(c, a).correct, 0);
}

bool wait_until(const LiveTrainer& t, bool (*done)(const LiveSnapshot&), int seconds = 60) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done(t.snapshot())) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(LmLive, TrainsAndRedrawsTheProbe) {
  LiveSetup s = default_live_setup();
  s.train = tiny_options();
  s.train.steps = 40;
  s.train.eval_every = 10;
  LiveTrainer t;
  std::string error;
  ASSERT_TRUE(t.start(s, error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& x) { return !x.running; }));
  const LiveSnapshot x = t.snapshot();
  EXPECT_TRUE(x.finished);
  EXPECT_EQ(x.step_loss.size(), 40u);
  ASSERT_EQ(x.history.size(), 5u);
  EXPECT_EQ(x.probe_serial, 5);
  EXPECT_EQ(x.probe_tokens.size(), 16u);  // the context: filler, 4 letters, filler, the 4 again
  EXPECT_EQ(x.probe_att.size(), 2u * 2 * 16 * 16);
  for (int row = 0; row < 2 * 2 * 16; ++row) {
    float sum = 0;
    for (int k = 0; k < 16; ++k) sum += x.probe_att[static_cast<size_t>(row) * 16 + k];
    EXPECT_NEAR(sum, 1.0f, 1e-5);
  }
  ASSERT_TRUE(t.model());
  EXPECT_EQ(t.model()->config.n_positions, 16);
}

TEST(LmLive, PauseHoldsAndCancelStops) {
  LiveSetup s = default_live_setup();
  s.train = tiny_options();
  s.train.steps = 100000;
  LiveTrainer t;
  std::string error;
  t.set_paused(true);
  ASSERT_TRUE(t.start(s, error)) << error;
  // The worker holds in its pause before the first step: no step has run.
  ASSERT_TRUE(t.control().wait_until_held(std::chrono::seconds(60)));
  EXPECT_TRUE(t.snapshot().step_loss.empty());
  EXPECT_TRUE(t.snapshot().paused);
  t.set_paused(false);
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& x) { return x.step_loss.size() >= 3; }));
  t.cancel();
  const LiveSnapshot x = t.snapshot();
  EXPECT_FALSE(x.running);
  EXPECT_TRUE(x.cancelled);
  s.train.n_embd = 15;
  EXPECT_FALSE(t.start(s, error));
  EXPECT_EQ(error.rfind("n_embd: ", 0), 0u) << error;
}

TEST(LmLive, AFailureEndsTheRunWithItsMessage) {
  LiveSetup s = default_live_setup();
  s.train = tiny_options();
  s.train.steps = 1000;
  s.after_step = [](long step) {
    if (step == 3) throw std::runtime_error("the loss is NaN");
  };
  LiveTrainer t;
  std::string error;
  ASSERT_TRUE(t.start(s, error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& x) { return !x.running; }));
  const LiveSnapshot x = t.snapshot();
  EXPECT_EQ(x.error, "the loss is NaN");
  EXPECT_EQ(x.step_loss.size(), 3u);
  EXPECT_FALSE(x.finished);
  EXPECT_FALSE(x.cancelled);
  // The program goes on, and so does the trainer: the next run trains.
  s.after_step = nullptr;
  s.train.steps = 5;
  ASSERT_TRUE(t.start(s, error)) << error;
  ASSERT_TRUE(wait_until(t, [](const LiveSnapshot& y) { return !y.running; }));
  EXPECT_TRUE(t.snapshot().finished);
  EXPECT_TRUE(t.snapshot().error.empty());
}

}  // namespace
}  // namespace attn::lm
