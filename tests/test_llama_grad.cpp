// Finite-difference checks of the Llama family's hand-written backward pass (lm/llama_train.h) in
// double precision: every entry of every parameter tensor of a small grouped-query model (with
// SwiGLU, attention-only, and with Qwen2's q/k/v biases and Mistral's sliding window) must match
// the central difference of the loss. And the training forward pass is the model: converted to
// the inference weights (llama_weights_from_params), lm/llama_forward.h — itself checked against
// an independent double-precision reference in test_llama_cli — computes the same logits.
#include <gtest/gtest.h>

#include <cmath>

#include "grad_check.h"
#include "lm/llama_forward.h"
#include "lm/llama_train.h"

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

struct Variant {
  const char* name;
  bool mlp, qkv_bias;
  int window;
};

Config tiny_config(const Variant& v) {
  Config c;
  c.arch = LmArch::kLlama;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_kv_head = 2;  // two query heads per K/V head: the K/V gradients sum over both
  c.n_embd = 16;
  c.head_dim = 4;
  c.n_inner = 10;
  c.n_positions = 8;
  c.vocab_size = 9;
  c.rope_theta = 100;  // angles that differ visibly across 6 positions
  c.layer_norm_epsilon = 1e-5;
  c.tied = true;
  c.qkv_bias = v.qkv_bias;
  c.sliding_window = v.window;
  return c;
}

// The loss from the logits (grad_check.h's plain loop), not from the backward pass.
double loss_of(const ParameterBuffer<double>& p, const ForwardOptions& o) {
  ActivationsT<double> a;
  LlamaScratch<double> s;
  llama_train_forward(p, kGradTokens, kGradB, kGradT, a, s, o);
  return next_token_loss(a, p.config.vocab_size);
}

const char* tensor_name(Param t) {
  switch (t) {
    case kWte:
      return "embed_tokens (tied output)";
    case kLn1W:
      return "input_layernorm";
    case kQkvW:
      return "q|k|v_proj";
    case kQkvB:
      return "q|k|v_proj bias";
    case kAttProjW:
      return "o_proj";
    case kLn2W:
      return "post_attention_layernorm";
    case kFcW:
      return "gate|up_proj";
    case kFcProjW:
      return "down_proj";
    case kLnfW:
      return "norm";
    default:
      return "(empty)";
  }
}

class LlamaGradCheck : public ::testing::TestWithParam<Variant> {};

TEST_P(LlamaGradCheck, EveryParameterMatchesCentralDifferences) {
  const Variant v = GetParam();
  ForwardOptions o;
  o.mlp = v.mlp;
  o.threads = 1;
  ParameterBuffer<double> p = random_params<double>(tiny_config(v), 7);
  ActivationsT<double> a;
  LlamaScratch<double> scratch;
  llama_train_forward(p, kGradTokens, kGradB, kGradT, a, scratch, o);
  ParameterBuffer<double> g;
  g.allocate(p.config);
  int counted = 0;
  const double loss = llama_backward(p, a, kGradTargets, 1.0, g, scratch, o, &counted);
  EXPECT_EQ(counted, 11);
  EXPECT_NEAR(loss, loss_of(p, o), 1e-12);

  const double eps = 1e-6;
  auto loss_at = [&o](const ParameterBuffer<double>& q) { return loss_of(q, o); };
  int checked_tensors = 0;
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto t = static_cast<Param>(pi);
    if (p.count[t] == 0) continue;
    ++checked_tensors;
    const bool used = v.mlp || !(t == kLn2W || t == kFcW || t == kFcProjW);
    double norm = 0;
    for (size_t i = 0; i < p.count[t]; ++i) {
      const double numeric = central_difference(p, t, i, loss_at, eps);
      const double analytic = g.ptr(t)[i];
      norm += analytic * analytic;
      ASSERT_NEAR(analytic, numeric, 1e-7 * std::max(1.0, std::abs(numeric)))
          << tensor_name(t) << " [" << i << "]";
    }
    if (used)
      EXPECT_GT(std::sqrt(norm), 1e-6) << tensor_name(t) << " has no gradient";
    else
      EXPECT_EQ(norm, 0.0) << tensor_name(t);
  }
  EXPECT_EQ(checked_tensors, v.qkv_bias ? 9 : 8);
}

INSTANTIATE_TEST_SUITE_P(Variants, LlamaGradCheck,
                         ::testing::Values(Variant{"swiglu", true, false, 0},
                                           Variant{"attention_only", false, false, 0},
                                           Variant{"qkv_bias_window_3", true, true, 3}),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(info.param.name);
                         });

// Attention shaping (lm train --shape-previous): with the term on one head, every parameter's
// gradient is the central difference of the next-token losses plus the term, both computed here
// from the forward pass's logits and weights.
TEST(LlamaGradCheck, TheShapingTermMatchesCentralDifferences) {
  struct Case {
    Variant v;
    PreviousTokenShaping shaping;
  };
  for (const Case& k : {Case{{"layer 1 head 3, window 3", true, false, 3}, {1, 3, 0.37}},
                        Case{{"layer 0 head 0, attention-only", false, false, 0}, {0, 0, 2.0}}}) {
    SCOPED_TRACE(k.v.name);
    ForwardOptions o;
    o.mlp = k.v.mlp;
    o.threads = 1;
    ParameterBuffer<double> p = random_params<double>(tiny_config(k.v), 17);
    // The next-token losses from the logits plus the term (no backward pass per difference).
    ActivationsT<double> fa;
    LlamaScratch<double> fs;
    auto total = [&](const ParameterBuffer<double>& q) {
      llama_train_forward(q, kGradTokens, kGradB, kGradT, fa, fs, o);
      return next_token_loss(fa, q.config.vocab_size) +
             shaping_term(fa, q.config.n_head, k.shaping);
    };
    ActivationsT<double> a;
    LlamaScratch<double> scratch;
    llama_train_forward(p, kGradTokens, kGradB, kGradT, a, scratch, o);
    ParameterBuffer<double> g;
    g.allocate(p.config);
    llama_backward(p, a, kGradTargets, 1.0, g, scratch, o, nullptr, k.shaping);
    for (int pi = 0; pi < kNumParams; ++pi) {
      const auto t = static_cast<Param>(pi);
      double worst = 0;
      for (size_t i = 0; i < p.count[t]; ++i) {
        const double numeric = central_difference(p, t, i, total);
        worst = std::max(worst, std::abs(g.ptr(t)[i] - numeric) / std::max(1.0, std::abs(numeric)));
      }
      EXPECT_LT(worst, 1e-7) << tensor_name(t);
    }
  }
}

// The sliding window really hides the far keys: with W = 3 no query puts weight more than two
// positions back, and every row still sums to 1.
TEST(LlamaTrainForward, TheSlidingWindowHidesFarKeys) {
  const Variant v{"window", true, false, 3};
  const ParameterBuffer<double> p = random_params<double>(tiny_config(v), 3);
  ActivationsT<double> a;
  LlamaScratch<double> s;
  llama_train_forward(p, kGradTokens, kGradB, kGradT, a, s, {});
  for (size_t blk = 0; blk < a.att.size() / (kGradT * kGradT); ++blk)
    for (int i = 0; i < kGradT; ++i) {
      double sum = 0;
      for (int j = 0; j < kGradT; ++j) {
        const double w = a.att[blk * kGradT * kGradT + static_cast<size_t>(i) * kGradT + j];
        sum += w;
        if (j > i || j <= i - 3) {
          EXPECT_EQ(w, 0.0) << "query " << i << " key " << j;
        }
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
}

// The trained model is the model the app and the command line run: the training buffer made into
// inference weights gives the same logits through lm/llama_forward.h.
TEST(LlamaTrainForward, MatchesTheInferencePassOfTheConvertedWeights) {
  for (const Variant& v : {Variant{"swiglu", true, false, 0}, Variant{"bias", true, true, 4}}) {
    SCOPED_TRACE(v.name);
    const ParameterBuffer<double> pd = random_params<double>(tiny_config(v), 11);
    Model m;
    m.config = pd.config;
    m.params.allocate(pd.config);
    for (size_t i = 0; i < pd.total(); ++i) m.params.memory[i] = static_cast<float>(pd.memory[i]);
    llama_weights_from_params(m);
    ASSERT_EQ(m.llama.layers.size(), 2u);
    EXPECT_EQ(m.llama.layers[0].q.rows, 16);
    EXPECT_EQ(m.llama.layers[0].k.rows, 8);
    EXPECT_EQ(m.llama.layers[0].gate.rows, 10);
    EXPECT_EQ(m.llama.layers[0].down.cols, 10);
    ActivationsT<double> ad;
    LlamaScratch<double> s;
    llama_train_forward(pd, kGradTokens, kGradB, kGradT, ad, s, {});
    Activations af;
    ForwardOptions o;
    o.threads = 1;
    llama_forward(m, kGradTokens, kGradB, kGradT, af, o);
    ASSERT_EQ(af.logits.size(), ad.logits.size());
    for (size_t i = 0; i < ad.logits.size(); ++i) EXPECT_NEAR(af.logits[i], ad.logits[i], 1e-4);
    for (size_t i = 0; i < ad.att.size(); ++i) EXPECT_NEAR(af.att[i], ad.att[i], 1e-5);
  }
}

// The float instantiation (what training runs) and the double one agree, gradients included.
TEST(LlamaTrainForward, FloatAndDoubleAgree) {
  const Variant v{"swiglu", true, true, 0};
  const ParameterBuffer<double> pd = random_params<double>(tiny_config(v), 13);
  ParameterBuffer<float> pf;
  pf.allocate(pd.config);
  for (size_t i = 0; i < pd.total(); ++i) pf.memory[i] = static_cast<float>(pd.memory[i]);
  ActivationsT<double> ad;
  ActivationsT<float> af;
  LlamaScratch<double> sd;
  LlamaScratch<float> sf;
  llama_train_forward(pd, kGradTokens, kGradB, kGradT, ad, sd, {});
  llama_train_forward(pf, kGradTokens, kGradB, kGradT, af, sf, {});
  ParameterBuffer<double> gd;
  ParameterBuffer<float> gf;
  gd.allocate(pd.config);
  gf.allocate(pd.config);
  const double ld = llama_backward(pd, ad, kGradTargets, 1.0 / 11, gd, sd, {});
  const double lf = llama_backward(pf, af, kGradTargets, 1.0 / 11, gf, sf, {});
  EXPECT_NEAR(lf, ld, 1e-4);
  for (size_t i = 0; i < gd.total(); ++i)
    EXPECT_NEAR(gf.memory[i], gd.memory[i], 1e-4 * std::max(1.0, std::abs(gd.memory[i]))) << i;
}

}  // namespace
}  // namespace attn::lm
