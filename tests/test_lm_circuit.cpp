// The exact split of an attention score into the parts of the key's residual stream
// (lm/circuit.h), the Circuit tab's step 3: for GPT-2 the parts add up to q·k/√d_k of the
// independent reference forward pass; for the Llama family (RMSNorm, RoPE, grouped K/V heads,
// Mistral's window, Qwen2's k bias, float32 and bfloat16 weights) the parts of every key, added up,
// are the scores whose softmax is the independent double-precision reference's weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "llama_fixture.h"
#include "lm/circuit.h"
#include "lm/llama_forward.h"
#include "lm/model.h"
#include "lm_fixture.h"
#include "reference.h"

namespace attn::lm {
namespace {

class LmCircuit : public ::testing::TestWithParam<bool> {};

// The parts of a key's score add up to the score, which equals q·k/√d_k from the reference.
TEST_P(LmCircuit, ScorePartsSumToTheScore) {
  test::TestModelSpec spec;
  spec.n_layer = 3;
  spec.n_head = 2;
  spec.n_embd = 12;
  const test::TestModel tm = test::make_test_model(spec);
  const std::string dir = test::temp_path("circuit-model");
  test::write_test_model(tm, dir);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(dir, m, error)) << error;
  ForwardOptions fo;
  fo.mlp = GetParam();
  const std::vector<int> ids = m.tokenizer.encode("the teacher shows the heads. the teacher");
  const int T = static_cast<int>(ids.size());
  Activations a;
  gpt_forward(m.params, ids, 1, T, a, fo);
  if (GetParam()) {
    const test::ReferenceForward ref = test::reference_forward(tm, ids);
    for (int l = 0; l < 3; ++l) {
      double dot = 0;
      for (int i = 0; i < 6; ++i)
        dot += ref.q[(static_cast<size_t>(l) * T + 7) * 12 + 6 + i] *
               ref.k[(static_cast<size_t>(l) * T + 3) * 12 + 6 + i];
      EXPECT_NEAR(head_score(m.config, a, l, 1, 7, 3), dot / std::sqrt(6.0), 1e-4);
    }
  }
  for (int l = 0; l < 3; ++l)
    for (int key = 0; key <= 7; ++key) {
      const auto parts = key_score_parts(m, a, l, 1, 7, key);
      EXPECT_EQ(parts.size(), 3u + (2u + (GetParam() ? 1u : 0u)) * l);
      double sum = 0;
      for (const auto& p : parts) sum += p.value;
      const double score = head_score(m.config, a, l, 1, 7, key);
      EXPECT_NEAR(sum, score, 1e-4 * std::max(1.0, std::abs(score))) << l << " " << key;
    }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutMlp, LmCircuit, ::testing::Values(true, false));

struct LlamaCase {
  const char* name;
  const char* arch;
  bool bias;
  int window;
  const char* dtype;
  bool mlp;
};

class LlamaCircuit : public ::testing::TestWithParam<LlamaCase> {};

// Every part computed, every key of the last query: parts name the token embedding, each earlier
// head and MLP (zero in an attention-only model, whose MLP weights are zero) and (Qwen2) the
// biases, never a position; their sums, softmaxed over the keys the query sees, are the
// reference's weights.
TEST_P(LlamaCircuit, ThePartsOfEveryKeyGiveTheReferenceWeights) {
  const LlamaCase k = GetParam();
  test::LlamaSpec spec;
  spec.arch = k.arch;
  spec.tokenizer = "llama2";
  spec.n_layer = 3;
  spec.head_dim = 8;
  spec.qkv_bias = k.bias;
  spec.sliding_window = k.window;
  spec.dtype = k.dtype;
  spec.tie = true;
  spec.rope_theta = 100;  // angles that differ visibly between neighbours
  spec.seed = 31;
  test::LlamaModel lm = test::make_llama_model(spec);
  if (!k.mlp)  // zero MLP weights, so the reference's MLP adds nothing either
    for (auto& [name, tensor] : lm.tensors)
      if (name.find(".mlp.") != std::string::npos)
        std::fill(tensor.second.begin(), tensor.second.end(), 0.0f);
  const std::string dir = test::temp_path(std::string("circuit-") + k.name);
  test::write_llama_model(lm, dir);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(dir, m, error)) << error;
  const std::vector<int> ids = lm.tok.ids_of("the  quick\n\nbrown   fox");
  const int T = static_cast<int>(ids.size()), NH = spec.n_head, t = T - 1;
  ASSERT_GE(T, 6);
  const test::LlamaReference ref = test::llama_reference_forward(lm, ids);
  Activations a;
  llama_forward(m, ids, 1, T, a);
  for (int l = 0; l < 3; ++l)
    for (int h : {0, NH - 1}) {
      SCOPED_TRACE("layer " + std::to_string(l) + " head " + std::to_string(h));
      std::vector<double> score(static_cast<size_t>(T), -INFINITY);
      for (int j = 0; j <= t; ++j) {
        if (k.window > 0 && t - j >= k.window) continue;
        const std::vector<ScorePart> parts = key_score_parts(m, a, l, h, t, j);
        ASSERT_EQ(parts.size(), 1u + (NH + 1u) * l + (k.bias ? 1u : 0u));
        EXPECT_EQ(parts[0].name, "token embedding");
        double sum = 0;
        for (const ScorePart& p : parts) {
          EXPECT_EQ(p.name.find("position"), std::string::npos);
          if (!k.mlp && p.name.find("MLP") != std::string::npos) {
            EXPECT_EQ(p.value, 0.0) << p.name;
          }
          sum += p.value;
        }
        EXPECT_NEAR(sum, head_score(m.config, a, l, h, t, j), 1e-4);
        score[static_cast<size_t>(j)] = sum;
      }
      const double mx = *std::max_element(score.begin(), score.end());
      double z = 0;
      for (double s : score) z += std::exp(s - mx);
      for (int j = 0; j < T; ++j) {
        const double w = std::exp(score[static_cast<size_t>(j)] - mx) / z;
        EXPECT_NEAR(w, ref.att[((static_cast<size_t>(l) * NH + h) * T + t) * T + j], 2e-5)
            << "key " << j;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, LlamaCircuit,
    ::testing::Values(LlamaCase{"llama", "llama", false, 0, "F32", true},
                      LlamaCase{"mistral_window_bf16", "mistral", false, 4, "BF16", true},
                      LlamaCase{"qwen2_bias", "qwen2", true, 0, "F32", true},
                      LlamaCase{"llama_attention_only", "llama", false, 0, "F32", false}),
    [](const ::testing::TestParamInfo<LlamaCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attn::lm
