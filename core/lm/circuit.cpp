// The exact split of an attention score into the parts of the key's residual stream (circuit.h).
#include "lm/circuit.h"

#include <cassert>
#include <cmath>
#include <functional>
#include <memory>

#include "lm/llama_forward.h"

namespace attn::lm {

double head_score(const Config& c, const Activations& a, int layer, int head, int query, int key) {
  const int hs = c.head_size(), W = c.qkv_width();
  const float* qkv = a.qkv_at(c, layer, 0);
  const float* q = qkv + static_cast<size_t>(query) * W + static_cast<size_t>(head) * hs;
  const float* k =
      qkv + static_cast<size_t>(key) * W + c.q_dim() + static_cast<size_t>(head / c.group()) * hs;
  double s = 0;
  for (int i = 0; i < hs; ++i) s += static_cast<double>(q[i]) * k[i];
  return s / std::sqrt(static_cast<double>(hs));
}

namespace {

using Vec = std::vector<double>;

// How one part x of the key's residual stream reaches the scaled score, with the norm's scale of
// the whole stream held at its value: `part(x)` is its share, `constant` what does not depend on
// the stream (the biases).
struct KeyPath {
  std::function<double(const Vec&)> part;
  double constant = 0;
};

// GPT-2: k = ln_1(x)·W_K + b_K, ln_1(x) = (x − mean(x))·rstd ⊙ γ + β, from c_attn's K columns.
KeyPath gpt2_key_path(const Model& m, const Activations& a, int layer, int head, int query,
                      int key) {
  const Config& c = m.config;
  const Parameters& p = m.params;
  const int C = c.n_embd, hs = c.head_size();
  const size_t row = static_cast<size_t>(layer) * a.B * a.T + static_cast<size_t>(key);
  const double rstd = a.ln1_rstd[row];
  const float* gamma = p.ptr(kLn1W, layer);
  const float* wqkv = p.ptr(kQkvW, layer);  // (C, 3C); the head's K columns start at C + head·hs
  const float* q =
      a.qkv_at(c, layer, 0) + static_cast<size_t>(query) * 3 * C + static_cast<size_t>(head) * hs;
  const double inv = 1.0 / std::sqrt(static_cast<double>(hs));
  const size_t kcol = static_cast<size_t>(C) + static_cast<size_t>(head) * hs;
  // q_t · (v·W_K) / √hs for a C-vector v already through the layer norm.
  auto through_key = [=](const Vec& v) {
    double s = 0;
    for (int i = 0; i < hs; ++i) {
      double k = 0;
      for (int r = 0; r < C; ++r)
        k += v[static_cast<size_t>(r)] * wqkv[r * 3 * static_cast<size_t>(C) + kcol + i];
      s += q[i] * k;
    }
    return s * inv;
  };
  KeyPath k;
  k.part = [=](const Vec& x) {
    double mean = 0;
    for (double v : x) mean += v;
    mean /= C;
    Vec v(static_cast<size_t>(C));
    for (int r = 0; r < C; ++r)
      v[static_cast<size_t>(r)] = (x[static_cast<size_t>(r)] - mean) * rstd * gamma[r];
    return through_key(v);
  };
  // ln_1's β and c_attn's K bias.
  const float* beta = p.ptr(kLn1B, layer);
  k.constant = through_key(Vec(beta, beta + C));
  for (int i = 0; i < hs; ++i) k.constant += q[i] * p.ptr(kQkvB, layer)[kcol + i] * inv;
  return k;
}

// The Llama family: k = RoPE_j(RMSNorm(x)·W_Kᵀ + b_K), RMSNorm(x) = x·rstd ⊙ g, from the rows of
// k_proj for the head's K/V head; the rotation by the key's position j is linear, so each part
// is turned as the whole key is. Qwen2's k bias is the constant.
KeyPath llama_key_path(const Model& m, const Activations& a, int layer, int head, int query,
                       int key) {
  const Config& c = m.config;
  const LlamaLayer& w = m.llama.layers[static_cast<size_t>(layer)];
  const int C = c.n_embd, hs = c.head_size(), kv = head / c.group();
  const size_t row = static_cast<size_t>(layer) * a.B * a.T + static_cast<size_t>(key);
  const double rstd = a.ln1_rstd[row];
  const float* gamma = w.attn_norm.data();
  const float* q = a.qkv_at(c, layer, 0) + static_cast<size_t>(query) * c.qkv_width() +
                   static_cast<size_t>(head) * hs;  // after RoPE at the query's position
  auto wk = std::make_shared<std::vector<float>>(static_cast<size_t>(hs) * C);
  for (int i = 0; i < hs; ++i)
    w.k.row(static_cast<int64_t>(kv) * hs + i, wk->data() + static_cast<size_t>(i) * C);
  auto inv_freq = std::make_shared<std::vector<double>>(rope_inv_freq(c));
  const double inv = 1.0 / std::sqrt(static_cast<double>(hs));
  // q_t · RoPE_j(kp) / √hs for a head's unrotated key kp.
  auto score_of = [=](Vec kp) {
    rope_rotate(kp.data(), 1, hs, *inv_freq, key);
    double s = 0;
    for (int i = 0; i < hs; ++i) s += q[i] * kp[static_cast<size_t>(i)];
    return s * inv;
  };
  KeyPath k;
  k.part = [=](const Vec& x) {
    Vec kp(static_cast<size_t>(hs), 0.0);
    for (int i = 0; i < hs; ++i) {
      const float* wr = wk->data() + static_cast<size_t>(i) * C;
      double s = 0;
      for (int r = 0; r < C; ++r) s += x[static_cast<size_t>(r)] * rstd * gamma[r] * wr[r];
      kp[static_cast<size_t>(i)] = s;
    }
    return score_of(std::move(kp));
  };
  if (!w.k_bias.empty()) {
    const float* b = w.k_bias.data() + static_cast<size_t>(kv) * hs;
    k.constant = score_of(Vec(b, b + hs));
  }
  return k;
}

// Each head's share of layer l's attention output at row `lrow` (the heads' outputs y side by
// side through the output projection), calling `add(h, x)` with head h's C-vector.
template <typename Add>
void head_outputs(const Model& m, const Activations& a, int l, size_t lrow, Add add) {
  const Config& c = m.config;
  const int C = c.n_embd, hs = c.head_size(), NH = c.n_head, Q = c.q_dim();
  const float* y = a.atty.data() + lrow * Q;
  std::vector<Vec> x(static_cast<size_t>(NH), Vec(static_cast<size_t>(C)));
  if (c.llama_family()) {
    std::vector<float> o(static_cast<size_t>(Q));  // row r of o_proj (C, Q)
    for (int r = 0; r < C; ++r) {
      m.llama.layers[static_cast<size_t>(l)].o.row(r, o.data());
      for (int h = 0; h < NH; ++h) {
        double s = 0;
        for (int i = 0; i < hs; ++i) s += static_cast<double>(y[h * hs + i]) * o[h * hs + i];
        x[static_cast<size_t>(h)][static_cast<size_t>(r)] = s;
      }
    }
  } else {
    const float* wo = m.params.ptr(kAttProjW, l);  // (C, C): rows h·hs … h·hs + hs − 1 are head h's
    for (int h = 0; h < NH; ++h)
      for (int r = 0; r < C; ++r) {
        double s = 0;
        for (int i = 0; i < hs; ++i)
          s += static_cast<double>(y[h * hs + i]) * wo[static_cast<size_t>(h * hs + i) * C + r];
        x[static_cast<size_t>(h)][static_cast<size_t>(r)] = s;
      }
  }
  for (int h = 0; h < NH; ++h) add(h, x[static_cast<size_t>(h)]);
}

}  // namespace

std::vector<ScorePart> key_score_parts(const Model& m, const Activations& a, int layer, int head,
                                       int query, int key) {
  const Config& c = m.config;
  const int C = c.n_embd, T = a.T;
  const bool llama = c.llama_family();
  assert(layer >= 0 && layer < c.n_layer && head >= 0 && head < c.n_head);
  assert(key >= 0 && key <= query && query < T);
  const KeyPath path = llama ? llama_key_path(m, a, layer, head, query, key)
                             : gpt2_key_path(m, a, layer, head, query, key);

  std::vector<ScorePart> out;
  const int tok = a.tokens[static_cast<size_t>(key)];
  Vec x(static_cast<size_t>(C));
  if (llama) {
    std::vector<float> e(static_cast<size_t>(C));
    m.llama.embed.row(tok, e.data());
    x.assign(e.begin(), e.end());
  } else {
    for (int r = 0; r < C; ++r)
      x[static_cast<size_t>(r)] = m.params.ptr(kWte)[static_cast<size_t>(tok) * C + r];
  }
  out.push_back({"token embedding", -1, -1, path.part(x)});
  if (!llama) {  // RoPE models have no position in the stream: the key is turned by it instead
    for (int r = 0; r < C; ++r)
      x[static_cast<size_t>(r)] = m.params.ptr(kWpe)[static_cast<size_t>(key) * C + r];
    out.push_back({"position", -1, -1, path.part(x)});
  }
  double biases = path.constant;
  for (int l = 0; l < layer; ++l) {
    const size_t lrow = static_cast<size_t>(l) * a.B * T + static_cast<size_t>(key);
    head_outputs(m, a, l, lrow, [&](int h, const Vec& y) {
      out.push_back(
          {"L" + std::to_string(l) + "H" + std::to_string(h) + " output", l, h, path.part(y)});
    });
    if (!llama) {  // c_proj's bias
      for (int r = 0; r < C; ++r) x[static_cast<size_t>(r)] = m.params.ptr(kAttProjB, l)[r];
      biases += path.part(x);
    }
    if (!a.fcproj.empty()) {
      const float* f = a.fcproj.data() + lrow * C;
      x.assign(f, f + C);
      out.push_back({"L" + std::to_string(l) + " MLP", l, -1, path.part(x)});
    }
  }
  if (!llama || c.qkv_bias) out.push_back({"biases", -1, -1, biases});
  return out;
}

}  // namespace attn::lm
