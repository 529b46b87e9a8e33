// Attention rollout (lm/rollout.h) on a fixture model against the rollout computed here in
// double from the double-precision reference forward pass's weights, and `lm rollout`.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "io/npy.h"
#include "lm/forward.h"
#include "lm/model.h"
#include "lm/rollout.h"
#include "lm_fixture.h"
#include "reference.h"

namespace attn::lm {
namespace {

const char* kText = "The teacher explains attention; the teacher shows the heads.";

TEST(Rollout, MatchesAnIndependentDoubleComputation) {
  test::TestModelSpec spec;
  spec.n_layer = 3;
  const test::TestModel tm = test::make_test_model(spec);
  const std::string dir = test::temp_path("rollout-model");
  test::write_test_model(tm, dir);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(dir, m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode(kText);
  const int T = static_cast<int>(ids.size()), L = spec.n_layer, NH = spec.n_head;
  Activations a;
  gpt_forward(m, ids, 1, T, a);
  const Rollout r = attention_rollout(m.config, a);
  ASSERT_EQ(static_cast<int>(r.cumulative.size()), L);

  const test::ReferenceForward ref = test::reference_forward(tm, ids);
  // R = I, then per layer: A'(i, j) = (½·mean_h att + ½·[i = j]) / row sum, R ← A'·R.
  std::vector<double> R(static_cast<size_t>(T) * T, 0.0);
  for (int i = 0; i < T; ++i) R[static_cast<size_t>(i) * T + i] = 1.0;
  for (int l = 0; l < L; ++l) {
    std::vector<double> A(static_cast<size_t>(T) * T, 0.0), next(A.size(), 0.0);
    for (int i = 0; i < T; ++i) {
      double row = 0;
      for (int j = 0; j < T; ++j) {
        double mean = 0;
        for (int h = 0; h < NH; ++h)
          mean += ref.att[((static_cast<size_t>(l) * NH + h) * T + i) * T + j] / NH;
        A[static_cast<size_t>(i) * T + j] = 0.5 * mean + (i == j ? 0.5 : 0.0);
        row += A[static_cast<size_t>(i) * T + j];
      }
      for (int j = 0; j < T; ++j) A[static_cast<size_t>(i) * T + j] /= row;
    }
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        for (int k = 0; k < T; ++k)
          next[static_cast<size_t>(i) * T + j] +=
              A[static_cast<size_t>(i) * T + k] * R[static_cast<size_t>(k) * T + j];
    R = next;
    for (int i = 0; i < T; ++i) {
      double sum = 0;
      for (int j = 0; j < T; ++j) {
        EXPECT_NEAR(r.cumulative[static_cast<size_t>(l)](i, j), R[static_cast<size_t>(i) * T + j],
                    1e-5)
            << "layer " << l << " (" << i << ", " << j << ")";
        sum += r.cumulative[static_cast<size_t>(l)](i, j);
        // Causal: nothing flows from a later token.
        if (j > i) {
          EXPECT_EQ(r.cumulative[static_cast<size_t>(l)](i, j), 0.0);
        }
      }
      EXPECT_NEAR(sum, 1.0, 1e-9);
    }
  }
  // One token's rows by vector–matrix products are the full products' rows.
  const auto rows = rollout_of_token(m.config, a, T - 1);
  ASSERT_EQ(static_cast<int>(rows.size()), L);
  for (int l = 0; l < L; ++l)
    for (int j = 0; j < T; ++j)
      EXPECT_NEAR(rows[static_cast<size_t>(l)][static_cast<size_t>(j)],
                  r.cumulative[static_cast<size_t>(l)](T - 1, j), 1e-12);
  // The receptive field of the last token never shrinks with depth.
  for (int l = 1; l < L; ++l)
    EXPECT_GE(receptive_field(r, l, T - 1, 1e-3), receptive_field(r, l - 1, T - 1, 1e-3));

  test::CliResult c = test::run_cli("lm rollout --model '" + dir + "' --text '" + kText +
                                    "' --top 3 --out '" + dir + "/rollout.npy'");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("after layer 2:"), std::string::npos) << c.out;
  std::optional<NpyTensor> npy = read_npy(dir + "/rollout.npy", NpyContent::kFloat, error);
  ASSERT_TRUE(npy) << error;
  ASSERT_EQ(static_cast<int>(npy->heads.size()), L);
  EXPECT_NEAR(npy->heads[1](T - 1, 0), r.cumulative[1](T - 1, 0), 1e-6);
}

}  // namespace
}  // namespace attn::lm
