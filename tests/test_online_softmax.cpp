// Tests for FlashAttention's online softmax (explain/online_softmax.h and
// `explain --online-softmax`): for every built-in example, head, query and block size the walk
// ends on the trace's output and its last line is explain's output line; the running maximum and
// sum match an independent double loop over reference_attention's masked scores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "explain/online_softmax.h"
#include "io/examples.h"
#include "reference.h"

namespace attn {
namespace {

AttentionTrace example_trace(const std::string& name, Scenario* scenario = nullptr) {
  std::string error;
  std::optional<Scenario> s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  if (scenario) *scenario = *s;
  return compute_scenario_trace(*s, *cpu);
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

// The line of explain()'s weighted sum that states the output ("   output_… = […]").
std::string explain_output_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, found;
  while (std::getline(in, line))
    if (line.rfind("   output_", 0) == 0) found = line;
  return found;
}

TEST(OnlineSoftmax, EveryExampleHeadQueryAndBlockSizeEndsOnTheTracesOutput) {
  int walks = 0;
  for (const ExampleInfo& ex : list_examples()) {
    const AttentionTrace t = example_trace(ex.name);
    // Linformer's and Multi-Token Attention's stages are not plain attention's: the walk refuses
    // them (test_variants_cli.cpp checks the refusal).
    if (t.variants.any()) continue;
    for (int h = 0; h < t.num_heads; ++h) {
      const Matrix out = t.head(StageId::kOutput, h);
      for (int i = 0; i < t.n_q; ++i) {
        ExplainRequest req;
        req.query = i;
        req.head = h;
        std::string error;
        const std::string standard = explain(t, req, error);
        ASSERT_TRUE(error.empty()) << error;
        const std::string want = explain_output_line(standard);
        ASSERT_FALSE(want.empty()) << ex.name << " query " << i;
        for (int b = 1; b <= t.n_k; ++b) {
          const OnlineSoftmaxWalk w = online_softmax_walk(t, i, h, b);
          ASSERT_EQ(static_cast<int>(w.blocks.size()), (t.n_k + b - 1) / b);
          for (int c = 0; c < t.d_v; ++c)
            EXPECT_NEAR(w.output[static_cast<size_t>(c)], out(i, c),
                        2e-6 * std::max(1.0, std::abs(static_cast<double>(out(i, c)))))
                << ex.name << " head " << h << " query " << i << " B " << b << " component " << c;
          const std::string text = explain_online_softmax(t, req, b, error);
          ASSERT_TRUE(error.empty()) << error;
          EXPECT_EQ(last_line(text), want)
              << ex.name << " head " << h << " query " << i << " B " << b << "\n"
              << text;
          ++walks;
        }
      }
    }
  }
  EXPECT_GT(walks, 100);
}

// m and ℓ after every block from reference_attention's masked scores (double, its own mask
// rules), with the recurrence written out again here.
TEST(OnlineSoftmax, RunningMaxAndSumMatchAnIndependentDoubleLoop) {
  for (const ExampleInfo& ex : list_examples()) {
    Scenario s;
    const AttentionTrace t = example_trace(ex.name, &s);
    // The reference computes dot-product scores; the additive example's are checked against
    // their own reference in test_additive.cpp (and its walk ends on its output above).
    if (s.options.additive || s.options.variants.any()) continue;
    const test::RefResult ref = test::reference_attention(to_problem(s));
    for (int h = 0; h < t.num_heads; ++h)
      for (int i = 0; i < t.n_q; ++i)
        for (int b = 1; b <= t.n_k; ++b) {
          const OnlineSoftmaxWalk w = online_softmax_walk(t, i, h, b);
          const test::RefMat& x = ref.masked[static_cast<size_t>(h)];
          double m = -INFINITY, l = 0.0;
          for (int first = 0, k = 0; first < t.n_k; first += b, ++k) {
            double bm = -INFINITY;
            for (int j = first; j < std::min(first + b, t.n_k); ++j)
              bm = std::max(bm, x(i, j) / t.temperature);
            const double m_new = std::max(m, bm);
            if (!std::isinf(m_new)) {
              l = l * std::exp(m - m_new);
              for (int j = first; j < std::min(first + b, t.n_k); ++j)
                if (!std::isinf(x(i, j))) l += std::exp(x(i, j) / t.temperature - m_new);
            }
            m = m_new;
            const OnlineBlock& got = w.blocks[static_cast<size_t>(k)];
            if (std::isinf(m)) {
              EXPECT_TRUE(std::isinf(got.m_new));
            } else {
              EXPECT_NEAR(got.m_new, m, 1e-5) << ex.name << " h" << h << " i" << i << " B" << b;
            }
            EXPECT_NEAR(got.l_new, l, 1e-5 * std::max(1.0, l))
                << ex.name << " h" << h << " i" << i << " B" << b << " block " << k;
          }
        }
  }
}

// fear-is query 0 with B = 1, derived by hand from 001's tables: scaled scores 0.27/√3 and
// 0.54/√3; the second key raises m by 0.27/√3, so ℓ = e^(−0.27/√3) + 1 and acc is rescaled by the
// same factor.
TEST(OnlineSoftmax, FearIsByHand) {
  const AttentionTrace t = example_trace("fear-is");
  const OnlineSoftmaxWalk w = online_softmax_walk(t, 0, 0, 1);
  ASSERT_EQ(w.blocks.size(), 2u);
  const double x0 = 0.27 / std::sqrt(3.0), x1 = 0.54 / std::sqrt(3.0);
  EXPECT_NEAR(w.blocks[0].m_new, x0, 1e-6);
  EXPECT_NEAR(w.blocks[0].l_new, 1.0, 1e-12);
  EXPECT_TRUE(w.blocks[1].grew());
  EXPECT_NEAR(w.blocks[1].rescale, std::exp(x0 - x1), 1e-6);
  EXPECT_NEAR(w.blocks[1].l_new, std::exp(x0 - x1) + 1.0, 1e-6);
  EXPECT_NEAR(w.blocks[1].acc_new[0], 0.1 * std::exp(x0 - x1) + 0.8, 1e-6);
  // With one block of both keys m never grows after the start.
  const OnlineSoftmaxWalk one = online_softmax_walk(t, 0, 0, 2);
  ASSERT_EQ(one.blocks.size(), 1u);
  EXPECT_NEAR(one.blocks[0].m_new, x1, 1e-6);
}

TEST(OnlineSoftmax, HiddenRowsAndMemoryFigures) {
  // padding: the queries' keys 3 and 4 are padding; with B = 2 the last block {4} is all hidden.
  const AttentionTrace t = example_trace("padding");
  const OnlineSoftmaxWalk w = online_softmax_walk(t, 0, 0, 2);
  ASSERT_EQ(w.blocks.size(), 3u);
  EXPECT_EQ(w.blocks[2].visible, 0);
  EXPECT_EQ(w.blocks[2].l_new, w.blocks[1].l_new);
  const ScoreTraffic tr = score_traffic(t, 2);
  EXPECT_EQ(tr.cells_per_head, 25);
  EXPECT_EQ(tr.matrix_bytes, 25 * 4 * t.num_heads);
  EXPECT_EQ(tr.traffic_bytes, 4 * 25 * 4 * t.num_heads);
  EXPECT_EQ(tr.block_bytes, 8);
  EXPECT_EQ(bytes_text(100), "100 B");
  EXPECT_EQ(bytes_text(3 * 1024 * 1024 / 2), "1.5 MiB");
}

TEST(OnlineSoftmaxCli, PrintsTheWalkAndRefusesBadBlocks) {
  test::CliResult r = test::run_cli("explain --example fear-is --query 0 --online-softmax 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Block 2 of 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("m grew: rescale by"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output_Fear = [0.4772, 0.3767, 0.2922]"), std::string::npos) << r.out;
  r = test::run_cli("explain --example fear-is --query 0 --online-softmax 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --online-softmax"), std::string::npos) << r.err;
  r = test::run_cli("explain --example fear-is --query 0 --online-softmax 1 --key 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --online-softmax"), std::string::npos) << r.err;
  // A block larger than the row is one block.
  r = test::run_cli("explain --example fear-is-the --query 2 --online-softmax 99 --ascii");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Block 1 of 1"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn
