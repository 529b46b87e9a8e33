// Finite-difference gradient checks (double precision, central differences) for every parameter
// of every seq2seq variant: the hand-written BPTT must match the numerical derivative entry by
// entry.
#include <gtest/gtest.h>

#include <cmath>

#include "seq2seq/model.h"

namespace attn::s2s {
namespace {

ModelConfig tiny_config(Score s) {
  ModelConfig c;
  c.score = s;
  c.in_vocab = 7;
  c.out_vocab = 5;
  c.embed = 3;
  c.hidden = 4;
  c.window = 1;  // narrow, so local-m and local-p windows really cut positions
  return c;
}

// Non-square, ragged batch: lengths 5, 3 and 4, three target steps ending with </s>.
Batch tiny_batch() {
  Batch b;
  b.src = {{1, 2, 3, 4, 5}, {6, 1, 2}, {3, 3, 6, 1}};
  b.tgt = {{2, 3, 1}, {4, 2, 1}, {3, 4, 1}};
  return b;
}

// Random parameters everywhere, biases included, so no gradient is trivially zero.
Params<double> random_params(const ModelConfig& c, uint64_t seed) {
  Params<double> p = make_params<double>(c);
  Rng rng(seed);
  p.visit([&rng](const char*, Mat<double>& m) {
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = (2.0 * rng.unit() - 1.0) * 0.8;
  });
  return p;
}

double loss(const ModelConfig& c, const Params<double>& p, const Batch& b) {
  ForwardCache<double> fc;
  forward(c, p, b, fc);
  return fc.loss_sum;
}

class Seq2SeqGradCheck : public ::testing::TestWithParam<Score> {};

TEST_P(Seq2SeqGradCheck, EveryParameterMatchesCentralDifferences) {
  const ModelConfig c = tiny_config(GetParam());
  const Batch batch = tiny_batch();
  Params<double> p = random_params(c, 42 + static_cast<uint64_t>(GetParam()));
  ForwardCache<double> fc;
  forward(c, p, batch, fc);
  Params<double> g = p.zeros_like();
  backward(c, p, fc, 1.0, g);

  std::vector<std::pair<std::string, Mat<double>*>> params, grads;
  p.visit([&](const char* n, Mat<double>& m) { params.emplace_back(n, &m); });
  g.visit([&](const char* n, Mat<double>& m) { grads.emplace_back(n, &m); });
  ASSERT_EQ(params.size(), grads.size());
  const double eps = 1e-6;
  int checked = 0;
  for (size_t k = 0; k < params.size(); ++k) {
    Mat<double>& m = *params[k].second;
    const Mat<double>& gm = *grads[k].second;
    // A parameter the loss ignores would pass trivially: require a non-zero gradient.
    EXPECT_GT(gm.norm(), 1e-8) << params[k].first << " has no gradient";
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      const double keep = m.data()[i];
      m.data()[i] = keep + eps;
      const double up = loss(c, p, batch);
      m.data()[i] = keep - eps;
      const double down = loss(c, p, batch);
      m.data()[i] = keep;
      const double numeric = (up - down) / (2 * eps);
      const double analytic = gm.data()[i];
      EXPECT_NEAR(analytic, numeric, 1e-6 * std::max(1.0, std::abs(numeric)))
          << score_name(c.score) << " " << params[k].first << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

INSTANTIATE_TEST_SUITE_P(AllScores, Seq2SeqGradCheck,
                         ::testing::Values(Score::kNone, Score::kBahdanau, Score::kDot,
                                           Score::kGeneral, Score::kConcat, Score::kLocalP,
                                           Score::kLocalM),
                         [](const ::testing::TestParamInfo<Score>& info) {
                           std::string n = score_name(info.param);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// The loss is a sum over rows: the batched pass must equal the sum of one-row passes, which
// checks that padding (a short row beside a long one) leaks nothing.
TEST(Seq2SeqForward, PaddingDoesNotChangeAnyRow) {
  for (Score s : {Score::kNone, Score::kBahdanau, Score::kDot, Score::kLocalP}) {
    const ModelConfig c = tiny_config(s);
    const Batch batch = tiny_batch();
    const Params<double> p = random_params(c, 7);
    double sum = 0;
    for (size_t r = 0; r < batch.src.size(); ++r) {
      Batch one;
      one.src = {batch.src[r]};
      one.tgt = {batch.tgt[r]};
      sum += loss(c, p, one);
    }
    EXPECT_NEAR(loss(c, p, batch), sum, 1e-10) << score_name(s);
  }
}

}  // namespace
}  // namespace attn::s2s
