// Multi-Token Attention in the engine: the key–query convolution and head mixing, every stage the
// trace shows (scores before the convolution, convolved scores, weights before mixing, mixed
// weights, output) against the double-precision reference written from cli.md's formulas, for
// random shapes, kernels and head groups, causal and not; the refusals; and the identity kernel
// and identity mixing giving plain attention back.
#include <gtest/gtest.h>

#include <random>

#include "attention/engine.h"
#include "attention/multi_token.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "variant_reference.h"

namespace attn {
namespace {

using test::max_abs_diff;
using test::random_heads;

constexpr double kTolerance = 1e-5;

void expect_stage(const AttentionTrace& t, StageId id, const std::vector<test::RefMat>& ref) {
  const TraceStep* s = t.find(id);
  ASSERT_NE(s, nullptr) << id;
  ASSERT_EQ(s->num_heads(), static_cast<int>(ref.size())) << id;
  for (int h = 0; h < s->num_heads(); ++h) {
    const Matrix& m = t.head(*s, h);
    ASSERT_EQ(m.rows(), ref[static_cast<size_t>(h)].rows) << id;
    ASSERT_EQ(m.cols(), ref[static_cast<size_t>(h)].cols) << id;
    EXPECT_LT(max_abs_diff(m, ref[static_cast<size_t>(h)]), kTolerance) << id << " head " << h;
  }
}

TEST(MultiToken, EveryStageMatchesTheReferenceForRandomKernelsMasksAndHeadGroups) {
  std::mt19937 rng(2025);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const int layouts[][3] = {{1, 1, 1}, {2, 2, 2}, {4, 2, 2}, {4, 4, 1}, {6, 3, 3}, {4, 1, 4}};
  for (int trial = 0; trial < 36; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const int H = layouts[trial % 6][0], H_kv = layouts[trial % 6][1], c_h = layouts[trial % 6][2];
    std::uniform_int_distribution<int> len(1, 10), dim(1, 5), ker(1, 4);
    const int n_q = len(rng), n_k = trial % 5 == 0 ? n_q : len(rng), d_k = dim(rng);
    AttentionProblem p;
    p.input.q = random_heads(H, n_q, d_k, rng);
    p.input.k = random_heads(H_kv, n_k, d_k, rng);
    p.input.v = random_heads(H_kv, n_k, dim(rng), rng);
    const bool conv = trial % 3 != 2, mix = trial % 3 != 0;
    if (conv)
      p.options.variants.multi_token.kq_conv =
          random_heads(trial % 2 ? H : 1, ker(rng), ker(rng), rng);
    if (mix) p.options.variants.multi_token.head_mix = random_heads(H / c_h, c_h, c_h, rng);
    if (trial % 2 == 0)
      p.options.mask.causal = trial % 4 == 0 ? CausalAlign::kTopLeft : CausalAlign::kLowerRight;
    if (trial % 7 == 3) p.options.mask.window = 2;
    if (trial % 5 == 4) p.options.mask.bias = random_heads(1, n_q, n_k, rng);
    if (trial % 6 == 5) p.options.temperature = 0.6f;
    ASSERT_EQ(validate_problem(p), "");
    const AttentionTrace t = compute_trace(p, *cpu);
    const test::VariantRef ref = test::reference_variants(p);
    expect_stage(t, StageId::kScores, ref.scores);
    expect_stage(t, StageId::kScaled, ref.scaled);
    if (conv) expect_stage(t, StageId::kPreConv, ref.pre_conv);
    EXPECT_EQ(t.find(StageId::kPreConv) != nullptr, conv);
    expect_stage(t, StageId::kMasked, ref.masked);
    if (mix) expect_stage(t, StageId::kPreMix, ref.pre_mix);
    EXPECT_EQ(t.find(StageId::kPreMix) != nullptr, mix);
    expect_stage(t, StageId::kWeights, ref.weights);
    expect_stage(t, StageId::kOutput, ref.output);
    const HeadStack out = cpu->run_output(p);
    for (size_t h = 0; h < out.size(); ++h)
      EXPECT_LT(max_abs_diff(out[h], ref.output[h]), kTolerance);
    // compute --weights' streamed blocks: the whole result, head by head.
    compute_weights_by_rows(p, *cpu, 2, [&](int h, int first, const Matrix& w, const Matrix& o) {
      EXPECT_EQ(first, 0);
      EXPECT_LT(max_abs_diff(w, ref.weights[static_cast<size_t>(h)]), kTolerance);
      EXPECT_LT(max_abs_diff(o, ref.output[static_cast<size_t>(h)]), kTolerance);
    });
  }
}

TEST(MultiToken, TheTraceOfARowKeepsTheRowsItsKernelReads) {
  std::mt19937 rng(12);
  AttentionProblem p;
  p.input.q = random_heads(2, 7, 3, rng);
  p.input.k = random_heads(2, 7, 3, rng);
  p.input.v = random_heads(2, 7, 2, rng);
  p.options.mask.causal = CausalAlign::kTopLeft;
  p.options.variants.multi_token.kq_conv = random_heads(1, 3, 2, rng);  // c_q = 3
  p.options.variants.multi_token.head_mix = random_heads(1, 2, 2, rng);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace rows = compute_trace_rows(p, *cpu, 4, 5);
  EXPECT_EQ(rows.first_row, 2);  // rows 2..4: query 4 and the two before it
  const test::VariantRef ref = test::reference_variants(p);
  for (int h = 0; h < 2; ++h) {
    const Matrix& m = rows.head(StageId::kMasked, h);
    ASSERT_EQ(m.rows(), 3);
    for (int j = 0; j <= 4; ++j)
      EXPECT_NEAR(m(2, j), ref.masked[static_cast<size_t>(h)](4, j), kTolerance);
    EXPECT_EQ(rows.hidden_of(h).rows(), 3);
    EXPECT_NE(rows.hidden_of(h)(2, 5), 0);  // causal: key 5 is after query 4
  }
}

TEST(MultiToken, IdentityKernelAndIdentityMixingGivePlainAttention) {
  std::mt19937 rng(9);
  AttentionProblem p;
  p.input.q = random_heads(2, 5, 3, rng);
  p.input.k = random_heads(2, 5, 3, rng);
  p.input.v = random_heads(2, 5, 2, rng);
  p.options.mask.causal = CausalAlign::kTopLeft;
  AttentionProblem plain = p;
  p.options.variants.multi_token.kq_conv = {Matrix::Ones(1, 1)};
  p.options.variants.multi_token.head_mix = {Matrix::Identity(2, 2)};
  const test::RefResult ref = test::reference_attention(plain);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace t = compute_trace(p, *cpu);
  for (int h = 0; h < 2; ++h)
    EXPECT_LT(max_abs_diff(t.head(StageId::kWeights, h), ref.weights[static_cast<size_t>(h)]),
              kTolerance);
  EXPECT_TRUE(t.has_reasons(0));
  EXPECT_NE(t.hidden_of(0)(0, 1), 0);  // causal: key 1 is after query 0
}

TEST(MultiToken, ConvolutionFollowsTheContractIndexByIndex) {
  // θ = [[1, 2, 3]] (c_q = 1, c_k = 3, centred): C[i, j] = 1·S[i, j+1] + 2·S[i, j] + 3·S[i, j−1].
  Matrix s(1, 4);
  s << 1, 10, 100, 1000;
  Matrix th(1, 3);
  th << 1, 2, 3;
  const Matrix c = kq_convolve(s, th);
  EXPECT_FLOAT_EQ(c(0, 0), 1 * 10 + 2 * 1);
  EXPECT_FLOAT_EQ(c(0, 1), 1 * 100 + 2 * 10 + 3 * 1);
  EXPECT_FLOAT_EQ(c(0, 3), 2 * 1000 + 3 * 100);
  // c_q = 2: query i also sees query i − 1 through θ[1, ·].
  Matrix s2(2, 1);
  s2 << 5, 7;
  Matrix t2(2, 1);
  t2 << 1, 10;
  const Matrix c2 = kq_convolve(s2, t2);
  EXPECT_FLOAT_EQ(c2(0, 0), 5);
  EXPECT_FLOAT_EQ(c2(1, 0), 7 + 10 * 5);
}

TEST(MultiToken, BadShapesAreRefusedNamingTheField) {
  std::mt19937 rng(4);
  AttentionProblem good;
  good.input.q = random_heads(4, 3, 2, rng);
  good.input.k = random_heads(4, 3, 2, rng);
  good.input.v = random_heads(4, 3, 2, rng);
  good.options.variants.multi_token.kq_conv = random_heads(1, 2, 3, rng);
  good.options.variants.multi_token.head_mix = random_heads(2, 2, 2, rng);
  ASSERT_EQ(validate_problem(good), "");
  auto message = [&](auto change) {
    AttentionProblem p = good;
    change(p);
    return validate_problem(p);
  };
  auto M = [](AttentionProblem& p) -> MultiTokenSpec& { return p.options.variants.multi_token; };
  EXPECT_EQ(message([&](AttentionProblem& p) { M(p).head_mix = random_heads(1, 3, 3, rng); }),
            "multi_token.head_mix has shape (1, 3, 3): G·c_h = 1·3 = 3 heads, but there are H = 4");
  EXPECT_NE(message([&](AttentionProblem& p) {
              M(p).head_mix[1] = Matrix::Zero(2, 3);
            }).find("multi_token.head_mix group 1 has shape (2, 3)"),
            std::string::npos);
  EXPECT_EQ(message([&](AttentionProblem& p) { M(p).kq_conv = random_heads(3, 2, 3, rng); }),
            "multi_token.kq_conv has 3 kernels; expected 1 (shared) or H = 4");
  EXPECT_NE(message([&](AttentionProblem& p) {
              M(p).kq_conv = random_heads(4, 2, 3, rng);
              M(p).kq_conv[2] = Matrix::Zero(1, 3);
            }).find("multi_token.kq_conv kernel 2 has shape (1, 3)"),
            std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              M(p).kq_conv[0](1, 0) = INFINITY;
            }).find("multi_token.kq_conv[0, 1, 0] is not a finite number"),
            std::string::npos);
  EXPECT_NE(
      message([&](AttentionProblem& p) { M(p).kq_conv[0](0, 0) = 3e38f; }).find("overflow float32"),
      std::string::npos);
}

// The head-mixing example: every stage against the reference, and what it is there to show. Its
// values name the sentence a key belongs to, so an output row reads as how much of each of the
// five sentences the query gathered. The sentences holding both words of each query, read off
// the example's text by hand: "Alice" and "rabbit" → 2 ("Then Alice met the rabbit"), "Alice"
// and "cat" → 0, "Bob" and "rabbit" → 3, "Bob" and "cat" → 4.
TEST(MultiToken, HeadMixingExampleFindsTheSentenceWithBothWords) {
  std::string error;
  const std::optional<Scenario> s = load_example("head-mixing", error);
  ASSERT_TRUE(s) << error;
  const AttentionProblem p = to_problem(*s);
  const test::VariantRef ref = test::reference_variants(p);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace t = compute_trace(p, *cpu);
  expect_stage(t, StageId::kPreMix, ref.pre_mix);
  expect_stage(t, StageId::kWeights, ref.weights);
  expect_stage(t, StageId::kOutput, ref.output);
  const int expected[] = {2, 0, 3, 4};
  auto best = [](const Matrix& m, int row, float* margin) {
    Eigen::Index j = 0;
    const float top = m.row(row).maxCoeff(&j);
    Eigen::RowVectorXf rest = m.row(row);
    rest(j) = -1;
    *margin = top - rest.maxCoeff();
    return static_cast<int>(j);
  };
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 2; ++h) {
      float margin = 0;
      EXPECT_EQ(best(t.head(StageId::kOutput, h), i, &margin), expected[i]) << "query " << i;
      EXPECT_GT(margin, 0.15f) << "query " << i << " head " << h;
      // Before mixing, each head sees one word, found in two sentences or more: it cannot tell
      // them apart (its top two sentences are within a few hundredths).
      const Matrix before = t.head(StageId::kPreMix, h) * t.step(StageId::kV).heads[0];
      best(before, i, &margin);
      EXPECT_LT(margin, 0.05f) << "query " << i << " head " << h << " before mixing";
    }
}

TEST(MultiToken, ScenarioJsonCarriesKernelAndMixing) {
  std::string error;
  const std::optional<Scenario> s = parse_scenario_json(
      R"({"q": [[[1,0]],[[0,1]]], "k": [[[1,0]],[[0,1]]], "v": [[[1,2]],[[3,4]]],
          "multi_token": {"kq_conv": [[0.5, 1, 0.5]], "head_mix": [[[0.75, 0.25], [0.25, 0.75]]]}})",
      "m.json", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->options.variants.multi_token.kq_conv[0].cols(), 3);
  EXPECT_EQ(s->options.variants.multi_token.head_mix.size(), 1u);
  const std::optional<Scenario> back = parse_scenario_json(scenario_to_json(*s), "b.json", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->options.variants.multi_token.head_mix[0],
            s->options.variants.multi_token.head_mix[0]);
  EXPECT_FALSE(parse_scenario_json(
      R"({"q": [[1]], "k": [[1]], "v": [[1]], "multi_token": {"kernel": [[1]]}})", "x.json",
      error));
  EXPECT_NE(error.find("multi_token.kernel"), std::string::npos) << error;
}

}  // namespace
}  // namespace attn
