// Tests for the √d_k experiment (explain/scaling_experiment.h) and `experiment sqrt-dk`: the
// sample statistics of q·k for q, k from N(0, 1) against their exact values (mean 0, variance
// d_k, and 1 after the division) within five standard errors of the sample size, and the softmax
// turning one-hot with a vanishing Jacobian without the division; seeded, so deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "explain/scaling_experiment.h"
#include "reference.h"

namespace attn {
namespace {

TEST(ScalingExperiment, VariancesAreDkAndOneWithinTheSamplingError) {
  ScalingRequest r;
  r.seed = 7;
  r.samples = 3000;
  r.rows = 100;
  const std::vector<ScalingRow> rows = run_scaling_experiment(r, {2, 16, 128, 1024});
  ASSERT_EQ(rows.size(), 4u);
  const double N = r.samples;
  for (const ScalingRow& x : rows) {
    const double d = x.d_k;
    SCOPED_TRACE(x.d_k);
    // q·k is a sum of d products q_a k_a, each of mean 0, variance 1 and fourth moment 9, so
    // E[(q·k)^4] = 9d + 3d(d − 1) = 3d² + 6d: the sample mean has standard error √(d/N) and the
    // sample variance √((3d² + 6d − d²)/N).
    EXPECT_NEAR(x.mean_dot, 0.0, 5 * std::sqrt(d / N));
    EXPECT_NEAR(x.var_dot, d, 5 * std::sqrt((2 * d * d + 6 * d) / N));
    EXPECT_NEAR(x.var_scaled, 1.0, 5 * std::sqrt((2 + 6 / d) / N));
    EXPECT_NEAR(x.var_scaled * d, x.var_dot, 1e-9 * d);
    EXPECT_EQ(std::accumulate(x.dot.counts.begin(), x.dot.counts.end(), 0), r.samples);
    EXPECT_EQ(std::accumulate(x.scaled.counts.begin(), x.scaled.counts.end(), 0), r.samples);
    ASSERT_EQ(x.example_dot.size(), static_cast<size_t>(r.keys));
    EXPECT_NEAR(std::accumulate(x.example_dot.begin(), x.example_dot.end(), 0.0), 1.0, 1e-12);
  }
  // Without the division, a row of 8 scores of standard deviation 32 is almost one-hot and its
  // Jacobian almost 0; divided, the largest of 8 weights stays far from 1.
  const ScalingRow& big = rows.back();
  EXPECT_GT(big.max_weight_dot, 0.9);
  EXPECT_LT(big.jacobian_dot, 0.2 * big.jacobian_scaled);
  for (const ScalingRow& x : rows) {
    EXPECT_LT(x.max_weight_scaled, 0.7) << x.d_k;
    EXPECT_GT(x.jacobian_scaled, 0.2) << x.d_k;
  }
  EXPECT_GT(rows[3].max_weight_dot, rows[1].max_weight_dot);
  EXPECT_LT(rows[3].jacobian_dot, rows[1].jacobian_dot);
}

// The Jacobian of the softmax of two equal scores is [[1/4, −1/4], [−1/4, 1/4]]: norm 1/2. With
// one key it is 0. A one-key row is not drawn, so the check is on an even row of 2 keys with
// d_k = 2 against the mean over many rows: between 0 and 1/2.
TEST(ScalingExperiment, JacobianNormIsBoundedByTheUniformRow) {
  ScalingRequest r;
  r.samples = 10;
  r.rows = 500;
  r.keys = 2;
  const ScalingRow x = run_scaling_experiment(r, {2}).front();
  EXPECT_GT(x.jacobian_scaled, 0.0);
  EXPECT_LE(x.jacobian_scaled, 0.5 + 1e-12);
  EXPECT_LE(x.jacobian_dot, x.jacobian_scaled);
}

TEST(ScalingExperiment, SeededAndCli) {
  ScalingRequest r;
  r.samples = 200;
  r.rows = 10;
  const auto a = run_scaling_experiment(r, {8}), b = run_scaling_experiment(r, {8});
  EXPECT_EQ(a[0].var_dot, b[0].var_dot);
  r.seed = 2;
  EXPECT_NE(run_scaling_experiment(r, {8})[0].var_dot, a[0].var_dot);
  test::CliResult c = test::run_cli("experiment sqrt-dk --seed 3 --samples 500 --rows 20");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("  1024 "), std::string::npos) << c.out;
  c = test::run_cli("experiment sqrt-dk --samples 1");
  EXPECT_EQ(c.status, 2);
  EXPECT_NE(c.err.find("--samples"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace attn
