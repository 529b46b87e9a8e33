// Linformer in the engine: every stage the trace shows (projected keys and values, scores,
// weights over the k virtual keys, output) against the double-precision reference written from
// cli.md's formulas, for random shapes, head layouts (shared E, per key/value head, GQA); the
// refusals; and that projecting with the identity gives full attention back.
#include <gtest/gtest.h>

#include <random>

#include "attention/engine.h"
#include "attention/linformer.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/scenario_json.h"
#include "variant_reference.h"

namespace attn {
namespace {

using test::max_abs_diff;
using test::random_heads;

constexpr double kTolerance = 1e-5;

AttentionProblem random_problem(std::mt19937& rng, int H, int H_kv, int n_q, int n_k, int k,
                                bool shared) {
  AttentionProblem p;
  std::uniform_int_distribution<int> dim(1, 6);
  const int d_k = dim(rng), d_v = dim(rng);
  p.input.q = random_heads(H, n_q, d_k, rng);
  p.input.k = random_heads(H_kv, n_k, d_k, rng);
  p.input.v = random_heads(H_kv, n_k, d_v, rng);
  p.options.variants.linformer.e = random_heads(shared ? 1 : H_kv, k, n_k, rng);
  p.options.variants.linformer.f = random_heads(shared ? 1 : H_kv, k, n_k, rng);
  return p;
}

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

TEST(Linformer, EveryStageMatchesTheReferenceForRandomShapesAndHeadLayouts) {
  std::mt19937 rng(1616);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const int layouts[][2] = {{1, 1}, {2, 2}, {4, 2}, {4, 1}, {3, 3}, {6, 2}};
  for (int trial = 0; trial < 24; ++trial) {
    const int H = layouts[trial % 6][0], H_kv = layouts[trial % 6][1];
    std::uniform_int_distribution<int> len(1, 12);
    const int n_q = len(rng), n_k = len(rng);
    const int k = std::uniform_int_distribution<int>(1, n_k + 2)(rng);
    AttentionProblem p = random_problem(rng, H, H_kv, n_q, n_k, k, trial % 2 == 0);
    if (trial % 3 == 1) p.options.scale = 0.7f;
    if (trial % 4 == 2) p.options.temperature = 1.9f;
    ASSERT_EQ(validate_problem(p), "");
    const AttentionTrace t = compute_trace(p, *cpu);
    const test::VariantRef ref = test::reference_variants(p);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_EQ(t.n_k, k);
    ASSERT_EQ(t.key_tokens.size(), static_cast<size_t>(k));
    EXPECT_EQ(t.key_tokens[0],
              "k\xCC\x83"
              "0");
    EXPECT_EQ(t.input_key_tokens.size(), static_cast<size_t>(n_k));
    expect_stage(t, StageId::kKProj, ref.k_proj);
    expect_stage(t, StageId::kVProj, ref.v_proj);
    expect_stage(t, StageId::kScores, ref.scores);
    expect_stage(t, StageId::kScaled, ref.scaled);
    expect_stage(t, StageId::kMasked, ref.masked);
    expect_stage(t, StageId::kWeights, ref.weights);
    expect_stage(t, StageId::kOutput, ref.output);
    // The outputs-only path and the streamed weights give the same numbers.
    const HeadStack out = cpu->run_output(p);
    for (size_t h = 0; h < out.size(); ++h)
      EXPECT_LT(max_abs_diff(out[h], ref.output[h]), kTolerance);
    HeadStack w, o;
    cpu->run_weights(p, w, o);
    for (size_t h = 0; h < w.size(); ++h) EXPECT_LT(max_abs_diff(w[h], ref.weights[h]), kTolerance);
  }
}

TEST(Linformer, TheTraceOfARowHoldsThatRowOfEveryStage) {
  std::mt19937 rng(7);
  AttentionProblem p = random_problem(rng, 2, 1, 6, 9, 3, true);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace rows = compute_trace_rows(p, *cpu, 2, 3);
  const test::VariantRef ref = test::reference_variants(p);
  EXPECT_EQ(rows.first_row, 2);
  expect_stage(rows, StageId::kKProj, ref.k_proj);  // the key side is whole
  for (int h = 0; h < 2; ++h) {
    const Matrix& w = rows.head(StageId::kWeights, h);
    ASSERT_EQ(w.rows(), 1);
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(w(0, j), ref.weights[static_cast<size_t>(h)](2, j), kTolerance);
  }
}

TEST(Linformer, IdentityProjectionsGiveFullAttention) {
  std::mt19937 rng(3);
  AttentionProblem p = random_problem(rng, 2, 2, 5, 7, 7, true);
  p.options.variants.linformer.e = {Matrix::Identity(7, 7)};
  p.options.variants.linformer.f = {Matrix::Identity(7, 7)};
  AttentionProblem full = p;
  full.options.variants = {};
  const test::RefResult plain = test::reference_attention(full);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace t = compute_trace(p, *cpu);
  for (int h = 0; h < 2; ++h)
    EXPECT_LT(max_abs_diff(t.head(StageId::kOutput, h), plain.output[static_cast<size_t>(h)]),
              kTolerance);
  // The error curve is 0 (to float rounding) at the identity and positive for a random E.
  const std::vector<double> err = linformer_error_by_k(full, {1, 7}, 5);
  ASSERT_EQ(err.size(), 2u);
  EXPECT_GT(err[0], 0.0);
}

TEST(Linformer, RandomProjectionsAreReproducibleWithVarianceOneOverK) {
  const HeadStack a = random_linformer_projection(1, 8, 400, 42);
  const HeadStack b = random_linformer_projection(1, 8, 400, 42);
  EXPECT_EQ(a[0], b[0]);
  const double var = a[0].cast<double>().array().square().mean();
  EXPECT_NEAR(var, 1.0 / 8, 0.02);
}

TEST(Linformer, BadShapesAndCombinationsAreRefusedNamingTheField) {
  std::mt19937 rng(11);
  const AttentionProblem good = random_problem(rng, 4, 2, 5, 6, 3, false);
  ASSERT_EQ(validate_problem(good), "");
  auto message = [&](auto change) {
    AttentionProblem p = good;
    change(p);
    return validate_problem(p);
  };
  auto L = [](AttentionProblem& p) -> LinformerSpec& { return p.options.variants.linformer; };
  EXPECT_EQ(message([&](AttentionProblem& p) { L(p).f.clear(); }),
            "linformer.f: missing; E and F go together");
  EXPECT_NE(message([&](AttentionProblem& p) {
              L(p).e[1] = Matrix::Zero(3, 5);
            }).find("linformer.e head 1 has shape (3, 5); expected (k, n_k) = (3, 6)"),
            std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              L(p).f = random_heads(2, 2, 6, rng);
            }).find("linformer.f head 0 has shape (2, 6)"),
            std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              L(p).e = random_heads(3, 3, 6, rng);
            }).find("linformer.e has 3 heads; expected 1 (shared) or H_kv = 2"),
            std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              p.options.mask.causal = CausalAlign::kTopLeft;
            }).find("linformer: masks that name key positions"),
            std::string::npos);
  EXPECT_NE(
      message([&](AttentionProblem& p) { p.options.mask.key_length = 3; }).find("linformer: masks"),
      std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              L(p).e[0](1, 2) = NAN;
            }).find("linformer.e[0, 1, 2] is not a finite number"),
            std::string::npos);
  EXPECT_NE(message([&](AttentionProblem& p) {
              p.options.variants.multi_token.kq_conv = {Matrix::Ones(1, 3)};
            }).find("multi_token.kq_conv: the key–query convolution runs over keys in sequence"),
            std::string::npos);
}

TEST(Linformer, ScenarioJsonCarriesTheProjections) {
  std::mt19937 rng(5);
  const AttentionProblem p = random_problem(rng, 2, 2, 4, 6, 3, false);
  Scenario s;
  s.name = "lin";
  s.qkv = p.input;
  s.options = p.options;
  for (int i = 0; i < 4; ++i) s.query_tokens.push_back("q" + std::to_string(i));
  for (int j = 0; j < 6; ++j) s.key_tokens.push_back("t" + std::to_string(j));
  std::string error;
  const std::optional<Scenario> back = parse_scenario_json(scenario_to_json(s), "lin.json", error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->options.variants.linformer.e.size(), 2u);
  EXPECT_EQ(back->options.variants.linformer.e[1], p.options.variants.linformer.e[1]);
  EXPECT_EQ(back->options.variants.linformer.f[0], p.options.variants.linformer.f[0]);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace t = compute_scenario_trace(*back, *cpu);
  EXPECT_EQ(t.input_key_tokens, s.key_tokens);  // the keys of K and V
  EXPECT_EQ(t.key_tokens.size(), 3u);           // the virtual keys
  EXPECT_FALSE(parse_scenario_json(
      R"({"q": [[1]], "k": [[1]], "v": [[1]], "linformer": {"e": [[1]]}})", "x.json", error));
  EXPECT_NE(error.find("linformer.f"), std::string::npos) << error;
}

}  // namespace
}  // namespace attn
