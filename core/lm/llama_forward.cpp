// The Llama family's forward pass: Eigen products split over the cores (lm/weights.h), plain
// loops for the norms, RoPE and the activation.
#include "lm/llama_forward.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "lm/parallel.h"

namespace attn::lm {

using Eigen::Index;

std::vector<double> rope_inv_freq(const Config& c) {
  const int hs = c.head_size();
  std::vector<double> f(static_cast<size_t>(hs / 2));
  for (int i = 0; i < hs / 2; ++i)
    f[static_cast<size_t>(i)] = 1.0 / std::pow(c.rope_theta, 2.0 * i / hs);
  const RopeScaling& s = c.rope_scaling;
  if (s.type == RopeScaling::kLinear) {
    for (double& x : f) x /= s.factor;
  } else if (s.type == RopeScaling::kLlama3) {
    const double orig = s.original_max_position_embeddings;
    const double low_wavelen = orig / s.low_freq_factor, high_wavelen = orig / s.high_freq_factor;
    for (double& x : f) {
      const double wavelen = 2 * M_PI / x;
      if (wavelen < high_wavelen) continue;  // high frequencies: kept
      if (wavelen > low_wavelen) {           // low frequencies: divided by the factor
        x /= s.factor;
        continue;
      }
      const double smooth =
          (orig / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      x = (1 - smooth) * x / s.factor + smooth * x;
    }
  }
  return f;
}

template <typename S>
void rope_rotate(S* x, int heads, int hs, const std::vector<double>& inv_freq, int pos,
                 bool inverse) {
  const int half = hs / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = pos * inv_freq[static_cast<size_t>(i)];
    const double c = std::cos(angle), s = inverse ? -std::sin(angle) : std::sin(angle);
    for (int h = 0; h < heads; ++h) {
      S* y = x + static_cast<size_t>(h) * hs;
      const double a = y[i], b = y[i + half];
      y[i] = static_cast<S>(a * c - b * s);
      y[i + half] = static_cast<S>(b * c + a * s);
    }
  }
}

template <typename S>
void rmsnorm_forward(const S* x, const S* weight, int N, int C, double eps, S* out, S* rstd) {
  for (int n = 0; n < N; ++n) {
    const S* r = x + static_cast<size_t>(n) * C;
    double ss = 0;
    for (int i = 0; i < C; ++i) ss += static_cast<double>(r[i]) * r[i];
    const auto s = static_cast<S>(1.0 / std::sqrt(ss / C + eps));
    S* o = out + static_cast<size_t>(n) * C;
    for (int i = 0; i < C; ++i) o[i] = r[i] * s * weight[i];
    if (rstd) rstd[n] = s;
  }
}

template void rope_rotate<float>(float*, int, int, const std::vector<double>&, int, bool);
template void rope_rotate<double>(double*, int, int, const std::vector<double>&, int, bool);
template void rmsnorm_forward<float>(const float*, const float*, int, int, double, float*, float*);
template void rmsnorm_forward<double>(const double*, const double*, int, int, double, double*,
                                      double*);

void gqa_attention(const float* q, int64_t ldq, const float* k, const float* v, int64_t ldkv, int n,
                   int m, int q0, int k0, int NH, int NKV, int hs, int window, float* out,
                   int64_t ldo, float* att, int threads) {
  assert(NH % NKV == 0 && k0 + m >= q0 + n);
  const int group = NH / NKV;
  split_range(NH, thread_count(threads), 1, [&](Index h0, Index h1) {
    RowMatrixF scratch;
    for (Index h = h0; h < h1; ++h) {
      const Index kvh = h / group;
      attend_head(q + h * hs, ldq, k + kvh * hs, v + kvh * hs, ldkv, n, m, q0, k0, hs, window,
                  out + h * hs, ldo, att ? att + h * static_cast<Index>(n) * m : nullptr, scratch);
    }
  });
}

void llama_layer_qkv(const Model& m, int l, const float* x, int n, int p0, const LayerRows& r,
                     const std::vector<double>& inv_freq, int threads) {
  const Config& c = m.config;
  const LlamaLayer& w = m.llama.layers[static_cast<size_t>(l)];
  const int C = c.n_embd, Q = c.q_dim(), KV = c.kv_dim(), W = c.qkv_width(), hs = c.head_size();
  rmsnorm_forward(x, w.attn_norm.data(), n, C, c.layer_norm_epsilon, r.ln1, r.rstd1);
  auto bias = [](const AlignedVector<float>& b) { return b.empty() ? nullptr : b.data(); };
  linear_forward(r.ln1, n, w.q, bias(w.q_bias), r.qkv, W, threads);
  linear_forward(r.ln1, n, w.k, bias(w.k_bias), r.qkv + Q, W, threads);
  linear_forward(r.ln1, n, w.v, bias(w.v_bias), r.qkv + Q + KV, W, threads);
  for (int t = 0; t < n; ++t) {
    float* row = r.qkv + static_cast<size_t>(t) * W;
    if (r.qk_unrotated)
      std::copy(row, row + Q + KV, r.qk_unrotated + static_cast<size_t>(t) * (Q + KV));
    rope_rotate(row, c.n_head, hs, inv_freq, p0 + t);
    rope_rotate(row + Q, c.kv_heads(), hs, inv_freq, p0 + t);
  }
}

void llama_layer_rest(const Model& m, int l, const float* x, int n, const LayerRows& r,
                      int threads) {
  const Config& c = m.config;
  const LlamaLayer& w = m.llama.layers[static_cast<size_t>(l)];
  const int C = c.n_embd, F = c.mlp_size();
  const size_t nC = static_cast<size_t>(n) * C, nF = static_cast<size_t>(n) * F;
  linear_forward(r.atty, n, w.o, nullptr, r.attproj, C, threads);
  for (size_t i = 0; i < nC; ++i) r.residual2[i] = x[i] + r.attproj[i];
  rmsnorm_forward(r.residual2, w.mlp_norm.data(), n, C, c.layer_norm_epsilon, r.ln2, r.rstd2);
  linear_forward(r.ln2, n, w.gate, nullptr, r.gate, F, threads);
  linear_forward(r.ln2, n, w.up, nullptr, r.up, F, threads);
  for (size_t i = 0; i < nF; ++i) {
    const float g = r.gate[i];
    r.act[i] = g / (1.0f + std::exp(-g)) * r.up[i];  // silu(gate) ⊙ up
  }
  linear_forward(r.act, n, w.down, nullptr, r.down, C, threads);
  for (size_t i = 0; i < nC; ++i) r.out[i] = r.residual2[i] + r.down[i];
}

void llama_forward(const Model& m, const std::vector<int>& tokens, int B, int T, Activations& a,
                   const ForwardOptions& options) {
  const Config& c = m.config;
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, F = c.mlp_size(), V = c.vocab_size;
  const int Q = c.q_dim(), KV = c.kv_dim(), W = c.qkv_width(), hs = c.head_size();
  assert(B >= 1 && T >= 1 && T <= c.n_positions && tokens.size() == static_cast<size_t>(B) * T);
  const size_t BT = static_cast<size_t>(B) * T;
  Activations::Parts parts;
  parts.fc_up = true;
  parts.qk_unrotated = true;
  a.size_for(c, B, T, options.all_logits ? T : 1, tokens, parts);

  const int N = static_cast<int>(BT), th = options.threads;
  for (size_t i = 0; i < BT; ++i)
    m.llama.embed.row(tokens[i], a.encoded.data() + i * static_cast<size_t>(C));
  const std::vector<double> inv_freq = rope_inv_freq(c);
  for (int l = 0; l < L; ++l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const float* x = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    LayerRows r;
    r.ln1 = a.ln1.data() + o * C;
    r.rstd1 = a.ln1_rstd.data() + o;
    r.qkv = a.qkv.data() + o * W;
    r.qk_unrotated = a.qk_unrotated.data() + o * (Q + KV);
    r.atty = a.atty.data() + o * Q;
    r.attproj = a.attproj.data() + o * C;
    r.residual2 = a.residual2.data() + o * C;
    r.ln2 = a.ln2.data() + o * C;
    r.rstd2 = a.ln2_rstd.data() + o;
    r.gate = a.fch.data() + o * F;
    r.up = a.fc_up.data() + o * F;
    r.act = a.fch_gelu.data() + o * F;
    r.down = a.fcproj.data() + o * C;
    r.out = a.residual3.data() + o * C;
    // Each sequence's positions start at 0 (RoPE), so each goes through the first half on its
    // own; the second half runs on every row at once.
    for (int b = 0; b < B; ++b) {
      LayerRows rb = r;
      const size_t off = static_cast<size_t>(b) * T;
      for (float** p : {&rb.ln1, &rb.residual2, &rb.attproj, &rb.ln2, &rb.down, &rb.out})
        *p += off * C;
      rb.rstd1 += off;
      rb.qkv += off * W;
      rb.qk_unrotated += off * (Q + KV);
      llama_layer_qkv(m, l, x + off * C, T, 0, rb, inv_freq, th);
    }
    for (int b = 0; b < B; ++b) {
      const float* qkv = r.qkv + static_cast<size_t>(b) * T * W;
      gqa_attention(qkv, W, qkv + Q, qkv + Q + KV, W, T, T, 0, 0, NH, c.kv_heads(), hs, c.window(l),
                    r.atty + static_cast<size_t>(b) * T * Q, Q,
                    a.att.data() + (o + static_cast<size_t>(b) * T) * NH * T, th);
    }
    llama_layer_rest(m, l, x, N, r, th);
  }
  const float* last = a.residual3.data() + (static_cast<size_t>(L) - 1) * BT * C;
  rmsnorm_forward(last, m.llama.norm.data(), N, C, c.layer_norm_epsilon, a.lnf.data(),
                  a.lnf_rstd.data());
  const Weight& head = m.llama.output();
  if (options.all_logits) {
    linear_forward(a.lnf.data(), N, head, nullptr, a.logits.data(), V, th);
  } else {
    for (int b = 0; b < B; ++b)
      linear_forward(a.lnf.data() + (static_cast<size_t>(b) * T + T - 1) * C, 1, head, nullptr,
                     a.logits.data() + static_cast<size_t>(b) * V, V, th);
  }
}

}  // namespace attn::lm
