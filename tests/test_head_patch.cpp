// Recomputing only the heads an edit changed (backends/head_patch.h): the patched trace must equal
// a whole recompute of the edited problem bit for bit, in every stored and derived stage and in
// the masks' reasons; a patch that does not fit is refused and leaves the trace alone.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/head_patch.h"
#include "reference.h"

namespace attn {
namespace {

// H = 4 query heads over H_kv = 2 key/value heads (GQA), a causal window, a padded key, a global
// token and a custom mask per head: every kind of mask a head can carry.
AttentionProblem gqa_problem(std::mt19937& rng) {
  const int H = 4, H_kv = 2, n = 37, d_k = 5, d_v = 3;
  AttentionProblem p;
  p.input.q = test::random_heads(H, n, d_k, rng);
  p.input.k = test::random_heads(H_kv, n, d_k, rng);
  p.input.v = test::random_heads(H_kv, n, d_v, rng);
  p.options.mask.causal = CausalAlign::kTopLeft;
  p.options.mask.window = 6;
  p.options.mask.global = {0};
  p.options.mask.key_length = n - 2;
  for (int h = 0; h < H; ++h) {
    Matrix c = Matrix::Ones(n, n);
    c(10 + h, 9) = 0;  // one hidden cell per head, in a different row
    p.options.mask.custom.push_back(c);
  }
  p.options.temperature = 0.8f;
  return p;
}

// Every stage of every head, stored or derived, and every head's reasons, compared exactly.
void expect_identical(const AttentionTrace& a, const AttentionTrace& b) {
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const TraceStep& s = a.steps[i];
    const TraceStep& t = b.steps[i];
    ASSERT_EQ(s.id, t.id);
    ASSERT_EQ(s.num_heads(), t.num_heads()) << s.id;
    for (int h = 0; h < s.num_heads(); ++h) {
      const Matrix x = a.head(s, h);  // copies: a derived head is valid until the next is asked
      const Matrix& y = b.head(t, h);
      ASSERT_EQ(x.rows(), y.rows()) << s.id << " head " << h;
      ASSERT_EQ(x.cols(), y.cols()) << s.id << " head " << h;
      for (Eigen::Index r = 0; r < x.rows(); ++r)
        for (Eigen::Index c = 0; c < x.cols(); ++c) {
          const float u = x(r, c), v = y(r, c);
          // Bit for bit (−∞ equals −∞; no NaN is expected anywhere).
          ASSERT_TRUE(u == v) << s.id << " head " << h << " (" << r << "," << c << "): " << u
                              << " vs " << v;
        }
    }
  }
  for (int h = 0; h < a.num_heads; ++h) {
    ASSERT_EQ(a.has_reasons(h), b.has_reasons(h));
    if (a.has_reasons(h)) {
      EXPECT_TRUE(a.hidden_of(h) == b.hidden_of(h)) << "head " << h;
    }
  }
}

// The trace of `p` is computed and derived head `shown` of `stage` read (so a stale cache would
// show); then `edit` changes p's inputs, `heads` are patched in, and the trace must equal a whole
// recompute of the edited problem.
void expect_patch_equals_whole(AttentionProblem p, StageId stage, int shown,
                               const std::function<void(AttentionInput&)>& edit,
                               const std::vector<int>& heads) {
  ASSERT_TRUE(patchable(p));
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  AttentionTrace trace = compute_trace(p, *cpu);
  (void)trace.head(stage, shown);
  edit(p.input);
  HeadPatch patch = compute_head_patch(p, heads, *cpu);
  ASSERT_TRUE(apply_head_patch(trace, patch));
  expect_identical(trace, compute_trace(p, *cpu));
}

TEST(HeadPatch, AnEditOfOneHeadsQueryEqualsAWholeRecompute) {
  std::mt19937 rng(5);
  expect_patch_equals_whole(gqa_problem(rng), StageId::kScores, 1,
                            [](AttentionInput& in) { in.q[1](12, 3) += 0.75f; }, {1});
}

TEST(HeadPatch, AnEditOfAKeyChangesEveryHeadOfItsGroup) {
  std::mt19937 rng(6);
  // Key/value head 1 is read by query heads 2 and 3.
  expect_patch_equals_whole(gqa_problem(rng), StageId::kMasked, 3,
                            [](AttentionInput& in) {
                              in.k[1](20, 0) -= 1.5f;
                              in.v[1](4, 2) = 9.0f;
                            },
                            {2, 3});
}

TEST(HeadPatch, APatchOfTheWrongHeadsIsVisibleAndAMisfitIsRefused) {
  std::mt19937 rng(7);
  AttentionProblem p = gqa_problem(rng);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace before = compute_trace(p, *cpu);
  // The test can fail: patching head 0 after editing head 1 leaves head 1's stages stale.
  p.input.q[1](12, 3) += 0.75f;
  AttentionTrace wrong = before;
  HeadPatch patch0 = compute_head_patch(p, {0}, *cpu);
  ASSERT_TRUE(apply_head_patch(wrong, patch0));
  EXPECT_FALSE(wrong.step(StageId::kWeights).heads[1] ==
               compute_trace(p, *cpu).step(StageId::kWeights).heads[1]);

  // A patch of another shape (one query row fewer) does not fit: refused, trace unchanged.
  AttentionProblem shorter = p;
  for (Matrix& q : shorter.input.q) q = Matrix(q.topRows(q.rows() - 1));
  for (Matrix& c : shorter.options.mask.custom) c = Matrix(c.topRows(c.rows() - 1));
  HeadPatch misfit = compute_head_patch(shorter, {1}, *cpu);
  AttentionTrace kept = before;
  EXPECT_FALSE(apply_head_patch(kept, misfit));
  expect_identical(kept, before);
  // A head the trace does not have.
  HeadPatch beyond = compute_head_patch(p, {1}, *cpu);
  beyond.heads = {7};
  EXPECT_FALSE(apply_head_patch(kept, beyond));
}

TEST(HeadPatch, VariantsAndTheAdditiveScoreAreComputedWhole) {
  std::mt19937 rng(8);
  AttentionProblem p = gqa_problem(rng);
  p.options.additive = AdditiveScore{};
  EXPECT_FALSE(patchable(p));
}

}  // namespace
}  // namespace attn
