// The CPU fused path (tiled online softmax) against the staged path to 1e-5, with tile sizes
// that cut every mask boundary, one thread and several, and the visible-pair count used by bench.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>

#include "attention/engine.h"
#include "attention/mask.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/fused.h"
#include "reference.h"

namespace attn {
namespace {

AttentionProblem random_problem(int H, int G, int n_q, int n_k, int d_k, int d_v, unsigned seed) {
  std::mt19937 rng(seed);
  AttentionProblem p;
  p.input.q = test::random_heads(H, n_q, d_k, rng);
  p.input.k = test::random_heads(G, n_k, d_k, rng);
  p.input.v = test::random_heads(G, n_k, d_v, rng);
  return p;
}

// A list of mask settings applied one at a time to the same inputs.
std::vector<std::pair<std::string, MaskSpec>> masks(int n_q, int n_k, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<std::pair<std::string, MaskSpec>> out;
  out.push_back({"none", {}});
  MaskSpec m;
  m.causal = CausalAlign::kTopLeft;
  out.push_back({"causal", m});
  m.causal = CausalAlign::kLowerRight;
  out.push_back({"causal_lower_right", m});
  m = {};
  m.window = 6;
  out.push_back({"window", m});
  m.causal = CausalAlign::kTopLeft;
  out.push_back({"causal_window", m});
  m.global = {1, n_q / 2};
  out.push_back({"causal_window_global", m});
  m = {};
  m.key_length = n_k / 3;
  out.push_back({"padding", m});
  m = {};
  Matrix c(n_q, n_k), b(n_q, n_k);
  for (int i = 0; i < n_q; ++i)
    for (int j = 0; j < n_k; ++j) {
      c(i, j) = (u(rng) < 0.7f && i != 2) ? 1.0f : 0.0f;
      b(i, j) = u(rng) < 0.1f ? -std::numeric_limits<float>::infinity() : 3 * u(rng) - 1.5f;
    }
  m.custom = {c};
  out.push_back({"custom", m});
  m = {};
  m.bias = {b};
  m.causal = CausalAlign::kTopLeft;
  out.push_back({"bias_causal", m});
  return out;
}

float max_diff(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  return (a - b).cwiseAbs().maxCoeff();
}

TEST(FusedCpu, MatchesStagedForEveryMaskAndTiling) {
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  // (block_q, block_k, threads): tiles smaller than, equal to and larger than the masks' steps.
  const FusedCpuConfig configs[] = {
      {128, 256, 0}, {7, 5, 1}, {1, 1, 2}, {16, 64, 3}, {1000, 1000, 1}};
  unsigned seed = 1;
  for (auto shape :
       {std::array<int, 6>{2, 2, 45, 45, 8, 8}, std::array<int, 6>{3, 1, 29, 61, 5, 11},
        std::array<int, 6>{4, 2, 70, 33, 16, 3}, std::array<int, 6>{1, 1, 1, 1, 2, 3}}) {
    for (const auto& [name, spec] : masks(shape[2], shape[3], seed)) {
      AttentionProblem p =
          random_problem(shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], seed++);
      p.options.mask = spec;
      p.options.temperature = 0.8f;
      const int span = std::max(shape[2], shape[3]);
      if (std::any_of(spec.global.begin(), spec.global.end(), [&](int g) { return g >= span; }))
        continue;
      ASSERT_EQ(validate_problem(p), "") << name;
      AttentionTrace staged = compute_trace(p, *cpu);
      for (const FusedCpuConfig& config : configs) {
        SCOPED_TRACE(name + " bq=" + std::to_string(config.block_q) +
                     " bk=" + std::to_string(config.block_k) + " n_q=" + std::to_string(shape[2]));
        HeadStack fused = fused_attention_cpu(p, config);
        ASSERT_EQ(fused.size(), static_cast<size_t>(shape[0]));
        for (int h = 0; h < shape[0]; ++h) {
          EXPECT_LE(max_diff(fused[h], staged.head(StageId::kOutput, h)), 1e-5f) << "head " << h;
          EXPECT_TRUE(fused[h].allFinite());
        }
      }
    }
  }
}

// A long sequence where the running max changes many times along a row: the rescaling of the
// accumulator must keep the result equal to the direct softmax.
TEST(FusedCpu, RescalingOverManyKeyBlocks) {
  AttentionProblem p = random_problem(2, 1, 150, 1100, 12, 7, 42);
  // Growing keys make later blocks dominate, so the max moves block after block.
  for (int j = 0; j < 1100; ++j) p.input.k[0].row(j) *= 1.0f + j / 200.0f;
  const test::RefResult ref = test::reference_attention(p);
  HeadStack fused = fused_attention_cpu(p, {32, 64, 2});
  for (int h = 0; h < 2; ++h) EXPECT_LE(test::max_abs_diff(fused[h], ref.output[h]), 1e-5);
}

TEST(FusedCpu, RunOutputIsTheFusedPath) {
  AttentionProblem p = random_problem(2, 2, 300, 280, 32, 16, 3);
  p.options.mask.causal = CausalAlign::kTopLeft;
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  HeadStack a = cpu->run_output(p), b = fused_attention_cpu(p);
  for (int h = 0; h < 2; ++h) EXPECT_EQ(max_diff(a[h], b[h]), 0.0f);
}

TEST(FusedCpu, VisiblePairsCountsEveryVisibleCell) {
  for (const auto& [name, spec] : masks(37, 52, 9)) {
    if (!spec.custom.empty() || !spec.bias.empty()) continue;  // counted structurally only
    AttentionProblem p = random_problem(1, 1, 37, 52, 2, 2, 1);
    p.options.mask = spec;
    MaskGeometry geo(spec, 37, 52);
    long long expected = 0;
    for (int i = 0; i < 37; ++i)
      for (int j = 0; j < 52; ++j) expected += geo.reason(i, j) == 0;
    EXPECT_EQ(visible_pairs(p), expected) << name;
  }
  // Hand count: causal top-left 4x4 sees 1 + 2 + 3 + 4 = 10 cells.
  AttentionProblem p = random_problem(1, 1, 4, 4, 2, 2, 1);
  p.options.mask.causal = CausalAlign::kTopLeft;
  EXPECT_EQ(visible_pairs(p), 10);
  // Window 1, non-causal, 5x5: rows see 2, 3, 3, 3, 2 keys.
  p = random_problem(1, 1, 5, 5, 2, 2, 1);
  p.options.mask.window = 1;
  EXPECT_EQ(visible_pairs(p), 13);
}

}  // namespace
}  // namespace attn
