// The CPU engine against hand-derived numbers and the independent double-precision reference:
// every mask kind and combination, alignments, empty rows, heads, projections, temperature.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attention/engine.h"
#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/examples.h"
#include "reference.h"

namespace attn {
namespace {

using test::max_abs_diff;
using test::random_heads;
using test::reference_attention;

constexpr float kInf = std::numeric_limits<float>::infinity();

Matrix mat(std::initializer_list<std::initializer_list<float>> rows) {
  Matrix m(rows.size(), rows.begin()->size());
  int i = 0;
  for (auto& r : rows) {
    int j = 0;
    for (float x : r) m(i, j++) = x;
    ++i;
  }
  return m;
}

AttentionTrace run(const AttentionProblem& p) {
  EXPECT_EQ(validate_problem(p), "");
  auto cpu = make_cpu_backend();
  return compute_trace(p, *cpu);
}

// Every stage of the trace matches the reference within `tol`, and the empty rows agree.
void expect_matches_reference(const AttentionProblem& p, double tol = 1e-5) {
  AttentionTrace t = run(p);
  test::RefResult r = reference_attention(p);
  for (int h = 0; h < p.input.num_heads(); ++h) {
    EXPECT_LE(max_abs_diff(t.head(StageId::kScores, h), r.scores[h]), tol) << "head " << h;
    EXPECT_LE(max_abs_diff(t.head(StageId::kScaled, h), r.scaled[h]), tol) << "head " << h;
    EXPECT_LE(max_abs_diff(t.head(StageId::kMasked, h), r.masked[h]), tol) << "head " << h;
    EXPECT_LE(max_abs_diff(t.head(StageId::kWeights, h), r.weights[h]), tol) << "head " << h;
    EXPECT_LE(max_abs_diff(t.head(StageId::kOutput, h), r.output[h]), tol) << "head " << h;
    EXPECT_EQ(t.empty_row[h], r.empty_row[h]) << "head " << h;
    // The trace's reason bits agree with where the masked stage holds -inf.
    for (int i = 0; i < t.n_q; ++i)
      for (int j = 0; j < t.n_k; ++j)
        EXPECT_EQ(t.hidden_of(h)(i, j) != 0, std::isinf(t.head(StageId::kMasked, h)(i, j)))
            << "head " << h << " cell " << i << "," << j;
  }
}

AttentionProblem fear_is() {
  AttentionProblem p;
  p.input.q = {mat({{0.2f, 0.1f, 0.8f}, {0.5f, 0.2f, 0.3f}})};
  p.input.k = {mat({{0.3f, 0.5f, 0.2f}, {0.1f, 0.4f, 0.6f}})};
  p.input.v = {mat({{0.1f, 0.7f, 0.4f}, {0.8f, 0.1f, 0.2f}})};
  return p;
}

TEST(Engine, FearIsScoresByHand) {
  // q_Fear·k_Fear = 0.2·0.3 + 0.1·0.5 + 0.8·0.2 = 0.06 + 0.05 + 0.16 = 0.27
  // q_Fear·k_is   = 0.2·0.1 + 0.1·0.4 + 0.8·0.6 = 0.02 + 0.04 + 0.48 = 0.54
  // q_is·k_Fear   = 0.5·0.3 + 0.2·0.5 + 0.3·0.2 = 0.15 + 0.10 + 0.06 = 0.31
  // q_is·k_is     = 0.5·0.1 + 0.2·0.4 + 0.3·0.6 = 0.05 + 0.08 + 0.18 = 0.31
  // (The source's "Show calculations" uses q_is·k_is for the Fear row and gets 0.38; both wrong.)
  AttentionTrace t = run(fear_is());
  const Matrix& s = t.head(StageId::kScores, 0);
  EXPECT_NEAR(s(0, 0), 0.27, 1e-6);
  EXPECT_NEAR(s(0, 1), 0.54, 1e-6);
  EXPECT_NEAR(s(1, 0), 0.31, 1e-6);
  EXPECT_NEAR(s(1, 1), 0.31, 1e-6);
  // scaled = s/√3; weights row 0 = softmax(0.27/√3, 0.54/√3): w1 = 1/(1+e^{-0.27/√3}).
  const double w01 = 1.0 / (1.0 + std::exp(-0.27 / std::sqrt(3.0)));
  EXPECT_NEAR(t.head(StageId::kWeights, 0)(0, 1), w01, 1e-6);
  EXPECT_NEAR(t.head(StageId::kWeights, 0)(1, 0), 0.5, 1e-6);  // equal scores -> equal weights
  // output row 1 = 0.5·v_Fear + 0.5·v_is = (0.45, 0.4, 0.3)
  EXPECT_NEAR(t.head(StageId::kOutput, 0)(1, 0), 0.45, 1e-6);
  EXPECT_NEAR(t.head(StageId::kOutput, 0)(1, 1), 0.40, 1e-6);
  EXPECT_NEAR(t.head(StageId::kOutput, 0)(1, 2), 0.30, 1e-6);
  expect_matches_reference(fear_is());
  std::vector<StageId> ids;
  for (const auto& st : t.steps) ids.push_back(st.id);
  EXPECT_EQ(ids, (std::vector<StageId>{StageId::kQ, StageId::kK, StageId::kV, StageId::kScores,
                                       StageId::kScaled, StageId::kMasked, StageId::kWeights,
                                       StageId::kOutput}));
}

TEST(Engine, FearIsTheCausalByHand) {
  std::string error;
  auto s = load_example("fear-is-the", error);
  ASSERT_TRUE(s) << error;
  auto cpu = make_cpu_backend();
  AttentionTrace t = compute_scenario_trace(*s, *cpu);
  const Matrix& w = t.head(StageId::kWeights, 0);
  // Row "Fear" sees only itself; row "is" sees Fear and is with equal scores 0.31 and 0.31.
  EXPECT_FLOAT_EQ(w(0, 0), 1.0f);
  EXPECT_EQ(w(0, 1), 0.0f);
  EXPECT_NEAR(w(1, 0), 0.5, 1e-6);
  EXPECT_NEAR(w(1, 1), 0.5, 1e-6);
  EXPECT_EQ(w(1, 2), 0.0f);
  EXPECT_TRUE(std::isinf(t.head(StageId::kMasked, 0)(1, 2)));
  EXPECT_EQ(t.hidden_of(0)(1, 2), kHiddenCausal);
  // q_is·k_the = 0.5·0.4 + 0.2·0.2 + 0.3·0.5 = 0.2 + 0.04 + 0.15 = 0.39 (the source says 0.41)
  EXPECT_NEAR(t.head(StageId::kScores, 0)(1, 2), 0.39, 1e-6);
  EXPECT_EQ(t.query_tokens, (std::vector<std::string>{"Fear", "is", "the"}));
}

struct MaskCase {
  const char* name;
  int n_q, n_k, d_k, d_v, H, H_kv;
  MaskSpec mask;
  float temperature;
  std::optional<float> scale;
};

void PrintTo(const MaskCase& c, std::ostream* os) { *os << c.name; }

class EngineMasks : public ::testing::TestWithParam<MaskCase> {};

TEST_P(EngineMasks, MatchesReference) {
  const MaskCase& c = GetParam();
  std::mt19937 rng(1234);
  AttentionProblem p;
  p.input.q = random_heads(c.H, c.n_q, c.d_k, rng);
  p.input.k = random_heads(c.H_kv, c.n_k, c.d_k, rng);
  p.input.v = random_heads(c.H_kv, c.n_k, c.d_v, rng);
  p.options.mask = c.mask;
  p.options.temperature = c.temperature;
  p.options.scale = c.scale;
  expect_matches_reference(p);
}

MaskSpec causal(CausalAlign a) {
  MaskSpec m;
  m.causal = a;
  return m;
}
MaskSpec with_window(MaskSpec m, int w, std::vector<int> g = {}) {
  m.window = w;
  m.global = std::move(g);
  return m;
}
MaskSpec with_length(MaskSpec m, int l) {
  m.key_length = l;
  return m;
}
MaskSpec with_custom(MaskSpec m, int heads, int n_q, int n_k, unsigned seed) {
  std::mt19937 rng(seed);
  for (int h = 0; h < heads; ++h) {
    Matrix c(n_q, n_k);
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j) c(i, j) = (rng() % 3 == 0) ? 0.0f : 1.0f;
    m.custom.push_back(c);
  }
  return m;
}
MaskSpec with_bias(MaskSpec m, int heads, int n_q, int n_k, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  for (int h = 0; h < heads; ++h) {
    Matrix b(n_q, n_k);
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j) b(i, j) = (rng() % 4 == 0) ? -kInf : d(rng);
    m.bias.push_back(b);
  }
  return m;
}

const MaskSpec kNone{};
using CA = CausalAlign;
// One row per case: name, n_q, n_k, d_k, d_v, H, H_kv, mask, temperature, scale.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    AllKinds, EngineMasks,
    ::testing::Values(
        MaskCase{"none", 5, 7, 4, 3, 1, 1, kNone, 1.0f, {}},
        MaskCase{"causal_top_left", 6, 6, 4, 5, 1, 1, causal(CA::kTopLeft), 1.0f, {}},
        MaskCase{"causal_tl_rect", 4, 9, 3, 2, 2, 2, causal(CA::kTopLeft), 1.0f, {}},
        MaskCase{"causal_lower_right", 4, 9, 3, 2, 2, 1, causal(CA::kLowerRight), 1.0f, {}},
        MaskCase{"causal_lr_more_queries", 7, 3, 3, 2, 1, 1, causal(CA::kLowerRight), 1.0f, {}},
        MaskCase{"window", 9, 9, 4, 4, 1, 1, with_window(kNone, 2), 1.0f, {}},
        MaskCase{"window_global", 9, 9, 4, 4, 2, 1, with_window(kNone, 1, {0, 5}), 1.0f, {}},
        MaskCase{"causal_window", 10, 10, 4, 3, 1, 1, with_window(causal(CA::kTopLeft), 2), 1.0f, {}},
        MaskCase{"causal_window_global", 10, 10, 4, 3, 1, 1,
                 with_window(causal(CA::kTopLeft), 1, {0, 7}), 1.0f, {}},
        MaskCase{"lr_window", 5, 12, 4, 3, 1, 1, with_window(causal(CA::kLowerRight), 3), 1.0f, {}},
        MaskCase{"lr_window_global", 4, 9, 4, 3, 1, 1,
                 with_window(causal(CA::kLowerRight), 1, {1, 6}), 1.0f, {}},
        MaskCase{"key_length", 5, 8, 4, 3, 1, 1, with_length(kNone, 5), 1.0f, {}},
        MaskCase{"key_length_zero", 3, 4, 2, 2, 1, 1, with_length(kNone, 0), 1.0f, {}},
        MaskCase{"causal_padding", 6, 6, 3, 3, 2, 1, with_length(causal(CA::kTopLeft), 4), 1.0f, {}},
        MaskCase{"custom_shared", 5, 6, 3, 4, 4, 2, with_custom(kNone, 1, 5, 6, 1), 1.0f, {}},
        MaskCase{"custom_per_head", 5, 6, 3, 4, 4, 2, with_custom(kNone, 4, 5, 6, 2), 1.0f, {}},
        MaskCase{"bias", 5, 6, 3, 4, 2, 2, with_bias(kNone, 1, 5, 6, 3), 1.0f, {}},
        MaskCase{"bias_per_head_causal", 6, 6, 3, 4, 3, 1,
                 with_bias(causal(CA::kTopLeft), 3, 6, 6, 4), 1.0f, {}},
        MaskCase{"everything", 8, 8, 4, 3, 4, 2,
                 with_bias(with_custom(with_length(with_window(causal(CA::kTopLeft), 2, {1}), 7),
                                       4, 8, 8, 5), 1, 8, 8, 6), 1.0f, {}},
        MaskCase{"temperature_sharp", 5, 5, 4, 4, 1, 1, kNone, 0.25f, {}},
        MaskCase{"temperature_flat", 5, 5, 4, 4, 1, 1, kNone, 4.0f, {}},
        MaskCase{"scale_override", 5, 5, 4, 4, 1, 1, kNone, 1.0f, 1.0f},
        MaskCase{"mqa", 5, 5, 4, 3, 4, 1, causal(CA::kTopLeft), 1.0f, {}},
        MaskCase{"gqa", 5, 7, 4, 3, 6, 3, kNone, 1.0f, {}},
        MaskCase{"single_token", 1, 1, 1, 1, 1, 1, kNone, 1.0f, {}}),
    [](const ::testing::TestParamInfo<MaskCase>& info) { return std::string(info.param.name); });
// clang-format on

// The exact visibility patterns, written out by hand.
std::vector<std::string> pattern(const AttentionTrace& t, int h = 0) {
  std::vector<std::string> rows;
  for (int i = 0; i < t.n_q; ++i) {
    std::string r;
    for (int j = 0; j < t.n_k; ++j) r += t.hidden_of(h)(i, j) ? '.' : 'x';
    rows.push_back(r);
  }
  return rows;
}

AttentionProblem zeros(int n_q, int n_k, MaskSpec m) {
  AttentionProblem p;
  p.input.q = {Matrix::Zero(n_q, 2)};
  p.input.k = {Matrix::Zero(n_k, 2)};
  p.input.v = {Matrix::Ones(n_k, 2)};
  p.options.mask = std::move(m);
  return p;
}

TEST(EngineMaskPatterns, CausalAlignments) {
  EXPECT_EQ(pattern(run(zeros(2, 4, causal(CausalAlign::kTopLeft)))),
            (std::vector<std::string>{"x...", "xx.."}));
  EXPECT_EQ(pattern(run(zeros(2, 4, causal(CausalAlign::kLowerRight)))),
            (std::vector<std::string>{"xxx.", "xxxx"}));
  // More queries than keys, lower-right: the first queries sit before every key.
  AttentionTrace t = run(zeros(4, 2, causal(CausalAlign::kLowerRight)));
  EXPECT_EQ(pattern(t), (std::vector<std::string>{"..", "..", "x.", "xx"}));
  EXPECT_EQ(t.empty_row[0], (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(t.head(StageId::kWeights, 0).row(0).cwiseAbs().sum(), 0.0f);
  EXPECT_EQ(t.head(StageId::kOutput, 0).row(1).cwiseAbs().sum(), 0.0f);
  EXPECT_TRUE(t.head(StageId::kOutput, 0).allFinite());
}

TEST(EngineMaskPatterns, WindowGlobalAndPadding) {
  EXPECT_EQ(pattern(run(zeros(5, 5, with_window(kNone, 1)))),
            (std::vector<std::string>{"xx...", "xxx..", ".xxx.", "..xxx", "...xx"}));
  EXPECT_EQ(pattern(run(zeros(5, 5, with_window(kNone, 1, {0})))),
            (std::vector<std::string>{"xxxxx", "xxx..", "xxxx.", "x.xxx", "x..xx"}));
  EXPECT_EQ(pattern(run(zeros(5, 5, with_window(causal(CausalAlign::kTopLeft), 1, {0})))),
            (std::vector<std::string>{"x....", "xx...", "xxx..", "x.xx.", "x..xx"}));
  // Lower-right: query i sits at position i + 3; position 6 (query 1) is global, so it sees
  // every earlier key, while position 1 is a global key every query sees.
  EXPECT_EQ(pattern(run(zeros(3, 6, with_window(causal(CausalAlign::kLowerRight), 1, {1, 4})))),
            (std::vector<std::string>{".xxx..", "xxxxx.", ".x..xx"}));
  AttentionTrace t = run(zeros(3, 5, with_length(with_window(kNone, 1), 2)));
  EXPECT_EQ(pattern(t), (std::vector<std::string>{"xx...", "xx...", ".x..."}));
  EXPECT_EQ(t.hidden_of(0)(2, 0), kHiddenWindow);
  EXPECT_EQ(t.hidden_of(0)(2, 3), kHiddenPadding);  // |2 − 3| = 1 is inside the window
  EXPECT_EQ(t.hidden_of(0)(2, 4), kHiddenWindow | kHiddenPadding);
}

TEST(Engine, GqaMappingRecorded) {
  std::mt19937 rng(5);
  AttentionProblem p;
  p.input.q = random_heads(6, 3, 2, rng);
  p.input.k = random_heads(2, 4, 2, rng);
  p.input.v = random_heads(2, 4, 3, rng);
  AttentionTrace t = run(p);
  EXPECT_EQ(t.kv_head_of, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(t.step(StageId::kWeights).kv_head, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(t.step(StageId::kK).heads.size(), 2u);
  EXPECT_EQ(t.num_kv_heads, 2);
}

TEST(Engine, LargeScoresDoNotOverflow) {
  AttentionProblem p;
  p.input.q = {mat({{100.0f, 0.0f}, {-100.0f, 50.0f}})};
  p.input.k = {mat({{100.0f, 1.0f}, {99.0f, 0.0f}, {-100.0f, 100.0f}})};
  p.input.v = {mat({{1.0f}, {2.0f}, {3.0f}})};
  p.options.scale = 1.0f;  // scores up to 1e4
  AttentionTrace t = run(p);
  EXPECT_TRUE(t.head(StageId::kWeights, 0).allFinite());
  EXPECT_TRUE(t.head(StageId::kOutput, 0).allFinite());
  expect_matches_reference(p, 1e-4);
}

TEST(Engine, TinyTemperatureGivesOneHotNotNan) {
  // logits / T around 1e9: the row max and the exponent must use the same rounding.
  std::mt19937 rng(3);
  AttentionProblem p;
  p.input.q = random_heads(2, 6, 5, rng);
  p.input.k = random_heads(1, 7, 5, rng);
  p.input.v = random_heads(1, 7, 3, rng);
  p.options.temperature = 1e-10f;
  AttentionTrace t = run(p);
  test::RefResult r = reference_attention(p);
  for (int h = 0; h < 2; ++h) {
    EXPECT_TRUE(t.head(StageId::kWeights, h).allFinite());
    EXPECT_LE(max_abs_diff(t.head(StageId::kWeights, h), r.weights[h]), 1e-6);
    EXPECT_LE(max_abs_diff(t.head(StageId::kOutput, h), r.output[h]), 1e-6);
  }
}

TEST(Engine, LogitsBeyondFloatAreRefused) {
  AttentionProblem p = fear_is();
  p.input.q[0](1, 2) = 3e19f;
  p.input.k[0](0, 2) = 3e19f;
  std::string e = validate_problem(p);
  EXPECT_NE(e.find("query 1 and key 0"), std::string::npos) << e;
  EXPECT_NE(e.find("overflow float32"), std::string::npos) << e;
  p = fear_is();
  p.options.temperature = 1e-39f;  // 0.54/√3 / 1e-39 ≈ 3e38
  EXPECT_NE(validate_problem(p).find("overflow"), std::string::npos);
}

TEST(Engine, TemperatureSharpensAndFlattens) {
  AttentionProblem p = fear_is();
  p.options.temperature = 0.1f;
  float sharp = run(p).step(StageId::kWeights).heads[0](0, 1);
  p.options.temperature = 10.0f;
  float flat = run(p).step(StageId::kWeights).heads[0](0, 1);
  float normal = run(fear_is()).step(StageId::kWeights).heads[0](0, 1);
  EXPECT_GT(sharp, normal);
  EXPECT_LT(flat, normal);
  EXPECT_GT(flat, 0.5f);
}

TEST(Engine, ValidationNamesTensorAndIndex) {
  AttentionProblem p = fear_is();
  p.input.k[0](1, 2) = std::nanf("");
  EXPECT_EQ(validate_problem(p), "K[1, 2] is nan; expected a finite number");
  p = fear_is();
  p.input.q[0](0, 0) = kInf;
  EXPECT_NE(validate_problem(p).find("Q[0, 0] is inf"), std::string::npos);
  p = fear_is();
  p.input.v[0] = Matrix::Zero(3, 2);
  EXPECT_NE(validate_problem(p).find("V head 0 has shape (3, 2)"), std::string::npos);
  std::mt19937 rng(1);
  p.input.q = random_heads(3, 2, 3, rng);
  p.input.k = random_heads(2, 2, 3, rng);
  p.input.v = random_heads(2, 2, 3, rng);
  EXPECT_NE(validate_problem(p).find("not a multiple"), std::string::npos);
  p = fear_is();
  p.options.temperature = 0;
  EXPECT_NE(validate_problem(p).find("temperature"), std::string::npos);
  p = fear_is();
  p.options.mask.custom = {Matrix::Ones(2, 3)};
  EXPECT_NE(validate_problem(p).find("mask head 0 has shape (2, 3)"), std::string::npos);
  p = fear_is();
  p.options.mask.bias = {Matrix::Constant(2, 2, kInf)};
  EXPECT_NE(validate_problem(p).find("bias[0, 0] is inf"), std::string::npos);
  p.options.mask.bias = {Matrix::Constant(2, 2, -kInf)};
  EXPECT_EQ(validate_problem(p), "");
  p = fear_is();
  p.options.mask.key_length = 3;
  EXPECT_NE(validate_problem(p).find("key length 3"), std::string::npos);
}

// Multi-head attention from embeddings, checked against plain loops in double.
TEST(Engine, ProjectionFormsAgreeAndMatchLoops) {
  std::mt19937 rng(11);
  const int n = 5, n_kv = 3, d_model = 6, H = 4, G = 2, d_k = 3, d_v = 2, d_out = 5;
  Scenario s;
  s.use_projection = true;
  s.projection.x = test::random_matrix(n, d_model, rng);
  s.projection.x_kv = test::random_matrix(n_kv, d_model, rng);
  s.projection.w_q = random_heads(H, d_model, d_k, rng);
  s.projection.w_k = random_heads(G, d_model, d_k, rng);
  s.projection.w_v = random_heads(G, d_model, d_v, rng);
  s.projection.w_o = test::random_matrix(H * d_v, d_out, rng);
  s.projection.b_o = test::random_matrix(1, d_out, rng);
  for (int i = 0; i < n; ++i) s.query_tokens.push_back("q" + std::to_string(i));
  for (int j = 0; j < n_kv; ++j) s.key_tokens.push_back("k" + std::to_string(j));
  ASSERT_EQ(validate_scenario(s), "");
  auto cpu = make_cpu_backend();
  AttentionTrace t = compute_scenario_trace(s, *cpu);
  ASSERT_TRUE(t.projection_form_gap);
  EXPECT_LT(*t.projection_form_gap, 1e-5f);

  // Reference: project in double, attend with the loop reference, concat, W_O, b_O.
  const ProjectionSpec& pr = s.projection;
  AttentionProblem p;
  auto project = [](const Matrix& x, const Matrix& w) {
    Matrix out(x.rows(), w.cols());
    for (int i = 0; i < x.rows(); ++i)
      for (int c = 0; c < w.cols(); ++c) {
        double acc = 0;
        for (int a = 0; a < x.cols(); ++a) acc += double(x(i, a)) * double(w(a, c));
        out(i, c) = static_cast<float>(acc);
      }
    return out;
  };
  for (const Matrix& w : pr.w_q) p.input.q.push_back(project(pr.x, w));
  for (const Matrix& w : pr.w_k) p.input.k.push_back(project(pr.x_kv, w));
  for (const Matrix& w : pr.w_v) p.input.v.push_back(project(pr.x_kv, w));
  test::RefResult r = reference_attention(p);
  for (int h = 0; h < H; ++h) {
    EXPECT_LE(max_abs_diff(t.head(StageId::kWeights, h), r.weights[h]), 1e-5);
    EXPECT_LE((t.head(StageId::kQ, h) - p.input.q[h]).cwiseAbs().maxCoeff(), 1e-5f);
  }
  const Matrix& projected = t.head(StageId::kProjected, 0);
  ASSERT_EQ(projected.rows(), n);
  ASSERT_EQ(projected.cols(), d_out);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < d_out; ++c) {
      double acc = pr.b_o(c);
      for (int h = 0; h < H; ++h)
        for (int b = 0; b < d_v; ++b) acc += r.output[h](i, b) * double(pr.w_o(h * d_v + b, c));
      EXPECT_NEAR(projected(i, c), acc, 1e-5) << i << "," << c;
    }
  EXPECT_EQ(t.head(StageId::kConcat, 0).cols(), H * d_v);
  EXPECT_EQ(t.step(StageId::kHeadContrib).heads.size(), static_cast<size_t>(H));
  EXPECT_EQ(t.key_tokens, s.key_tokens);
}

}  // namespace
}  // namespace attn
