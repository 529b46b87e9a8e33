// Finite-difference checks of the hand-written backward pass (lm/backward.h) in double precision:
// for every parameter tensor of a small GPT-2 (with its MLP and attention-only), every entry's
// gradient must match the central difference of the loss; and the float instantiation used for
// training computes the same forward pass as the double one.
#include <gtest/gtest.h>

#include <cmath>

#include "grad_check.h"
#include "lm/backward.h"

namespace attn::lm {
namespace {

using test::central_difference;
using test::kGradB;
using test::kGradT;
using test::kGradTargets;
using test::kGradTokens;
using test::next_token_loss;
using test::random_params;
using test::shaping_term;

Config tiny_config() {
  Config c;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 6;
  c.n_positions = 7;
  c.vocab_size = 9;
  c.n_inner = 10;  // not 4·C, so the MLP's shapes are checked too
  return c;
}

// The loss from the logits (grad_check.h's plain loop), not from the backward pass.
double loss_of(const ParameterBuffer<double>& p, const ForwardOptions& o) {
  ActivationsT<double> a;
  gpt_forward(p, kGradTokens, kGradB, kGradT, a, o);
  return next_token_loss(a, p.config.vocab_size);
}

class LmGradCheck : public ::testing::TestWithParam<bool> {};

TEST_P(LmGradCheck, EveryParameterMatchesCentralDifferences) {
  const bool mlp = GetParam();
  ForwardOptions o;
  o.mlp = mlp;
  o.threads = 1;
  ParameterBuffer<double> p = random_params<double>(tiny_config(), mlp ? 7 : 8);
  ActivationsT<double> a;
  gpt_forward(p, kGradTokens, kGradB, kGradT, a, o);
  ParameterBuffer<double> g;
  g.allocate(p.config);
  GradScratch<double> scratch;
  int counted = 0;
  const double loss = gpt_backward(p, a, kGradTargets, 1.0, g, scratch, o, &counted);
  EXPECT_EQ(counted, 11);
  EXPECT_NEAR(loss, loss_of(p, o), 1e-12);

  const double eps = 1e-6;
  auto loss_at = [&o](const ParameterBuffer<double>& q) { return loss_of(q, o); };
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto t = static_cast<Param>(pi);
    // Without the MLP, its weights and ln_2 (which only feeds it) have no effect.
    const bool used = mlp || !(param_is_mlp(t) || t == kLn2W || t == kLn2B);
    double norm = 0, worst = 0;
    for (size_t i = 0; i < p.count[t]; ++i) {
      const double numeric = central_difference(p, t, i, loss_at, eps);
      const double analytic = g.ptr(t)[i];
      norm += analytic * analytic;
      worst = std::max(worst, std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric)));
      ASSERT_NEAR(analytic, numeric, 1e-7 * std::max(1.0, std::abs(numeric)))
          << param_name(t, 0) << " (all layers) [" << i << "]";
    }
    // A tensor the loss ignores would pass trivially: each must have a gradient (the MLP's only
    // when it is computed; without it, none at all).
    if (used)
      EXPECT_GT(std::sqrt(norm), 1e-6) << param_name(t, 0) << " has no gradient";
    else
      EXPECT_EQ(norm, 0.0) << param_name(t, 0);
    RecordProperty(param_name(t, 0), std::to_string(worst));
  }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutMlp, LmGradCheck, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "gpt2" : "attention_only");
                         });

// A wrong gradient anywhere would have shown above; this checks the check: a perturbed analytic
// gradient is caught by the same comparison.
TEST(LmGradCheck, TheComparisonCatchesASmallError) {
  ForwardOptions o;
  o.threads = 1;
  ParameterBuffer<double> p = random_params<double>(tiny_config(), 9);
  ActivationsT<double> a;
  gpt_forward(p, kGradTokens, kGradB, kGradT, a, o);
  ParameterBuffer<double> g;
  g.allocate(p.config);
  GradScratch<double> s;
  gpt_backward(p, a, kGradTargets, 1.0, g, s, o);
  const size_t i = p.count[kQkvW] / p.config.n_layer + 5;  // layer 1's element 5
  const double numeric = central_difference(
      p, kQkvW, i, [&o](const ParameterBuffer<double>& q) { return loss_of(q, o); });
  EXPECT_NEAR(g.ptr(kQkvW)[i], numeric, 1e-7 * std::max(1.0, std::abs(numeric)));
  EXPECT_GT(std::abs(g.ptr(kQkvW)[i] * 1.001 - numeric), 1e-7 * std::max(1.0, std::abs(numeric)))
      << "a 0.1% error must fail the tolerance";
}

// Attention shaping (lm train --shape-previous) on layer 1's head 1: every parameter's gradient is
// the central difference of the next-token losses plus the term, computed here from the weights.
TEST(LmGradCheck, TheShapingTermMatchesCentralDifferences) {
  ForwardOptions o;
  o.threads = 1;
  const PreviousTokenShaping shaping{1, 1, 0.6};
  ParameterBuffer<double> p = random_params<double>(tiny_config(), 19);
  auto total = [&](const ParameterBuffer<double>& q) {
    ActivationsT<double> a;
    gpt_forward(q, kGradTokens, kGradB, kGradT, a, o);
    return next_token_loss(a, q.config.vocab_size) + shaping_term(a, q.config.n_head, shaping);
  };
  ActivationsT<double> a;
  gpt_forward(p, kGradTokens, kGradB, kGradT, a, o);
  ParameterBuffer<double> g, plain;
  g.allocate(p.config);
  plain.allocate(p.config);
  GradScratch<double> s;
  gpt_backward(p, a, kGradTargets, 1.0, g, s, o, nullptr, shaping);
  gpt_backward(p, a, kGradTargets, 1.0, plain, s, o);
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto t = static_cast<Param>(pi);
    double worst = 0, changed = 0;
    for (size_t i = 0; i < p.count[t]; ++i) {
      const double numeric = central_difference(p, t, i, total);
      worst = std::max(worst, std::abs(g.ptr(t)[i] - numeric) / std::max(1.0, std::abs(numeric)));
      changed = std::max(changed, std::abs(g.ptr(t)[i] - plain.ptr(t)[i]));
    }
    EXPECT_LT(worst, 1e-7) << param_name(t, 0);
    // The term reaches what feeds layer 1's scores, and nothing after them.
    if (t == kQkvW || t == kWte || t == kWpe) {
      EXPECT_GT(changed, 1e-6) << param_name(t, 0);
    }
    if (t == kLnfW || t == kLnfB) {
      EXPECT_EQ(changed, 0.0) << param_name(t, 0);
    }
  }
}

// The float instantiation (what training runs) and the double one agree.
TEST(LmGradCheck, FloatAndDoubleAgree) {
  ForwardOptions o;
  o.threads = 2;
  const ParameterBuffer<double> pd = random_params<double>(tiny_config(), 11);
  ParameterBuffer<float> pf;
  pf.allocate(pd.config);
  for (size_t i = 0; i < pd.total(); ++i) pf.memory[i] = static_cast<float>(pd.memory[i]);
  ActivationsT<double> ad;
  ActivationsT<float> af;
  gpt_forward(pd, kGradTokens, kGradB, kGradT, ad, o);
  gpt_forward(pf, kGradTokens, kGradB, kGradT, af, o);
  for (size_t i = 0; i < ad.logits.size(); ++i) EXPECT_NEAR(af.logits[i], ad.logits[i], 1e-4);
  ParameterBuffer<double> gd;
  ParameterBuffer<float> gf;
  gd.allocate(pd.config);
  gf.allocate(pd.config);
  GradScratch<double> sd;
  GradScratch<float> sf;
  const double ld = gpt_backward(pd, ad, kGradTargets, 1.0 / 11, gd, sd, o);
  const double lf = gpt_backward(pf, af, kGradTargets, 1.0 / 11, gf, sf, o);
  EXPECT_NEAR(lf, ld, 1e-4);
  for (size_t i = 0; i < gd.total(); ++i)
    EXPECT_NEAR(gf.memory[i], gd.memory[i], 1e-4 * std::max(1.0, std::abs(gd.memory[i]))) << i;
}

}  // namespace
}  // namespace attn::lm
