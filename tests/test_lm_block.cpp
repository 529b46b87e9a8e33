// The Block view's numbers (lm/block_path.h) against a block recomputed here in double precision
// from the weights with plain loops: GPT-2's (LayerNorm, learned positions, GELU MLP) and the
// Llama family's (RMSNorm, RoPE, grouped-query attention with a window, Qwen2's biases, SwiGLU,
// an untied head) — the norms, q, k, v, the head's weights and output, the residual sums, the
// MLP, the final norm and the next-token probabilities; and the GPT-2 / Llama comparison in the
// model's own sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "lm/block_path.h"
#include "lm/forward.h"
#include "lm/model.h"

namespace attn::lm {
namespace {

using Vec = std::vector<double>;

// One block for one position, in double, written from the architectures' definitions.
struct RefBlock {
  Vec x, ln1, q, q_unrotated, k, v, weights /* keys first..t */, head_out, attproj, res1, ln2,
      mlp_act, mlp_out, res2, lnf, probs;
  double ln1_mean = 0, ln1_std = 0, ln1_rms = 0;
  int first_key = 0;
};

Vec layernorm(const Vec& x, const float* g, const float* b, double eps, double* mean_out = nullptr,
              double* std_out = nullptr) {
  const size_t C = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(C);
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(C);
  const double sd = std::sqrt(var + eps);
  Vec y(C);
  for (size_t i = 0; i < C; ++i) y[i] = (x[i] - mean) / sd * g[i] + b[i];
  if (mean_out) *mean_out = mean;
  if (std_out) *std_out = sd;
  return y;
}

Vec rmsnorm(const Vec& x, const float* g, double eps, double* rms_out = nullptr) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double rms = std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] / rms * g[i];
  if (rms_out) *rms_out = rms;
  return y;
}

// y[o] = Σ_i x[i]·W[i][o] + b[o] with W stored (in, out), GPT-2's Conv1D.
Vec conv1d(const Vec& x, const float* w, const float* b, int out) {
  Vec y(static_cast<size_t>(out));
  for (int o = 0; o < out; ++o) {
    double s = b ? b[o] : 0.0;
    for (size_t i = 0; i < x.size(); ++i) s += x[i] * w[i * static_cast<size_t>(out) + o];
    y[static_cast<size_t>(o)] = s;
  }
  return y;
}

// y[o] = Σ_i W[o][i]·x[i] + b[o] with W stored (out, in), PyTorch's Linear.
Vec linear(const Vec& x, const Weight& w, const AlignedVector<float>& b) {
  Vec y(static_cast<size_t>(w.rows));
  std::vector<float> r(static_cast<size_t>(w.cols));
  for (int64_t o = 0; o < w.rows; ++o) {
    w.row(o, r.data());
    double s = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
    for (int64_t i = 0; i < w.cols; ++i) s += static_cast<double>(r[static_cast<size_t>(i)]) * x[i];
    y[static_cast<size_t>(o)] = s;
  }
  return y;
}

Vec slice(const Vec& v, int from, int n) { return Vec(v.begin() + from, v.begin() + from + n); }

// Rotate-half RoPE at position `pos` on one head of hs values (no frequency scaling).
Vec rope(const Vec& x, int pos, double theta) {
  const int hs = static_cast<int>(x.size()), half = hs / 2;
  Vec y = x;
  for (int i = 0; i < half; ++i) {
    const double angle = pos * std::pow(theta, -2.0 * i / hs);
    y[i] = x[i] * std::cos(angle) - x[i + half] * std::sin(angle);
    y[i + half] = x[i + half] * std::cos(angle) + x[i] * std::sin(angle);
  }
  return y;
}

Vec softmax(const Vec& s) {
  double mx = -INFINITY, sum = 0;
  for (double v : s) mx = std::max(mx, v);
  Vec e(s.size());
  for (size_t i = 0; i < s.size(); ++i) sum += e[i] = std::exp(s[i] - mx);
  for (double& v : e) v /= sum;
  return e;
}

// Block `l` of a GPT-2 model for position t, the block's inputs X (T rows) given.
RefBlock gpt2_block(const Model& m, const std::vector<Vec>& X, int l, int h, int t, bool last) {
  const Config& c = m.config;
  const Parameters& p = m.params;
  const int C = c.n_embd, NH = c.n_head, hs = C / NH, F = c.mlp_size();
  const double eps = c.layer_norm_epsilon;
  RefBlock r;
  r.x = X[static_cast<size_t>(t)];
  std::vector<Vec> qkv;  // every position's q | k | v
  for (int j = 0; j <= t; ++j) {
    const Vec n = layernorm(X[static_cast<size_t>(j)], p.ptr(kLn1W, l), p.ptr(kLn1B, l), eps,
                            j == t ? &r.ln1_mean : nullptr, j == t ? &r.ln1_std : nullptr);
    if (j == t) r.ln1 = n;
    qkv.push_back(conv1d(n, p.ptr(kQkvW, l), p.ptr(kQkvB, l), 3 * C));
  }
  Vec heads(static_cast<size_t>(C), 0.0);  // every head's output at t, side by side
  for (int hh = 0; hh < NH; ++hh) {
    const Vec q = slice(qkv[static_cast<size_t>(t)], hh * hs, hs);
    Vec s;
    for (int j = 0; j <= t; ++j) {
      const Vec k = slice(qkv[static_cast<size_t>(j)], C + hh * hs, hs);
      double d = 0;
      for (int i = 0; i < hs; ++i) d += q[i] * k[i];
      s.push_back(d / std::sqrt(hs));
    }
    const Vec w = softmax(s);
    for (int j = 0; j <= t; ++j)
      for (int i = 0; i < hs; ++i)
        heads[static_cast<size_t>(hh * hs + i)] +=
            w[j] * qkv[static_cast<size_t>(j)][2 * C + hh * hs + i];
    if (hh == h) {
      r.q = q;
      r.k = slice(qkv[static_cast<size_t>(t)], C + h * hs, hs);
      r.v = slice(qkv[static_cast<size_t>(t)], 2 * C + h * hs, hs);
      r.weights = w;
    }
  }
  r.head_out = slice(heads, h * hs, hs);
  r.attproj = conv1d(heads, p.ptr(kAttProjW, l), p.ptr(kAttProjB, l), C);
  r.res1.resize(static_cast<size_t>(C));
  for (int i = 0; i < C; ++i) r.res1[i] = r.x[i] + r.attproj[i];
  r.ln2 = layernorm(r.res1, p.ptr(kLn2W, l), p.ptr(kLn2B, l), eps);
  const Vec fc = conv1d(r.ln2, p.ptr(kFcW, l), p.ptr(kFcB, l), F);
  r.mlp_act.resize(static_cast<size_t>(F));
  for (int i = 0; i < F; ++i) {
    const double z = fc[i];
    r.mlp_act[i] = 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
  }
  r.mlp_out = conv1d(r.mlp_act, p.ptr(kFcProjW, l), p.ptr(kFcProjB, l), C);
  r.res2.resize(static_cast<size_t>(C));
  for (int i = 0; i < C; ++i) r.res2[i] = r.res1[i] + r.mlp_out[i];
  if (last) {
    r.lnf = layernorm(r.res2, p.ptr(kLnfW), p.ptr(kLnfB), eps);
    Vec logits(static_cast<size_t>(c.vocab_size));
    for (int v = 0; v < c.vocab_size; ++v) {
      double s = 0;
      for (int i = 0; i < C; ++i) s += r.lnf[i] * p.ptr(kWte)[static_cast<size_t>(v) * C + i];
      logits[v] = s;
    }
    r.probs = softmax(logits);
  }
  return r;
}

// Block `l` of a Llama-family model for position t, the block's inputs X (T rows) given.
RefBlock llama_block(const Model& m, const std::vector<Vec>& X, int l, int h, int t, bool last) {
  const Config& c = m.config;
  const LlamaLayer& w = m.llama.layers[static_cast<size_t>(l)];
  const int C = c.n_embd, NH = c.n_head, NKV = c.kv_heads(), hs = c.head_size();
  const int group = NH / NKV, W = c.window(l);
  const double eps = c.layer_norm_epsilon;
  RefBlock r;
  r.x = X[static_cast<size_t>(t)];
  r.first_key = W > 0 ? std::max(0, t - W + 1) : 0;
  std::vector<Vec> q, k, v;
  for (int j = 0; j <= t; ++j) {
    const Vec n =
        rmsnorm(X[static_cast<size_t>(j)], w.attn_norm.data(), eps, j == t ? &r.ln1_rms : nullptr);
    if (j == t) r.ln1 = n;
    q.push_back(linear(n, w.q, w.q_bias));
    k.push_back(linear(n, w.k, w.k_bias));
    v.push_back(linear(n, w.v, w.v_bias));
  }
  Vec heads(static_cast<size_t>(NH * hs), 0.0);
  for (int hh = 0; hh < NH; ++hh) {
    const int g = hh / group;
    const Vec qh = rope(slice(q[static_cast<size_t>(t)], hh * hs, hs), t, c.rope_theta);
    Vec s;
    for (int j = r.first_key; j <= t; ++j) {
      const Vec kh = rope(slice(k[static_cast<size_t>(j)], g * hs, hs), j, c.rope_theta);
      double d = 0;
      for (int i = 0; i < hs; ++i) d += qh[i] * kh[i];
      s.push_back(d / std::sqrt(hs));
    }
    const Vec wts = softmax(s);
    for (int j = r.first_key; j <= t; ++j)
      for (int i = 0; i < hs; ++i)
        heads[static_cast<size_t>(hh * hs + i)] +=
            wts[static_cast<size_t>(j - r.first_key)] * v[static_cast<size_t>(j)][g * hs + i];
    if (hh == h) {
      r.q_unrotated = slice(q[static_cast<size_t>(t)], h * hs, hs);
      r.q = qh;
      r.k = rope(slice(k[static_cast<size_t>(t)], g * hs, hs), t, c.rope_theta);
      r.v = slice(v[static_cast<size_t>(t)], g * hs, hs);
      r.weights = wts;
    }
  }
  r.head_out = slice(heads, h * hs, hs);
  r.attproj = linear(heads, w.o, {});
  r.res1.resize(static_cast<size_t>(C));
  for (int i = 0; i < C; ++i) r.res1[i] = r.x[i] + r.attproj[i];
  r.ln2 = rmsnorm(r.res1, w.mlp_norm.data(), eps);
  const Vec gate = linear(r.ln2, w.gate, {}), up = linear(r.ln2, w.up, {});
  r.mlp_act.resize(gate.size());
  for (size_t i = 0; i < gate.size(); ++i)
    r.mlp_act[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
  r.mlp_out = linear(r.mlp_act, w.down, {});
  r.res2.resize(static_cast<size_t>(C));
  for (int i = 0; i < C; ++i) r.res2[i] = r.res1[i] + r.mlp_out[i];
  if (last) {
    r.lnf = rmsnorm(r.res2, m.llama.norm.data(), eps);
    r.probs = softmax(linear(r.lnf, m.llama.output(), {}));
  }
  return r;
}

double norm_of(const Vec& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// A stage's vector against the reference: its size, first values and length.
void expect_vector(const BlockStage* s, const std::string& label, const Vec& ref) {
  ASSERT_NE(s, nullptr) << label;
  const BlockVector* v = nullptr;
  for (const BlockVector& x : s->vectors)
    if (x.label == label) v = &x;
  ASSERT_NE(v, nullptr) << s->title << ": no vector " << label;
  EXPECT_EQ(v->size, static_cast<int>(ref.size())) << label;
  ASSERT_FALSE(v->first.empty()) << label;
  ASSERT_LE(v->first.size(), ref.size());
  const double scale = 1e-4 * std::max(1.0, norm_of(ref));
  for (size_t i = 0; i < v->first.size(); ++i)
    EXPECT_NEAR(v->first[i], ref[i], scale) << s->title << " " << label << "[" << i << "]";
  EXPECT_NEAR(v->norm, norm_of(ref), scale) << s->title << " " << label;
}

double stat_of(const BlockStage* s, const std::string& name) {
  for (const auto& [n, v] : s->stats)
    if (n == name) return v;
  ADD_FAILURE() << s->title << ": no stat " << name;
  return NAN;
}

// The attention stage's strongest keys against the reference weights (over first..t).
void expect_top_keys(const BlockStage* s, const Vec& w, int first, int k) {
  ASSERT_NE(s, nullptr);
  std::vector<std::pair<double, int>> ref;
  for (size_t j = 0; j < w.size(); ++j) ref.push_back({w[j], first + static_cast<int>(j)});
  std::sort(ref.begin(), ref.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  ASSERT_EQ(s->top.size(), std::min(ref.size(), static_cast<size_t>(k)));
  for (size_t i = 0; i < s->top.size(); ++i) {
    EXPECT_NEAR(s->top[i].second, ref[i].first, 1e-5) << i;
    // Equal weights may come in either order; a key's own weight must match.
    EXPECT_NEAR(w[static_cast<size_t>(s->top[i].first - first)], s->top[i].second, 1e-5) << i;
  }
}

void expect_next_tokens(const BlockStage* s, const Vec& probs, int k) {
  ASSERT_NE(s, nullptr);
  std::vector<std::pair<double, int>> ref;
  for (size_t v = 0; v < probs.size(); ++v) ref.push_back({probs[v], static_cast<int>(v)});
  std::sort(ref.begin(), ref.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  ASSERT_EQ(static_cast<int>(s->top.size()), k);
  for (int i = 0; i < k; ++i) {
    EXPECT_NEAR(s->top[static_cast<size_t>(i)].second, ref[static_cast<size_t>(i)].first, 1e-5);
    EXPECT_NEAR(probs[static_cast<size_t>(s->top[static_cast<size_t>(i)].first)],
                s->top[static_cast<size_t>(i)].second, 1e-5);
  }
}

std::vector<int> some_tokens(int n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(static_cast<int>(rng() % static_cast<unsigned>(vocab)));
  return ids;
}

// Random values in place of init's ones and zeros, so γ, β and the biases count.
void scramble(float* x, size_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  for (size_t i = 0; i < n; ++i) x[i] = u(rng);
}

Model gpt2_model() {
  Model m;
  m.tokenizer = learn_bpe("", 0);
  Config c;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 16;
  c.n_positions = 32;
  c.vocab_size = m.tokenizer.size();
  init_random(m, c, 11, 0.3f);
  std::mt19937 rng(5);
  for (Param p : {kLn1W, kLn2W, kLnfW})
    scramble(m.params.ptr(p), m.params.count[p], rng, 0.5f, 1.5f);
  for (Param p : {kLn1B, kLn2B, kLnfB, kQkvB, kAttProjB, kFcB, kFcProjB})
    scramble(m.params.ptr(p), m.params.count[p], rng, -0.2f, 0.2f);
  return m;
}

// Qwen2's biases, 6 query heads over 2 K/V heads, head_dim ≠ C / NH, a window of 4, untied.
Model llama_model() {
  Model m;
  m.tokenizer = learn_bpe("", 0);
  Config c;
  c.arch = LmArch::kQwen2;
  c.n_layer = 2;
  c.n_head = 6;
  c.n_kv_head = 2;
  c.n_embd = 24;
  c.head_dim = 6;
  c.n_inner = 40;
  c.n_positions = 32;
  c.vocab_size = m.tokenizer.size() + 3;
  c.rope_theta = 300;
  c.sliding_window = 4;
  c.qkv_bias = true;
  c.tied = false;
  init_random_llama(m, c, 13, 0.3f);
  std::mt19937 rng(6);
  for (LlamaLayer& w : m.llama.layers) {
    scramble(w.attn_norm.data(), w.attn_norm.size(), rng, 0.5f, 1.5f);
    scramble(w.mlp_norm.data(), w.mlp_norm.size(), rng, 0.5f, 1.5f);
  }
  scramble(m.llama.norm.data(), m.llama.norm.size(), rng, 0.5f, 1.5f);
  return m;
}

TEST(LmBlock, Gpt2BlockZeroMatchesTheWeights) {
  const Model m = gpt2_model();
  const Config& c = m.config;
  const int T = 9, t = 6, h = 2, C = c.n_embd;
  const std::vector<int> ids = some_tokens(T, c.vocab_size, 1);
  Activations a;
  ASSERT_EQ(checked_forward(m, ids, 1, T, a), "");
  // Block 0 reads wte[token] + wpe[position], from the weights.
  std::vector<Vec> X;
  for (int j = 0; j < T; ++j) {
    Vec x(static_cast<size_t>(C));
    for (int i = 0; i < C; ++i)
      x[i] = static_cast<double>(m.params.ptr(kWte)[static_cast<size_t>(ids[j]) * C + i]) +
             m.params.ptr(kWpe)[static_cast<size_t>(j) * C + i];
    X.push_back(x);
  }
  const RefBlock r = gpt2_block(m, X, 0, h, t, false);
  BlockPathOptions o;
  o.values = 5;
  const BlockPath p = block_path(m, a, 0, h, t, o);
  EXPECT_EQ(p.token, ids[t]);
  EXPECT_EQ(p.kv_head, h);
  EXPECT_FALSE(p.last_block);
  EXPECT_EQ(p.find(BlockStageId::kInput), nullptr);  // block 0 reads the embedding
  EXPECT_EQ(p.find(BlockStageId::kNextToken), nullptr);
  const BlockStage* emb = p.find(BlockStageId::kEmbedding);
  ASSERT_NE(emb, nullptr);
  Vec wte(static_cast<size_t>(C)), wpe(static_cast<size_t>(C));
  for (int i = 0; i < C; ++i) {
    wte[i] = m.params.ptr(kWte)[static_cast<size_t>(ids[t]) * C + i];
    wpe[i] = m.params.ptr(kWpe)[static_cast<size_t>(t) * C + i];
  }
  expect_vector(emb, "wte[" + std::to_string(ids[t]) + "]", wte);
  expect_vector(emb, "wpe[6]", wpe);
  expect_vector(emb, "x", r.x);
  EXPECT_EQ(emb->vectors[0].first.size(), 5u);
  const BlockStage* n1 = p.find(BlockStageId::kNorm1);
  expect_vector(n1, "norm(x)", r.ln1);
  EXPECT_EQ(n1->title, "LayerNorm");
  EXPECT_NEAR(stat_of(n1, "μ"), r.ln1_mean, 1e-5);
  EXPECT_NEAR(stat_of(n1, "σ"), r.ln1_std, 1e-4);
  EXPECT_EQ(n1->shape, "(1, 16) → (1, 16)");
  const BlockStage* qkv = p.find(BlockStageId::kQkv);
  expect_vector(qkv, "q, head 2", r.q);
  expect_vector(qkv, "k, head 2", r.k);
  expect_vector(qkv, "v, head 2", r.v);
  EXPECT_EQ(qkv->shape, "(1, 16) → (1, 48) = q | k | v");
  const BlockStage* att = p.find(BlockStageId::kAttention);
  expect_top_keys(att, r.weights, 0, o.top_keys);
  expect_vector(att, "head 2 output", r.head_out);
  EXPECT_EQ(stat_of(att, "keys seen"), t + 1);
  expect_vector(p.find(BlockStageId::kOutProj), "attention", r.attproj);
  expect_vector(p.find(BlockStageId::kResidual1), "x", r.res1);
  expect_vector(p.find(BlockStageId::kNorm2), "norm(x)", r.ln2);
  const BlockStage* mlp = p.find(BlockStageId::kMlp);
  expect_vector(mlp, "GELU(h)", r.mlp_act);
  EXPECT_EQ(mlp->shape, "(1, 16) → (1, 64)");
  expect_vector(p.find(BlockStageId::kMlpDown), "mlp", r.mlp_out);
  expect_vector(p.find(BlockStageId::kResidual2), "block 0's output", r.res2);
  // The stages come in the order a token meets them.
  std::vector<BlockStageId> order;
  for (const BlockStage& s : p.stages) order.push_back(s.id);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

TEST(LmBlock, Gpt2LastBlockEndsInTheNextTokenProbabilities) {
  const Model m = gpt2_model();
  const Config& c = m.config;
  const int T = 7, t = 4, h = 1, C = c.n_embd;
  const std::vector<int> ids = some_tokens(T, c.vocab_size, 2);
  Activations a;
  ASSERT_EQ(checked_forward(m, ids, 1, T, a), "");
  // Block 1 reads block 0's output: the forward pass's rows (checked against the weights above).
  std::vector<Vec> X;
  for (int j = 0; j < T; ++j)
    X.emplace_back(a.residual3.begin() + static_cast<long>(j) * C,
                   a.residual3.begin() + static_cast<long>(j + 1) * C);
  const RefBlock r = gpt2_block(m, X, 1, h, t, true);
  const BlockPath p = block_path(m, a, 1, h, t);
  EXPECT_TRUE(p.last_block);
  expect_vector(p.find(BlockStageId::kInput), "x", r.x);
  expect_vector(p.find(BlockStageId::kNorm1), "norm(x)", r.ln1);
  expect_top_keys(p.find(BlockStageId::kAttention), r.weights, 0, 5);
  expect_vector(p.find(BlockStageId::kResidual1), "x", r.res1);
  expect_vector(p.find(BlockStageId::kResidual2), "x", r.res2);
  expect_vector(p.find(BlockStageId::kFinalNorm), "norm(x)", r.lnf);
  expect_next_tokens(p.find(BlockStageId::kNextToken), r.probs, 5);
  // At a temperature: softmax(logits / T) — the reference's log-probabilities halved.
  BlockPathOptions o;
  o.temperature = 0.5;
  o.top_tokens = 3;
  const BlockPath cold = block_path(m, a, 1, h, t, o);
  Vec sharp = r.probs;
  for (double& x : sharp) x = 2 * std::log(x);
  expect_next_tokens(cold.find(BlockStageId::kNextToken), softmax(sharp), 3);
}

TEST(LmBlock, LlamaBlocksMatchTheWeights) {
  const Model m = llama_model();
  const Config& c = m.config;
  const int T = 10, t = 7, C = c.n_embd;
  const std::vector<int> ids = some_tokens(T, c.vocab_size, 3);
  Activations a;
  ASSERT_EQ(checked_forward(m, ids, 1, T, a), "");
  std::vector<Vec> X;
  std::vector<float> row(static_cast<size_t>(C));
  for (int j = 0; j < T; ++j) {
    m.llama.embed.row(ids[j], row.data());
    X.emplace_back(row.begin(), row.end());
  }
  for (int h : {0, 4}) {
    const RefBlock r = llama_block(m, X, 0, h, t, false);
    const BlockPath p = block_path(m, a, 0, h, t);
    EXPECT_EQ(p.kv_head, h / 3);
    const BlockStage* emb = p.find(BlockStageId::kEmbedding);
    expect_vector(emb, "x", r.x);
    EXPECT_EQ(emb->vectors.size(), 1u);  // no position embedding
    const BlockStage* n1 = p.find(BlockStageId::kNorm1);
    EXPECT_EQ(n1->title, "RMSNorm");
    expect_vector(n1, "norm(x)", r.ln1);
    EXPECT_NEAR(stat_of(n1, "rms"), r.ln1_rms, 1e-4);
    const BlockStage* qkv = p.find(BlockStageId::kQkv);
    const std::string hq = std::to_string(h), hk = std::to_string(h / 3);
    expect_vector(qkv, "q, head " + hq + ", before RoPE", r.q_unrotated);
    expect_vector(qkv, "q, head " + hq, r.q);
    expect_vector(qkv, "k, head " + hk, r.k);
    expect_vector(qkv, "v, head " + hk, r.v);
    EXPECT_EQ(qkv->shape, "(1, 24) → q (1, 36), k (1, 12), v (1, 12)");
    EXPECT_EQ(stat_of(qkv, "query heads"), 6);
    EXPECT_EQ(stat_of(qkv, "K/V heads"), 2);
    EXPECT_EQ(stat_of(qkv, "head size"), 6);
    const BlockStage* att = p.find(BlockStageId::kAttention);
    EXPECT_EQ(r.first_key, 4);  // the window of 4 at position 7
    EXPECT_EQ(stat_of(att, "keys seen"), 4);
    expect_top_keys(att, r.weights, r.first_key, 4);
    for (const auto& [j, w] : att->top) EXPECT_GE(j, 4);
    EXPECT_NE(att->note.find("window of 4"), std::string::npos) << att->note;
    EXPECT_NE(att->note.find("shares K/V head " + hk), std::string::npos) << att->note;
    expect_vector(att, "head " + hq + " output", r.head_out);
    expect_vector(p.find(BlockStageId::kOutProj), "attention", r.attproj);
    expect_vector(p.find(BlockStageId::kResidual1), "x", r.res1);
    expect_vector(p.find(BlockStageId::kNorm2), "norm(x)", r.ln2);
    const BlockStage* mlp = p.find(BlockStageId::kMlp);
    EXPECT_EQ(mlp->title, "SwiGLU");
    expect_vector(mlp, "silu(gate) ⊙ up", r.mlp_act);
    expect_vector(p.find(BlockStageId::kMlpDown), "mlp", r.mlp_out);
    expect_vector(p.find(BlockStageId::kResidual2), "block 0's output", r.res2);
  }
  // The last block, from block 0's output, through the untied head.
  std::vector<Vec> X1;
  for (int j = 0; j < T; ++j)
    X1.emplace_back(a.residual3.begin() + static_cast<long>(j) * C,
                    a.residual3.begin() + static_cast<long>(j + 1) * C);
  const RefBlock r = llama_block(m, X1, 1, 5, t, true);
  const BlockPath p = block_path(m, a, 1, 5, t);
  expect_vector(p.find(BlockStageId::kQkv), "q, head 5", r.q);
  expect_vector(p.find(BlockStageId::kResidual2), "x", r.res2);
  expect_vector(p.find(BlockStageId::kFinalNorm), "norm(x)", r.lnf);
  const BlockStage* next = p.find(BlockStageId::kNextToken);
  expect_next_tokens(next, r.probs, 5);
  EXPECT_EQ(next->weights, "lm_head");
}

TEST(LmBlock, AnAttentionOnlyModelSaysItsMlpIsSkipped) {
  Model m = gpt2_model();
  for (Param p : {kFcW, kFcB, kFcProjW, kFcProjB})
    std::fill(m.params.ptr(p), m.params.ptr(p) + m.params.count[p], 0.0f);
  m.mlp = false;
  Activations a;
  const std::vector<int> ids = some_tokens(5, m.config.vocab_size, 4);
  ASSERT_EQ(checked_forward(m, ids, 1, 5, a), "");
  const BlockPath p = block_path(m, a, 1, 0, 3);
  const BlockStage* mlp = p.find(BlockStageId::kMlp);
  ASSERT_NE(mlp, nullptr);
  EXPECT_NE(mlp->note.find("adds nothing"), std::string::npos);
  EXPECT_EQ(p.find(BlockStageId::kNorm2), nullptr);
  EXPECT_EQ(p.find(BlockStageId::kMlpDown), nullptr);
  // The block's output is the residual after attention.
  const BlockVector& r1 = p.find(BlockStageId::kResidual1)->vectors.back();
  const BlockVector& r2 = p.find(BlockStageId::kResidual2)->vectors.back();
  EXPECT_EQ(r1.first, r2.first);
  EXPECT_DOUBLE_EQ(r1.norm, r2.norm);
}

TEST(LmBlock, TheComparisonUsesTheModelsSizes) {
  const Model llama = llama_model();
  const auto d = block_differences(llama.config);
  ASSERT_GE(d.size(), 5u);
  auto row = [&](const std::vector<BlockDifference>& rows, const std::string& aspect) {
    for (const BlockDifference& x : rows)
      if (x.aspect == aspect) return x;
    ADD_FAILURE() << "no row " << aspect;
    return BlockDifference{};
  };
  EXPECT_NE(row(d, "Norm").gpt2.find("LayerNorm over the 24 channels"), std::string::npos);
  EXPECT_NE(row(d, "Norm").llama.find("RMSNorm"), std::string::npos);
  EXPECT_NE(row(d, "Attention heads").gpt2.find("Multi-head (MHA): 6 heads of 6"),
            std::string::npos);
  EXPECT_NE(row(d, "Attention heads").llama.find("6 query heads share 2 K/V heads, 3 per"),
            std::string::npos)
      << row(d, "Attention heads").llama;
  // 3 matrices of 24 × 40 against 2.
  EXPECT_NE(row(d, "MLP").llama.find("24 → 40 → 24, three matrices (2.9 k weights)"),
            std::string::npos)
      << row(d, "MLP").llama;
  EXPECT_NE(row(d, "MLP").gpt2.find("two matrices (c_fc, c_proj; 1.9 k weights)"),
            std::string::npos)
      << row(d, "MLP").gpt2;
  EXPECT_NE(row(d, "Output head").llama.find("Untied here"), std::string::npos);
  EXPECT_NE(row(d, "Positions").llama.find("θ = 300"), std::string::npos);
  EXPECT_NE(row(d, "Biases").llama.find("except here on q, k and v"), std::string::npos);
  const auto g = block_differences(gpt2_model().config);
  EXPECT_NE(row(g, "Positions").gpt2.find("32 × 16"), std::string::npos);
  EXPECT_NE(row(g, "Attention heads").llama.find("4 query heads could share 2 K/V heads, 2 each"),
            std::string::npos)
      << row(g, "Attention heads").llama;
  EXPECT_NE(row(g, "MLP").gpt2.find("16 → 64 → 16"), std::string::npos);
}

}  // namespace
}  // namespace attn::lm
