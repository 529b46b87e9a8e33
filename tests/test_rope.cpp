// RoPE as the stepper shows it (attention/rope.h): one vector's pairs before and after the
// rotation and the distance view, against an independent rotation (complex numbers, double); the
// narration of one pair with its numbers; the K/V head a grouped-query head reads and who shares
// it (lm/head_trace.h); the attention sink of the shipped induction model (lm/sinks.h).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attention/rope.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "lm/sinks.h"
#include "reference.h"

namespace attn {
namespace {

// Pair i of x as the complex number x_i + i·x_{i+d/2}, turned by multiplying with e^{i·pos·f_i}:
// the rotation written a second way, in plain double loops.
std::vector<double> turned(const std::vector<double>& x, int pos, const std::vector<double>& f) {
  const size_t half = x.size() / 2;
  std::vector<double> y(x.size());
  for (size_t i = 0; i < half; ++i) {
    const std::complex<double> z =
        std::complex<double>(x[i], x[i + half]) * std::polar(1.0, pos * f[i]);
    y[i] = z.real();
    y[i + half] = z.imag();
  }
  return y;
}

std::vector<double> row_of(const Matrix& m, int r) {
  std::vector<double> v;
  for (Eigen::Index c = 0; c < m.cols(); ++c) v.push_back(m(r, c));
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<double> frequencies(int half, double base) {
  std::vector<double> f;
  for (int i = 0; i < half; ++i) f.push_back(std::pow(base, -2.0 * i / (2 * half)));
  return f;
}

TEST(Rope, PairsAreTheRotationOfEachPair) {
  std::mt19937 rng(5);
  const Matrix before = test::random_matrix(4, 8, rng);
  const std::vector<double> f = frequencies(4, 10000);
  for (int row = 0; row < 4; ++row)
    for (int pos : {0, 1, 7, 300}) {
      const std::vector<RopePair> p = rope_pairs(before, row, pos, f);
      const std::vector<double> want = turned(row_of(before, row), pos, f);
      ASSERT_EQ(p.size(), 4u);
      for (int i = 0; i < 4; ++i) {
        const RopePair& q = p[static_cast<size_t>(i)];
        EXPECT_EQ(q.i, i);
        EXPECT_DOUBLE_EQ(q.theta, f[static_cast<size_t>(i)]);
        EXPECT_DOUBLE_EQ(q.angle, pos * f[static_cast<size_t>(i)]);
        EXPECT_EQ(q.x0, before(row, i));
        EXPECT_EQ(q.x1, before(row, i + 4));
        EXPECT_NEAR(q.y0, want[static_cast<size_t>(i)], 1e-12);
        EXPECT_NEAR(q.y1, want[static_cast<size_t>(i + 4)], 1e-12);
        // A rotation keeps each pair's length.
        EXPECT_NEAR(std::hypot(q.y0, q.y1), std::hypot(q.x0, q.x1), 1e-12);
      }
    }
}

// The distance view: every cell is RoPE(q, a)·RoPE(k, b) computed independently, and equals the
// closed form that depends on a − b only; each diagonal holds one number.
TEST(Rope, DistanceScoresDependOnTheDistanceOnly) {
  std::mt19937 rng(11);
  const Matrix qb = test::random_matrix(3, 6, rng), kb = test::random_matrix(5, 6, rng);
  const std::vector<double> f = frequencies(3, 100);
  const int n = 9;
  const Matrix m = rope_distance_scores(qb, 2, kb, 4, f, n);
  ASSERT_EQ(m.rows(), n);
  ASSERT_EQ(m.cols(), n);
  const std::vector<double> q = row_of(qb, 2), k = row_of(kb, 4);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      const double want = dot(turned(q, a, f), turned(k, b, f));
      EXPECT_NEAR(m(a, b), want, 1e-5) << a << "," << b;
      EXPECT_NEAR(rope_score(qb, 2, a, kb, 4, b, f), want, 1e-12);
      // Re(q̃ · conj(k̃) · e^{i(a−b)θ}) summed over pairs: a function of a − b alone.
      double closed = 0;
      for (int i = 0; i < 3; ++i) {
        const double ang = (a - b) * f[static_cast<size_t>(i)];
        closed += (q[i] * k[i] + q[i + 3] * k[i + 3]) * std::cos(ang) -
                  (q[i + 3] * k[i] - q[i] * k[i + 3]) * std::sin(ang);
      }
      EXPECT_NEAR(want, closed, 1e-12) << a << "," << b;
    }
  // The same distance far along: position 1000 and 997 score as 3 and 0 do.
  EXPECT_NEAR(rope_score(qb, 2, 1000, kb, 4, 997, f), m(3, 0), 1e-5);
  EXPECT_LT(rope_diagonal_spread(m), 1e-5);
  EXPECT_GT(std::abs(m(1, 0) - m(0, 1)), 1e-4);  // the two directions differ: it is not symmetric
  // The spread sees a cell off its diagonal's number.
  Matrix bad = m;
  bad(5, 2) += 0.5f;
  EXPECT_NEAR(rope_diagonal_spread(bad), 0.5, 1e-5);
}

// `explain` writes out one pair's rotation with its numbers (pair 0 of the query row) and the
// distance check, for a trace whose Q and K are the rotation of its rope inputs.
TEST(Rope, ExplainNarratesAPairsRotationWithItsNumbers) {
  Scenario s;
  s.name = "rope";
  s.query_tokens = {"a", "b", "c", "d"};
  Matrix qb(4, 4), kb(4, 4);
  qb << 0.5f, -0.25f, 1.0f, 0.75f, 0.2f, 0.4f, -0.6f, 0.8f, 1.0f, 0.0f, 0.0f, 1.0f, -0.3f, 0.9f,
      0.1f, -0.7f;
  kb << 0.1f, 0.2f, 0.3f, 0.4f, -0.5f, 0.6f, -0.7f, 0.8f, 0.9f, -0.1f, 0.2f, -0.3f, 0.4f, 0.5f,
      -0.6f, 0.7f;
  s.rope.inv_freq = {1.0, 0.01};
  s.rope.q_before = {qb};
  s.rope.k_before = {kb};
  Matrix q(4, 4), k(4, 4);
  for (int t = 0; t < 4; ++t) {
    const std::vector<double> qt = turned(row_of(qb, t), t, s.rope.inv_freq);
    const std::vector<double> kt = turned(row_of(kb, t), t, s.rope.inv_freq);
    for (int c = 0; c < 4; ++c) {
      q(t, c) = static_cast<float>(qt[static_cast<size_t>(c)]);
      k(t, c) = static_cast<float>(kt[static_cast<size_t>(c)]);
    }
  }
  s.qkv.q = {q};
  s.qkv.k = {k};
  std::mt19937 rng(2);
  s.qkv.v = {test::random_matrix(4, 3, rng)};
  s.options.mask.causal = CausalAlign::kTopLeft;
  ASSERT_EQ(validate_scenario(s), "");
  ASSERT_TRUE(rope_matches(s));
  const AttentionTrace t = compute_scenario_trace(s, *make_cpu_backend());
  ASSERT_NE(t.find(StageId::kRope), nullptr);
  ExplainRequest req;
  req.query = 3;
  std::string error;
  const std::string text = explain(t, req, error);
  ASSERT_EQ(error, "") << error;
  // Query 3 stands at position 3: pair 0 (dimensions 0 and 2) turns by 3 × 1 = 3 rad.
  // q[0] = −0.3·cos 3 − 0.1·sin 3 = 0.2829…, q[2] = 0.1·cos 3 + (−0.3)·sin 3 = −0.1413….
  const double y0 = -0.3 * std::cos(3.0) - 0.1 * std::sin(3.0);
  const double y2 = 0.1 * std::cos(3.0) + -0.3 * std::sin(3.0);
  char want0[64], want2[64];
  std::snprintf(want0, sizeof want0, "= %.4f", y0);
  std::snprintf(want2, sizeof want2, "= −%.4f", -y2);
  EXPECT_NE(text.find("pair 0: angle 3 × 1 = 3 rad"), std::string::npos) << text;
  EXPECT_NE(text.find("q[0] → −0.3×cos 3 − 0.1×sin 3 " + std::string(want0)), std::string::npos)
      << text;
  EXPECT_NE(text.find("q[2] → 0.1×cos 3 + (−0.3)×sin 3 " + std::string(want2)), std::string::npos)
      << text;
  // The distance check: the same q and k moved along score the same.
  EXPECT_NE(text.find("depends only on the distance"), std::string::npos) << text;
}

lm::Config grouped(int heads, int kv) {
  lm::Config c;
  c.arch = LmArch::kLlama;
  c.n_head = heads;
  c.n_kv_head = kv;
  return c;
}

TEST(Rope, AGroupedHeadNamesItsKvHeadAndWhoSharesIt) {
  EXPECT_EQ(lm::kv_sharers(grouped(6, 2), 4), "3, 5");
  EXPECT_EQ(lm::kv_sharers(grouped(6, 2), 0), "1, 2");
  EXPECT_EQ(lm::kv_head_text(grouped(6, 2), 4), "K/V head 1 of 2, shared with query heads 3, 5");
  EXPECT_EQ(lm::kv_head_text(grouped(4, 2), 3), "K/V head 1 of 2, shared with query head 2");
  // Multi-query: runs of three or more heads as a range.
  EXPECT_EQ(lm::kv_head_text(grouped(8, 1), 3),
            "K/V head 0 of 1, shared with query heads 0–2, 4–7");
  EXPECT_EQ(lm::kv_sharers(grouped(8, 2), 1), "0, 2, 3");
  EXPECT_EQ(lm::kv_sharers(grouped(8, 1), 0), "1–7");
  // Multi-head: each has its own.
  EXPECT_EQ(lm::kv_head_text(grouped(4, 4), 2), "K/V head 2 of 4, read by this query head only");
}

// A head of a small grouped-query model as the stepper opens it: the name and description say
// which K/V head it reads and which query heads share it.
TEST(Rope, AHeadScenarioSaysWhoSharesItsKvHead) {
  lm::Model m;
  m.tokenizer = lm::learn_bpe("the cat sat on the mat", 10);
  lm::Config c;
  c.arch = LmArch::kLlama;
  c.n_layer = 1;
  c.n_head = 6;
  c.n_kv_head = 2;
  c.n_embd = 24;
  c.head_dim = 8;
  c.n_inner = 32;
  c.n_positions = 32;
  c.vocab_size = m.tokenizer.size() + 3;
  lm::init_random_llama(m, c, 3, 0.3f);
  const std::vector<int> ids = m.tokenizer.encode("the cat sat");
  lm::Activations a;
  ASSERT_EQ(lm::checked_forward(m, ids, 1, static_cast<int>(ids.size()), a), "");
  const std::vector<std::string> tokens = lm::display_tokens(m.tokenizer, ids);
  const Scenario s = lm::head_scenario(m, a, 0, 4, tokens, "the cat sat");
  EXPECT_NE(s.name.find("head 4 (K/V head 1 of 2, shared with query heads 3, 5)"),
            std::string::npos)
      << s.name;
  EXPECT_NE(s.description.find("K/V head 1 of 2"), std::string::npos) << s.description;
  EXPECT_NE(s.description.find("shared with query heads 3, 5"), std::string::npos) << s.description;
  // The rope step's distance view on this head's real q and k: one number per diagonal.
  const Matrix d =
      rope_distance_scores(s.rope.q_before[0], 2, s.rope.k_before[0], 1, s.rope.inv_freq, 8);
  EXPECT_LT(rope_diagonal_spread(d), 1e-4 * std::max(1.0f, d.cwiseAbs().maxCoeff()));
}

// The shipped induction model: its strongest sink, with numbers recomputed here by hand from the
// weights, and an explanation written from them.
TEST(Rope, TheInductionModelsSinkIsExplainedWithItsNumbers) {
  lm::Model m;
  std::string error;
  ASSERT_TRUE(
      lm::load_model(std::string(ATTN_SOURCE_DIR) + "/assets/models/lm/induction", m, error))
      << error;
  const lm::Config& c = m.config;
  const std::string text = " q x m b f k z r a w q x m b f k z r a w";
  const std::vector<int> ids = m.tokenizer.encode(text);
  const int T = static_cast<int>(ids.size());
  lm::Activations a;
  ASSERT_EQ(lm::checked_forward(m, ids, 1, T, a), "");
  const std::vector<lm::HeadScores> scores = lm::head_scores(c, a);
  const lm::SinkExample s = lm::strongest_sink(c, a, scores);
  ASSERT_GE(s.layer, 0);
  // The highest first-token score of all heads.
  double best = 0;
  for (const lm::HeadScores& h : scores) best = std::max(best, h.first);
  EXPECT_DOUBLE_EQ(s.first, best);
  EXPECT_DOUBLE_EQ(s.first, scores[static_cast<size_t>(s.layer * c.n_head + s.head)].first);
  // By hand: the first ten letters are new (nothing to copy); the last ten repeat.
  const float* w = a.att_at(c, s.layer, 0, s.head);
  double nothing = 0, something = 0, uniform = 0, peak = 0;
  for (int t = 1; t < T; ++t) {
    (t < 10 ? nothing : something) += w[t * T];
    uniform += 1.0 / (t + 1);
    peak = std::max(peak, static_cast<double>(w[t * T]));
  }
  EXPECT_EQ(s.nothing_queries, 9);
  EXPECT_EQ(s.something_queries, 10);
  EXPECT_NEAR(s.nothing_to_copy, nothing / 9, 1e-6);
  EXPECT_NEAR(s.something_to_copy, something / 10, 1e-6);
  EXPECT_NEAR(s.uniform, uniform / (T - 1), 1e-12);
  EXPECT_NEAR(s.peak, peak, 1e-6);
  // A real sink: well above an even spread, and most of it where there is nothing to copy.
  EXPECT_GT(s.first, 2 * s.uniform);
  EXPECT_GT(s.nothing_to_copy, s.something_to_copy);

  const std::string e = lm::sink_explanation(s, lm::display_tokens(m.tokenizer, ids));
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * s.first);
  EXPECT_NE(e.find("Layer " + std::to_string(s.layer) + ", head " + std::to_string(s.head)),
            std::string::npos)
      << e;
  EXPECT_NE(e.find(std::string("puts ") + pct), std::string::npos) << e;
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * s.nothing_to_copy);
  EXPECT_NE(e.find(pct), std::string::npos) << e;
  EXPECT_NE(e.find("sum to 1"), std::string::npos) << e;
  EXPECT_NE(e.find("Xiao et al. 2023"), std::string::npos) << e;
  // The head that copies where it can is the one that parks where it cannot, and the text says so.
  double best_induction = -1;
  for (const lm::HeadScores& h : scores) best_induction = std::max(best_induction, h.induction);
  EXPECT_EQ(s.best_induction, s.induction == best_induction);
  EXPECT_TRUE(s.best_induction) << "the shipped model's sink is its induction head";
  EXPECT_EQ(e.find("strongest induction head") != std::string::npos, s.best_induction) << e;
}

}  // namespace
}  // namespace attn
