// A few query rows of a problem computed on their own (attention/row_slice.h, compute_trace_rows):
// the stages equal those rows of the whole trace on every mask combination and alignment, the
// narration of a row is the same text whichever trace it is read from, and extreme window
// values give the same answer on the fused and the staged paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <random>
#include <regex>

#include "attention/engine.h"
#include "attention/mask.h"
#include "attention/row_slice.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/fused.h"
#include "explain/explain.h"
#include "io/examples.h"
#include "reference.h"

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Equal up to float rounding of products computed in a different blocking (a slice's Q·Kᵀ may
// take another Eigen kernel than the whole); -inf must match exactly.
void expect_rows_equal(const Matrix& whole, int first, const Matrix& part,
                       const std::string& what) {
  ASSERT_EQ(part.cols(), whole.cols()) << what;
  for (Eigen::Index i = 0; i < part.rows(); ++i)
    for (Eigen::Index j = 0; j < part.cols(); ++j) {
      const float a = whole(first + i, j), b = part(i, j);
      if (std::isinf(a) || std::isinf(b)) {
        EXPECT_EQ(a, b) << what << " [" << first + i << ", " << j << "]";
      } else {
        EXPECT_NEAR(a, b, 1e-6 * std::max(1.0f, std::abs(a)))
            << what << " [" << first + i << ", " << j << "]";
      }
    }
}

// The same text, except that a number may differ by one unit in its last printed digit. A one-row
// slice's Q·Kᵀ can take another Eigen kernel than the whole trace's (a coefficient-wise product
// when rows + columns + depth < 20), whose float rounding differs by an ulp; a value on a rounding
// boundary then prints as 0.4673 in one text and 0.4674 in the other. Words, order and every other
// number must match exactly.
void expect_same_text_up_to_last_digit(const std::string& a, const std::string& b,
                                       const std::string& what) {
  if (a == b) return;
  static const std::regex number("[0-9]+(\\.[0-9]+)?");
  std::sregex_iterator ia(a.begin(), a.end(), number), ib(b.begin(), b.end(), number), end;
  size_t pa = 0, pb = 0;
  for (; ia != end && ib != end; ++ia, ++ib) {
    ASSERT_EQ(a.substr(pa, ia->position() - pa), b.substr(pb, ib->position() - pb)) << what;
    const std::string x = ia->str(), y = ib->str();
    if (x != y) {
      auto decimals = [](const std::string& t) {
        const size_t dot = t.find('.');
        return dot == std::string::npos ? 0 : static_cast<int>(t.size() - dot - 1);
      };
      const double unit = std::pow(10.0, -std::max(decimals(x), decimals(y)));
      EXPECT_LE(std::abs(std::stod(x) - std::stod(y)), unit * 1.0001)
          << what << ": " << x << " against " << y;
    }
    pa = ia->position() + ia->length();
    pb = ib->position() + ib->length();
  }
  EXPECT_TRUE(ia == end && ib == end) << what << ": the texts hold different counts of numbers";
  EXPECT_EQ(a.substr(pa), b.substr(pb)) << what;
}

struct MaskCase {
  CausalAlign causal;
  int window;    // -1: none
  bool global;   // positions {0, 3}
  bool padding;  // key length n_k - 2
  int custom;    // 0 none, 1 shared, 2 per head
  int bias;      // 0 none, 1 shared (with -inf cells), 2 per head
  int n_q, n_k;
};

AttentionProblem make_problem(const MaskCase& c, std::mt19937& rng) {
  AttentionProblem p;
  p.input.q = test::random_heads(2, c.n_q, 3, rng);  // H = 2 query heads
  p.input.k = test::random_heads(1, c.n_k, 3, rng);  // sharing one key/value head (MQA)
  p.input.v = test::random_heads(1, c.n_k, 2, rng);
  MaskSpec& m = p.options.mask;
  m.causal = c.causal;
  if (c.window >= 0) m.window = c.window;
  if (c.global) m.global = {0, 3};
  if (c.padding) m.key_length = c.n_k - 2;
  std::bernoulli_distribution keep(0.7);
  for (int h = 0; h < c.custom; ++h) {
    Matrix mk(c.n_q, c.n_k);
    for (Eigen::Index i = 0; i < mk.size(); ++i) mk.data()[i] = keep(rng) ? 1.0f : 0.0f;
    m.custom.push_back(mk);
  }
  for (int h = 0; h < c.bias; ++h) {
    Matrix b = test::random_matrix(c.n_q, c.n_k, rng);
    b(0, 1) = kNegInf;
    b(c.n_q - 1, 0) = kNegInf;
    m.bias.push_back(b);
  }
  return p;
}

// Every combination: 3 alignments × 5 windows × global × padding × 3 custom × 3 bias × 3 shapes.
TEST(RowSlice, StagesOfRowsEqualThoseRowsOfTheWholeTraceOnEveryMaskCombination) {
  std::mt19937 rng(11);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  int cases = 0;
  for (CausalAlign causal : {CausalAlign::kNone, CausalAlign::kTopLeft, CausalAlign::kLowerRight})
    for (int window : {-1, 0, 1, 2, INT_MAX})
      for (bool global : {false, true})
        for (bool padding : {false, true})
          for (int custom : {0, 1, 2})
            for (int bias : {0, 1, 2})
              for (auto [n_q, n_k] : {std::pair{5, 7}, std::pair{7, 5}, std::pair{6, 6}}) {
                const MaskCase c{causal, window, global, padding, custom, bias, n_q, n_k};
                const AttentionProblem p = make_problem(c, rng);
                ASSERT_EQ(validate_problem(p), "");
                const AttentionTrace whole = compute_trace(p, *cpu);
                const std::string name = "case " + std::to_string(cases);
                // Every single row, and a block in the middle.
                std::vector<std::pair<int, int>> ranges;
                for (int i = 0; i < n_q; ++i) ranges.push_back({i, i + 1});
                ranges.push_back({1, n_q - 1});
                for (auto [a, b] : ranges) {
                  const AttentionTrace part = compute_trace_rows(p, *cpu, a, b);
                  EXPECT_EQ(part.first_row, a);
                  EXPECT_EQ(part.n_q, n_q);
                  for (StageId id : {StageId::kScores, StageId::kScaled, StageId::kMasked,
                                     StageId::kWeights, StageId::kOutput})
                    for (int h = 0; h < 2; ++h) {
                      const Matrix& m = part.head(id, static_cast<size_t>(h));
                      ASSERT_EQ(m.rows(), b - a);
                      expect_rows_equal(whole.head(id, static_cast<size_t>(h)), a, m,
                                        name + " " + stage_name(id) + " head " + std::to_string(h));
                    }
                  for (int h = 0; h < 2; ++h)
                    for (int i = a; i < b; ++i) {
                      EXPECT_EQ(part.empty_row[h][static_cast<size_t>(i - a)],
                                whole.empty_row[h][static_cast<size_t>(i)])
                          << name;
                      for (int j = 0; j < n_k; ++j)
                        EXPECT_EQ(part.hidden_of(h)(i - a, j), whole.hidden_of(h)(i, j))
                            << name << " reasons [" << i << ", " << j << "]";
                    }
                }
                // The independent reference agrees with the slices too (positions kept).
                const test::RefResult ref = test::reference_attention(p);
                const AttentionTrace last = compute_trace_rows(p, *cpu, n_q - 1, n_q);
                for (int h = 0; h < 2; ++h) {
                  test::RefMat row = ref.weights[static_cast<size_t>(h)];
                  for (int j = 0; j < n_k; ++j)
                    EXPECT_NEAR(last.head(StageId::kWeights, static_cast<size_t>(h))(0, j),
                                row(n_q - 1, j), 1e-5)
                        << name;
                }
                ++cases;
              }
  EXPECT_EQ(cases, 3 * 5 * 2 * 2 * 3 * 3 * 3);
}

TEST(RowSlice, ASliceOfASliceIsASliceOfTheWhole) {
  std::mt19937 rng(5);
  const AttentionProblem p =
      make_problem({CausalAlign::kLowerRight, 1, true, false, 2, 1, 9, 6}, rng);
  const AttentionProblem twice = slice_query_rows(slice_query_rows(p, 2, 8), 3, 5);
  const AttentionProblem once = slice_query_rows(p, 5, 7);
  EXPECT_EQ(twice.first_query_row, 5);
  EXPECT_EQ(twice.total_query_rows, 9);
  EXPECT_EQ(twice.input.q[1], once.input.q[1]);
  EXPECT_EQ(twice.options.mask.custom[1], once.options.mask.custom[1]);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  AttentionTrace a, b;
  cpu->run_stages(twice, a);
  cpu->run_stages(once, b);
  EXPECT_EQ(a.head(StageId::kWeights, 0), b.head(StageId::kWeights, 0));
  EXPECT_EQ(build_reasons(twice, 1), build_reasons(once, 1));
}

TEST(RowSlice, OneHeadAndBlocksOfRowsEqualTheWholeTrace) {
  std::mt19937 rng(9);
  const AttentionProblem p = make_problem({CausalAlign::kTopLeft, 2, true, true, 2, 2, 8, 8}, rng);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace whole = compute_trace(p, *cpu);
  int calls = 0, next_head = 0, next_row = 0;
  compute_weights_by_rows(p, *cpu, 3, [&](int h, int first, const Matrix& w, const Matrix& o) {
    // (head, row) order, blocks of at most 3 rows.
    EXPECT_EQ(h, next_head);
    EXPECT_EQ(first, next_row);
    EXPECT_LE(w.rows(), 3);
    expect_rows_equal(whole.head(StageId::kWeights, static_cast<size_t>(h)), first, w, "weights");
    expect_rows_equal(whole.head(StageId::kOutput, static_cast<size_t>(h)), first, o, "output");
    next_row = first + static_cast<int>(w.rows());
    if (next_row == 8) next_row = 0, ++next_head;
    ++calls;
  });
  EXPECT_EQ(calls, 2 * 3);
  EXPECT_EQ(next_head, 2);
}

// explain narrates query I from a trace of row I alone with exactly the text it writes from the
// whole trace: every shipped example (projection, cross-attention, GQA, padding, window), every
// query, every head.
TEST(RowSlice, ExplainFromOneRowWritesTheSameTextAsFromTheWholeTrace) {
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  for (const ExampleInfo& info : list_examples()) {
    std::string error;
    const std::optional<Scenario> s = load_example(info.name, error);
    ASSERT_TRUE(s) << error;
    const AttentionTrace whole = compute_scenario_trace(*s, *cpu);
    for (int q = 0; q < whole.n_q; ++q) {
      const AttentionTrace row = compute_scenario_trace_rows(*s, *cpu, q, q + 1);
      for (int h = 0; h < whole.num_heads; ++h)
        for (std::optional<int> key : {std::optional<int>(), std::optional<int>(0)}) {
          ExplainRequest r;
          r.query = q;
          r.head = h;
          r.key = key;
          std::string e1, e2;
          const std::string a = explain(whole, r, e1), b = explain(row, r, e2);
          ASSERT_EQ(e1, "");
          ASSERT_EQ(e2, "");
          expect_same_text_up_to_last_digit(
              a, b, info.name + " query " + std::to_string(q) + " head " + std::to_string(h));
        }
      // A row the trace does not hold is an error, not a crash.
      if (whole.n_q > 1) {
        ExplainRequest r;
        r.query = (q + 1) % whole.n_q;
        std::string e;
        EXPECT_EQ(explain(row, r, e), "");
        EXPECT_EQ(e.rfind("query: ", 0), 0u) << e;
      }
    }
  }
}

// `p + W + 1` overflowed for W near INT_MAX (compute --window 2147483647 gave all zeros on the
// fused path while the staged one was right). Every window, alignment and shape: fused = staged =
// the double-precision reference, and a window wider than the sequence equals no window.
TEST(MaskWindow, ExtremeWindowsAgreeOnTheFusedAndStagedPaths) {
  std::mt19937 rng(3);
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  for (CausalAlign causal : {CausalAlign::kNone, CausalAlign::kTopLeft, CausalAlign::kLowerRight})
    for (auto [n_q, n_k] : {std::pair{4, 4}, std::pair{3, 70}, std::pair{70, 3}, std::pair{40, 33}})
      for (bool global : {false, true})
        for (int w :
             {0, 1, 2, n_q + n_k - 1, n_q + n_k, INT_MAX / 2, INT_MAX - 2, INT_MAX - 1, INT_MAX}) {
          AttentionProblem p;
          p.input.q = test::random_heads(1, n_q, 4, rng);
          p.input.k = test::random_heads(1, n_k, 4, rng);
          p.input.v = test::random_heads(1, n_k, 3, rng);
          p.options.mask.causal = causal;
          p.options.mask.window = w;
          if (global) p.options.mask.global = {1};
          const std::string name = "W=" + std::to_string(w) + " n_q=" + std::to_string(n_q) +
                                   " n_k=" + std::to_string(n_k) + " causal " +
                                   std::to_string(static_cast<int>(causal));
          ASSERT_EQ(validate_problem(p), "") << name;
          const HeadStack fused = fused_attention_cpu(p);
          const AttentionTrace staged = compute_trace(p, *cpu);
          const test::RefResult ref = test::reference_attention(p);
          EXPECT_LT(test::max_abs_diff(fused[0], ref.output[0]), 1e-5) << name << " fused";
          EXPECT_LT(test::max_abs_diff(staged.head(StageId::kOutput, 0), ref.output[0]), 1e-5)
              << name << " staged";
          EXPECT_LT(test::max_abs_diff(staged.head(StageId::kWeights, 0), ref.weights[0]), 1e-5)
              << name;
          if (w >= n_q + n_k) {  // no |p - j| is that large: the window hides nothing
            AttentionProblem none = p;
            none.options.mask.window.reset();
            const HeadStack open = fused_attention_cpu(none);
            EXPECT_LT((fused[0] - open[0]).cwiseAbs().maxCoeff(), 1e-6f) << name;
          }
        }
}

}  // namespace
}  // namespace attn
