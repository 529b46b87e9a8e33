// Generation with the KV cache (lm/generate.h) against the whole-text forward pass, for GPT-2
// and each of the Llama family (grouped-query, multi-query, Mistral's window, Qwen2's biases,
// head_dim ≠ hidden / heads): the same logits whether the text is fed at once or a token at a
// time, a window model's cache holding only W rows, the cache sized by the K/V heads; RoPE's
// frequencies against the formulas written out here; and config.json's refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include "io/llama_config.h"
#include "lm/forward.h"
#include "lm/generate.h"
#include "lm/llama_forward.h"
#include "lm/model.h"
#include "reference.h"

namespace attn::lm {
namespace {

struct Shape {
  const char* name;
  LmArch arch;
  int heads, kv_heads, embd, head_dim, window;
  RopeScaling::Type scaling;
  std::string dtype;
};

Config config_of(const Shape& s) {
  Config c;
  c.arch = s.arch;
  c.n_layer = 2;
  c.n_head = s.heads;
  c.n_kv_head = s.kv_heads;
  c.n_embd = s.embd;
  c.head_dim = s.head_dim;
  c.n_inner = 40;
  c.n_positions = 64;
  c.vocab_size = 300;  // more rows than the 257 tokens, as Qwen pads
  c.layer_norm_epsilon = 1e-5;
  c.rope_theta = 500;
  c.rope_scaling.type = s.scaling;
  c.rope_scaling.factor = 4;
  c.rope_scaling.low_freq_factor = 1;
  c.rope_scaling.high_freq_factor = 4;
  c.rope_scaling.original_max_position_embeddings = 16;
  c.sliding_window = s.window;
  c.qkv_bias = s.arch == LmArch::kQwen2;
  c.tied = s.arch != LmArch::kMistral;
  return c;
}

// A random model of the shape, written to a folder and read back (the loader's path too).
Model make_model(const Shape& s) {
  Model m;
  m.tokenizer = learn_bpe("", 0);
  const Config c = config_of(s);
  if (s.arch == LmArch::kGpt2) {
    Config g;
    g.n_layer = 2;
    g.n_head = s.heads;
    g.n_embd = s.embd;
    g.n_positions = 64;
    g.vocab_size = m.tokenizer.size();
    init_random(m, g, 7, 0.3f);
  } else {
    init_random_llama(m, c, 7, 0.3f);
  }
  const std::string dir = test::temp_path(std::string("gen-") + s.name);
  std::string error;
  EXPECT_TRUE(save_model(m, dir, error, s.dtype)) << error;
  Model back;
  EXPECT_TRUE(load_model(dir, back, error)) << error;
  return back;
}

class Generate : public ::testing::TestWithParam<Shape> {};

TEST_P(Generate, CachedStepsGiveTheWholeTextLogits) {
  const Shape s = GetParam();
  const Model m = make_model(s);
  std::mt19937 rng(3);
  std::vector<int> ids;
  for (int i = 0; i < 14; ++i) ids.push_back(static_cast<int>(rng() % 257));
  Activations a;
  ASSERT_EQ(checked_forward(m, ids, 1, static_cast<int>(ids.size()), a), "");
  const int V = m.config.vocab_size, T = static_cast<int>(ids.size());
  // Fed 5 at once, then one at a time: after each token, its logits are the whole pass's row.
  Generator g(m);
  ASSERT_EQ(g.feed({ids.begin(), ids.begin() + 5}), "");
  for (int t = 4; t < T; ++t) {
    if (t > 4) {
      ASSERT_EQ(g.feed({ids[static_cast<size_t>(t)]}), "");
    }
    double worst = 0;
    for (int v = 0; v < V; ++v)
      worst = std::max(worst, std::abs(static_cast<double>(g.logits()[static_cast<size_t>(v)]) -
                                       a.logits[static_cast<size_t>(t) * V + v]));
    EXPECT_LT(worst, 1e-4) << "position " << t;
    // The last token's attention row in the cache is the whole pass's row.
    const Config& c = m.config;
    for (int l = 0; l < c.n_layer; ++l) {
      const std::vector<float>& row = g.last_attention(l);
      const int first = g.last_attention_first(l);
      const int m_keys = static_cast<int>(row.size()) / c.n_head;
      for (int h = 0; h < c.n_head; ++h)
        for (int j = 0; j < T; ++j) {
          const float whole = a.att_at(c, l, 0, h)[static_cast<size_t>(t) * T + j];
          const int col = j - first;
          const float cached =
              col >= 0 && col < m_keys ? row[static_cast<size_t>(h * m_keys + col)] : 0.0f;
          ASSERT_NEAR(cached, whole, 1e-5) << "layer " << l << " head " << h << " key " << j;
        }
    }
  }
  // The cache: one row per token of K/V heads × head size, only the last W with a window.
  const Config& c = m.config;
  for (int l = 0; l < c.n_layer; ++l) {
    const int rows = c.window(l) > 0 ? std::min(T, c.window(l)) : T;
    EXPECT_EQ(g.cache_rows(l), rows);
    EXPECT_EQ(g.cache_first_position(l), T - rows);
  }
  const int rows = c.sliding_window > 0 ? std::min(T, c.sliding_window) : T;
  EXPECT_DOUBLE_EQ(g.cache_bytes(), 2.0 * c.n_layer * rows * c.kv_heads() * c.head_size() * 4);
}

TEST_P(Generate, GreedyContinuationIsTheWholeTextArgmax) {
  const Model m = make_model(GetParam());
  std::vector<int> ids = {40, 41, 42, 43, 44, 45};
  Generator g(m);
  ASSERT_EQ(g.feed(ids), "");
  std::mt19937_64 rng(0);
  for (int step = 0; step < 8; ++step) {
    const int next = choose_next_token(g.logits(), 0, 0, rng);
    ids.push_back(next);
    Activations a;
    ASSERT_EQ(checked_forward(m, ids, 1, static_cast<int>(ids.size()), a), "");
    // The whole pass's argmax at the previous position is the token the cache chose.
    const int V = m.config.vocab_size;
    const float* row = a.logits.data() + (ids.size() - 2) * static_cast<size_t>(V);
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (row[v] > row[best]) best = v;
    ASSERT_EQ(next, best) << "step " << step;
    ASSERT_EQ(g.feed({next}), "");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Generate,
    ::testing::Values(
        Shape{"gpt2", LmArch::kGpt2, 2, 0, 16, 0, 0, RopeScaling::kNone, "F32"},
        Shape{"llama-gqa", LmArch::kLlama, 4, 2, 16, 0, 0, RopeScaling::kNone, "BF16"},
        Shape{"llama-mqa-headdim", LmArch::kLlama, 3, 1, 12, 6, 0, RopeScaling::kLlama3, "F32"},
        Shape{"mistral-window", LmArch::kMistral, 4, 2, 16, 0, 3, RopeScaling::kLinear, "F16"},
        Shape{"qwen2-bias", LmArch::kQwen2, 4, 4, 16, 8, 0, RopeScaling::kNone, "F32"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

// RoPE's inverse frequencies, written out from the transformers library's definitions.
TEST(Rope, FrequenciesFollowTheScalingFormulas) {
  Config c;
  c.arch = LmArch::kLlama;
  c.n_head = 2;
  c.n_embd = 32;  // head size 16: 8 frequencies
  c.rope_theta = 10000;
  const int hs = 16;
  auto base = [&](int i) { return std::pow(10000.0, -2.0 * i / hs); };
  std::vector<double> f = rope_inv_freq(c);
  ASSERT_EQ(f.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(f[static_cast<size_t>(i)], base(i));
  c.rope_scaling.type = RopeScaling::kLinear;
  c.rope_scaling.factor = 2;
  f = rope_inv_freq(c);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(f[static_cast<size_t>(i)], base(i) / 2, 1e-15);
  // llama3 with original context 64, factors 8 / 1 / 4: wavelengths below 16 kept, above 64
  // divided by 8, between them interpolated.
  c.rope_scaling.type = RopeScaling::kLlama3;
  c.rope_scaling.factor = 8;
  c.rope_scaling.low_freq_factor = 1;
  c.rope_scaling.high_freq_factor = 4;
  c.rope_scaling.original_max_position_embeddings = 64;
  f = rope_inv_freq(c);
  int kept = 0, divided = 0, smooth = 0;
  for (int i = 0; i < 8; ++i) {
    const double w = base(i), wavelen = 2 * M_PI / w;
    double want;
    if (wavelen < 16) {
      want = w;
      ++kept;
    } else if (wavelen > 64) {
      want = w / 8;
      ++divided;
    } else {
      const double s = (64 / wavelen - 1) / (4 - 1);
      want = (1 - s) * w / 8 + s * w;
      ++smooth;
    }
    EXPECT_NEAR(f[static_cast<size_t>(i)], want, 1e-15) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(smooth, 0);
}

// rotate-half: x' = x·cos + (−x[d/2:], x[:d/2])·sin, and the rotated q·k depends only on the
// distance between the positions.
TEST(Rope, RotationIsRotateHalfAndScoresDependOnDistance) {
  Config c;
  c.arch = LmArch::kLlama;
  c.n_head = 1;
  c.n_embd = 8;
  const std::vector<double> f = rope_inv_freq(c);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float y[8];
  std::copy(x, x + 8, y);
  rope_rotate(y, 1, 8, f, 3);
  for (int i = 0; i < 4; ++i) {
    const double a = 3 * std::pow(10000.0, -2.0 * i / 8);
    EXPECT_NEAR(y[i], x[i] * std::cos(a) - x[i + 4] * std::sin(a), 1e-5);
    EXPECT_NEAR(y[i + 4], x[i + 4] * std::cos(a) + x[i] * std::sin(a), 1e-5);
  }
  const float q[8] = {0.3f, -1, 0.5f, 2, 1, 0.2f, -0.7f, 0.4f};
  const float k[8] = {-0.2f, 0.9f, 1.5f, -0.3f, 0.6f, 0.1f, 0.8f, -1.1f};
  auto score = [&](int pq, int pk) {
    float a[8], b[8];
    std::copy(q, q + 8, a);
    std::copy(k, k + 8, b);
    rope_rotate(a, 1, 8, f, pq);
    rope_rotate(b, 1, 8, f, pk);
    double s = 0;
    for (int i = 0; i < 8; ++i) s += static_cast<double>(a[i]) * b[i];
    return s;
  };
  EXPECT_NEAR(score(5, 2), score(13, 10), 1e-5);
  EXPECT_NEAR(score(7, 7), score(0, 0), 1e-5);
  EXPECT_GT(std::abs(score(5, 2) - score(5, 4)), 1e-3);
}

// A GPT-2 folder that ships only tokenizer.json (GPT-2's own, as Hugging Face writes it) reads
// the same tokens as vocab.json and merges.txt give.
TEST(Gpt2Folder, OnlyATokenizerJsonWorksToo) {
  Model m;
  m.tokenizer = learn_bpe(
      "the teacher explains attention; the teacher shows the heads. Café 2024!\n  spaced  out", 60);
  Config g;
  g.n_layer = 1;
  g.n_head = 2;
  g.n_embd = 8;
  g.n_positions = 64;
  g.vocab_size = m.tokenizer.size();
  init_random(m, g, 3, 0.2f);
  const std::string dir = test::temp_path("gpt2-tokenizer-json");
  std::string error;
  ASSERT_TRUE(save_model(m, dir, error)) << error;
  const std::string json = m.tokenizer.tokenizer_json();
  std::remove((dir + "/vocab.json").c_str());
  std::remove((dir + "/merges.txt").c_str());
  {
    std::ofstream f(dir + "/tokenizer.json", std::ios::binary);
    f << json;
  }
  Model back;
  ASSERT_TRUE(load_model(dir, back, error)) << error;
  ASSERT_NE(back.tokenizer.hf(), nullptr);
  for (const char* text : {"the teacher explains attention", "Café 2024!\n  spaced  out",
                           "unseen words, and 123 numbers"}) {
    EXPECT_EQ(back.tokenizer.encode(text), m.tokenizer.encode(text)) << text;
    EXPECT_EQ(back.tokenizer.decode(m.tokenizer.encode(text)), text);
  }
  // As the tokenizers library does (and GPT-2's encoder.py does not): the special token typed in
  // the text is that token.
  const int eot = m.tokenizer.find("<|endoftext|>");
  ASSERT_GE(eot, 0);
  const std::vector<int> ids = back.tokenizer.encode("a <|endoftext|> b");
  EXPECT_EQ(std::count(ids.begin(), ids.end(), eot), 1);
}

TEST(LlamaConfig, RefusesWhatItCannotComputeByName) {
  const std::string base =
      R"("hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64)";
  struct Case {
    std::string extra, want;
  };
  const Case cases[] = {
      {R"("model_type": "llama", "num_key_value_heads": 3)", "num_key_value_heads"},
      {R"("model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4})",
       "rope_scaling.rope_type: 'yarn'"},
      {R"("model_type": "llama", "hidden_act": "gelu")", "hidden_act: 'gelu'"},
      {R"("model_type": "falcon")", "model_type: 'falcon'"},
      {R"("architectures": ["FalconForCausalLM"])", "architectures"},
      {R"("model_type": "llama", "head_dim": 5)", "head_dim"},
      {R"("model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8})",
       "rope_scaling.low_freq_factor: missing"},
      {R"("model_type": "llama", "attention_bias": true)", "attention_bias"},
  };
  for (const Case& k : cases) {
    std::string error;
    const auto c = parse_lm_config("{" + k.extra + ", " + base + "}", "config.json", error);
    EXPECT_FALSE(c) << k.extra;
    EXPECT_NE(error.find("config.json: "), std::string::npos) << error;
    EXPECT_NE(error.find(k.want), std::string::npos) << error;
  }
  std::string error;
  const auto c = parse_lm_config(R"({"model_type": "qwen2", "sliding_window": 4,
      "use_sliding_window": false, "num_key_value_heads": 2, )" +
                                     base + "}",
                                 "config.json", error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->arch, LmArch::kQwen2);
  EXPECT_EQ(c->window(0), 0);  // Qwen2 ignores the window unless use_sliding_window
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_EQ(c->group(), 2);
  const auto back = parse_lm_config(llama_config_json(*c), "back", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->kv_heads(), 2);
  EXPECT_EQ(back->mlp_size(), 32);
}

}  // namespace
}  // namespace attn::lm
