// Tests for Bahdanau's additive score (attention/additive.h) as the stepper's score function:
// every stage of the trace, compute's outputs and the narration against an independent double
// loop; the scenario field, the CLI flags and their errors; OpenCL routed to the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attention/engine.h"
#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "io/examples.h"
#include "io/npy.h"
#include "io/scenario_json.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

struct Ref {
  std::vector<std::vector<double>> scores, weights, output;  // one head
};

// Additive attention of head h in double: s_ij = Σ_a v_a tanh(Σ_c Wq[a,c] q[i,c] + Σ_c Wk[a,c]
// k[j,c]), times the scale, −∞ where `hidden` (taken from the dot-product reference's −∞
// cells, whose mask rules are the reference's own), then softmax / T and the weighted sum.
Ref additive_reference(const AttentionProblem& p, int h, const test::RefMat& masked_dot) {
  const AdditiveScore& a = *p.options.additive;
  const Matrix& Q = p.input.q[static_cast<size_t>(h)];
  const Matrix& K = p.input.k[static_cast<size_t>(p.input.kv_head_of(h))];
  const Matrix& V = p.input.v[static_cast<size_t>(p.input.kv_head_of(h))];
  const double scale = p.options.scale ? *p.options.scale : 1.0;
  const double T = p.options.temperature;
  Ref r;
  for (int i = 0; i < Q.rows(); ++i) {
    std::vector<double> s(static_cast<size_t>(K.rows())), x(s.size());
    double m = -INFINITY;
    for (int j = 0; j < K.rows(); ++j) {
      double sum = 0;
      for (int u = 0; u < a.v.size(); ++u) {
        double pre = 0;
        for (int c = 0; c < Q.cols(); ++c)
          pre += double(a.w_q(u, c)) * Q(i, c) + double(a.w_k(u, c)) * K(j, c);
        sum += a.v[u] * std::tanh(pre);
      }
      s[static_cast<size_t>(j)] = sum;
      x[static_cast<size_t>(j)] = std::isinf(masked_dot(i, j)) ? -INFINITY : sum * scale / T;
      m = std::max(m, x[static_cast<size_t>(j)]);
    }
    std::vector<double> w(s.size(), 0.0), o(static_cast<size_t>(V.cols()), 0.0);
    if (!std::isinf(m)) {
      double total = 0;
      for (size_t j = 0; j < s.size(); ++j)
        total += w[j] = std::isinf(x[j]) ? 0.0 : std::exp(x[j] - m);
      for (size_t j = 0; j < s.size(); ++j) {
        w[j] /= total;
        for (int c = 0; c < V.cols(); ++c)
          o[static_cast<size_t>(c)] += w[j] * V(static_cast<int>(j), c);
      }
    }
    r.scores.push_back(s);
    r.weights.push_back(w);
    r.output.push_back(o);
  }
  return r;
}

AdditiveScore random_additive(int d_a, int d_k, std::mt19937& rng) {
  AdditiveScore a;
  a.w_q = test::random_matrix(d_a, d_k, rng);
  a.w_k = test::random_matrix(d_a, d_k, rng);
  a.v = test::random_matrix(1, d_a, rng).row(0);
  return a;
}

TEST(Additive, EveryStageMatchesAnIndependentDoubleLoop) {
  std::mt19937 rng(16);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  for (int trial = 0; trial < 8; ++trial) {
    const int H = 1 + trial % 3, n_q = 2 + trial, n_k = 3 + (trial * 5) % 7, d_k = 2 + trial % 4;
    AttentionProblem p;
    p.input.q = test::random_heads(H, n_q, d_k, rng);
    p.input.k = test::random_heads(H, n_k, d_k, rng);
    p.input.v = test::random_heads(H, n_k, 2 + trial % 3, rng);
    if (trial % 2) p.options.mask.causal = CausalAlign::kTopLeft;
    if (trial % 3 == 2) p.options.scale = 0.7f;
    if (trial % 4 == 3) p.options.temperature = 1.5f;
    p.options.additive = random_additive(1 + trial % 5, d_k, rng);
    ASSERT_EQ(validate_problem(p), "");
    const AttentionTrace t = compute_trace(p, *cpu);
    AttentionProblem dot = p;
    dot.options.additive.reset();
    const test::RefResult masks = test::reference_attention(dot);
    for (int h = 0; h < H; ++h) {
      const Ref r = additive_reference(p, h, masks.masked[static_cast<size_t>(h)]);
      const double scale = p.options.scale ? *p.options.scale : 1.0;
      for (int i = 0; i < n_q; ++i)
        for (int j = 0; j < n_k; ++j) {
          const double s = r.scores[i][j];
          EXPECT_NEAR(t.head(StageId::kScores, h)(i, j), s, 1e-5) << trial;
          EXPECT_NEAR(t.head(StageId::kScaled, h)(i, j), s * scale, 1e-5) << trial;
          if (std::isinf(masks.masked[static_cast<size_t>(h)](i, j))) {
            EXPECT_TRUE(std::isinf(t.head(StageId::kMasked, h)(i, j)));
          } else {
            EXPECT_NEAR(t.head(StageId::kMasked, h)(i, j), s * scale, 1e-5) << trial;
          }
          EXPECT_NEAR(t.head(StageId::kWeights, h)(i, j), r.weights[i][j], 1e-5) << trial;
        }
      for (int i = 0; i < n_q; ++i)
        for (int c = 0; c < p.input.d_v(); ++c)
          EXPECT_NEAR(t.head(StageId::kOutput, h)(i, c), r.output[i][c], 1e-5) << trial;
      // The outputs-only path (compute without --weights) takes the staged blocks.
      const HeadStack out = cpu->run_output(p);
      for (int i = 0; i < n_q; ++i)
        for (int c = 0; c < p.input.d_v(); ++c)
          EXPECT_NEAR(out[static_cast<size_t>(h)](i, c), r.output[i][c], 1e-5) << trial;
    }
  }
}

TEST(Additive, BadShapesAreNamed) {
  std::mt19937 rng(3);
  AttentionProblem p;
  p.input.q = test::random_heads(1, 2, 3, rng);
  p.input.k = test::random_heads(1, 2, 3, rng);
  p.input.v = test::random_heads(1, 2, 3, rng);
  p.options.additive = random_additive(4, 2, rng);
  EXPECT_NE(validate_problem(p).find("additive W_q has shape (4, 2); expected (d_a, d_k) = (4, 3)"),
            std::string::npos)
      << validate_problem(p);
  p.options.additive = random_additive(4, 3, rng);
  p.options.additive->v = RowVector(2);
  p.options.additive->v << 1, 2;
  EXPECT_NE(validate_problem(p).find("additive W_q"), std::string::npos);
}

TEST(Additive, ExampleNarratesTheArithmeticAndRoundTripsThroughJson) {
  std::string error;
  std::optional<Scenario> s = load_example("additive", error);
  ASSERT_TRUE(s) << error;
  ASSERT_TRUE(s->options.additive);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace t = compute_scenario_trace(*s, *cpu);
  EXPECT_EQ(t.scale, 1.0f);
  ExplainRequest req;
  req.query = 1;
  const std::string text = explain(t, req, error);
  EXPECT_NE(text.find("W_q q_is = "), std::string::npos) << text;
  EXPECT_NE(text.find("Scaling: none for the additive score"), std::string::npos) << text;
  // The score of (is, the), worked by hand from the example's tables in double.
  const double q[3] = {0.5, 0.2, 0.3}, k[3] = {0.4, 0.2, 0.5};
  const double wq[4][3] = {{0.5, -0.3, 0.8}, {0.2, 0.7, -0.4}, {-0.6, 0.1, 0.3}, {0.4, 0.4, 0.4}};
  const double wk[4][3] = {{0.3, 0.6, -0.2}, {-0.5, 0.2, 0.9}, {0.7, -0.4, 0.1}, {0.1, 0.3, -0.6}};
  const double v[4] = {0.9, -0.7, 0.6, 1.1};
  double score = 0;
  for (int a = 0; a < 4; ++a) {
    double pre = 0;
    for (int c = 0; c < 3; ++c) pre += wq[a][c] * q[c] + wk[a][c] * k[c];
    score += v[a] * std::tanh(pre);
  }
  EXPECT_NEAR(t.head(StageId::kScores, 0)(1, 2), score, 1e-6);
  // The trace of one row (what `explain` computes) keeps the score function too.
  const AttentionTrace row = compute_scenario_trace_rows(*s, *cpu, 1, 2);
  EXPECT_NEAR(row.head(StageId::kScores, 0)(0, 2), score, 1e-6);
  EXPECT_EQ(explain(row, req, error), text);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", score);
  std::string printed = buf;
  while (printed.back() == '0') printed.pop_back();
  if (printed[0] == '-') printed = "−" + printed.substr(1);
  EXPECT_NE(text.find("= " + printed + "\n"), std::string::npos) << printed << "\n" << text;
  // Saved and read back, the scenario keeps its score function.
  std::optional<Scenario> back = parse_scenario_json(scenario_to_json(*s), "round-trip", error);
  ASSERT_TRUE(back) << error;
  ASSERT_TRUE(back->options.additive);
  EXPECT_EQ(back->options.additive->w_k, s->options.additive->w_k);
  EXPECT_EQ(back->options.additive->v, s->options.additive->v);
}

TEST(Additive, OpenClRoutesTheTraceToTheCpu) {
  const std::vector<std::string> names = available_backends();
  if (std::find(names.begin(), names.end(), "opencl") == names.end())
    GTEST_SKIP() << "no OpenCL in this build";
  std::string error;
  std::unique_ptr<Backend> ocl = make_backend("opencl", error);
  if (!ocl) GTEST_SKIP() << error;
  std::optional<Scenario> s = load_example("additive", error);
  ASSERT_TRUE(s) << error;
  EXPECT_FALSE(ocl->supports_trace(to_problem(*s)));
  EXPECT_FALSE(ocl->supports_outputs(to_problem(*s)));
  const AttentionTrace t = compute_scenario_trace(*s, *ocl);
  EXPECT_EQ(t.backend, "cpu");
}

class AdditiveCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = test::temp_dir("additive-cli");
    auto put = [&](const std::string& name, const std::vector<long long>& shape,
                   const std::vector<double>& values) {
      ASSERT_TRUE(test::write_bytes(dir + "/" + name, test::npy_fixture("<f4", shape, values)));
    };
    put("q.npy", {2, 3}, {0.2, 0.1, 0.8, 0.5, 0.2, 0.3});
    put("k.npy", {3, 3}, {0.3, 0.5, 0.2, 0.1, 0.4, 0.6, 0.4, 0.2, 0.5});
    put("v.npy", {3, 2}, {0.1, 0.7, 0.8, 0.1, 0.2, 0.9});
    put("wq.npy", {2, 3}, {0.5, -0.3, 0.8, 0.2, 0.7, -0.4});
    put("wk.npy", {2, 3}, {0.3, 0.6, -0.2, -0.5, 0.2, 0.9});
    put("av.npy", {1, 2}, {0.9, -0.7});
    put("bad.npy", {2, 2}, {1, 2, 3, 4});
  }
  std::string f(const std::string& name) const { return "'" + dir + "/" + name + "'"; }
  std::string args() const {
    return "--q " + f("q.npy") + " --k " + f("k.npy") + " --v " + f("v.npy");
  }
  std::string dir;
};

TEST_F(AdditiveCli, ComputeMatchesTheReference) {
  const std::string out = dir + "/o.npy", w = dir + "/w.npy";
  test::CliResult r = test::run_cli(
      "compute " + args() + " --score additive --additive-wq " + f("wq.npy") + " --additive-wk " +
      f("wk.npy") + " --additive-v " + f("av.npy") + " --out '" + out + "' --weights '" + w + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string error;
  std::optional<NpyTensor> o = read_npy(out, NpyContent::kFloat, error);
  ASSERT_TRUE(o) << error;
  AttentionProblem p;
  p.input.q = {(Matrix(2, 3) << 0.2f, 0.1f, 0.8f, 0.5f, 0.2f, 0.3f).finished()};
  p.input.k = {(Matrix(3, 3) << 0.3f, 0.5f, 0.2f, 0.1f, 0.4f, 0.6f, 0.4f, 0.2f, 0.5f).finished()};
  p.input.v = {(Matrix(3, 2) << 0.1f, 0.7f, 0.8f, 0.1f, 0.2f, 0.9f).finished()};
  AdditiveScore a;
  a.w_q = (Matrix(2, 3) << 0.5f, -0.3f, 0.8f, 0.2f, 0.7f, -0.4f).finished();
  a.w_k = (Matrix(2, 3) << 0.3f, 0.6f, -0.2f, -0.5f, 0.2f, 0.9f).finished();
  a.v = (RowVector(2) << 0.9f, -0.7f).finished();
  p.options.additive = a;
  test::RefMat none{2, 3, std::vector<double>(6, 0.0)};
  const Ref ref = additive_reference(p, 0, none);
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(o->heads[0](i, c), ref.output[i][c], 1e-5);
  std::optional<NpyTensor> wt = read_npy(w, NpyContent::kFloat, error);
  ASSERT_TRUE(wt) << error;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(wt->heads[0](i, j), ref.weights[i][j], 1e-5);
}

TEST_F(AdditiveCli, BadFlagsAreUsageErrors) {
  const std::string out = " --out '" + dir + "/x.npy'";
  struct Case {
    std::string flags, says;
  } cases[] = {
      {"--score additive", "--score additive: needs --additive-wq"},
      {"--additive-wq " + f("wq.npy"), "need --score additive"},
      {"--score additive --additive-wq " + f("bad.npy") + " --additive-wk " + f("wk.npy") +
           " --additive-v " + f("av.npy"),
       "additive W_q has shape (2, 2); expected (d_a, d_k) = (2, 3)"},
      {"--score additive --additive-wq " + f("wq.npy") + " --additive-wk " + f("wk.npy") +
           " --additive-v " + f("wq.npy"),
       "--additive-v"},
      {"--score additive --additive-wq " + f("nothere.npy") + " --additive-wk " + f("wk.npy") +
           " --additive-v " + f("av.npy"),
       "--additive-wq"},
      {"--score additive --additive-wq " + f("wq.npy") + " --additive-wk " + f("wk.npy") +
           " --additive-v " + f("av.npy") + " --backend opencl",
       "--backend opencl: the additive score"},
      {"--score bahdanau", "--score"},
  };
  for (const Case& c : cases) {
    test::CliResult r = test::run_cli("compute " + args() + " " + c.flags + out);
    EXPECT_EQ(r.status, 2) << c.flags << "\n" << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.flags << "\n" << r.err;
    EXPECT_FALSE(test::file_exists(dir + "/x.npy"));
  }
}

TEST_F(AdditiveCli, ExplainAndTraceTakeTheFlagsAndDotTurnsTheExampleBack) {
  test::CliResult r = test::run_cli(
      "explain --example fear-is --query 0 --score additive "
      "--additive-wq " +
      f("wq.npy") + " --additive-wk " + f("wk.npy") + " --additive-v " + f("av.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("the additive score v"), std::string::npos) << r.out;
  r = test::run_cli("explain --example additive --query 0 --score dot --step scores");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("q_Fear · k_Fear"), std::string::npos) << r.out;
  r = test::run_cli("trace --example additive");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("vᵀ tanh(W_q q_i + W_k k_j)"), std::string::npos);
}

}  // namespace
}  // namespace attn
