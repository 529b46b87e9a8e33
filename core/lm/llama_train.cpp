// The Llama family's training passes, layer by layer (see llama_train.h); instantiated for float
// and double.
#include "lm/llama_train.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "lm/llama_forward.h"

namespace attn::lm {
namespace {

using OuterStride = Eigen::OuterStride<>;
template <typename S>
using ConstMap = Eigen::Map<const RowMatrix<S>>;
template <typename S>
using ConstStrided = Eigen::Map<const RowMatrix<S>, 0, OuterStride>;
template <typename S>
using Strided = Eigen::Map<RowMatrix<S>, 0, OuterStride>;

// Rotates (or, with `inverse`, rotates back) the Q and K heads of every row of qkv (B,T,W), row t
// of each sequence at position t.
template <typename S>
void rope_rows(S* qkv, const Config& c, int B, int T, const std::vector<double>& inv_freq,
               bool inverse) {
  const int W = c.qkv_width(), hs = c.head_size();
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      S* row = qkv + (static_cast<size_t>(b) * T + t) * W;
      rope_rotate(row, c.n_head, hs, inv_freq, t, inverse);
      rope_rotate(row + c.q_dim(), c.kv_heads(), hs, inv_freq, t, inverse);
    }
}

}  // namespace

template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight,
                      const S* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<size_t>(n) * C;
    const S* d = dout + static_cast<size_t>(n) * C;
    S* dx = dinp + static_cast<size_t>(n) * C;
    const S r = rstd[n];
    // y_i = x_i·r·w_i with r = (Σx²/C + eps)^(−1/2), so ∂r/∂x_j = −r³·x_j/C: every input moves
    // every output through r.
    S dot = 0;
    for (int i = 0; i < C; ++i) dot += d[i] * weight[i] * x[i];
    const S k = r * r * r * dot / static_cast<S>(C);
    for (int i = 0; i < C; ++i) {
      dweight[i] += d[i] * x[i] * r;
      dx[i] += d[i] * weight[i] * r - x[i] * k;
    }
  }
}

template <typename S>
void swiglu_forward(const S* gate_up, int N, int F, S* out) {
  for (int n = 0; n < N; ++n) {
    const S* g = gate_up + static_cast<size_t>(n) * 2 * F;
    const S* u = g + F;
    S* o = out + static_cast<size_t>(n) * F;
    for (int i = 0; i < F; ++i) o[i] = g[i] / (S(1) + std::exp(-g[i])) * u[i];
  }
}

template <typename S>
void swiglu_backward(S* dgate_up, const S* gate_up, const S* dout, int N, int F) {
  for (int n = 0; n < N; ++n) {
    const S* g = gate_up + static_cast<size_t>(n) * 2 * F;
    const S* u = g + F;
    const S* d = dout + static_cast<size_t>(n) * F;
    S* dg = dgate_up + static_cast<size_t>(n) * 2 * F;
    S* du = dg + F;
    for (int i = 0; i < F; ++i) {
      // silu(g) = g·σ(g), silu'(g) = σ(g)·(1 + g·(1 − σ(g))).
      const S sig = S(1) / (S(1) + std::exp(-g[i]));
      du[i] = d[i] * g[i] * sig;
      dg[i] = d[i] * u[i] * sig * (S(1) + g[i] * (S(1) - sig));
    }
  }
}

template <typename S>
void llama_train_forward(const ParameterBuffer<S>& p, const std::vector<int>& tokens, int B, int T,
                         ActivationsT<S>& a, LlamaScratch<S>& s, const ForwardOptions& options) {
  const Config& c = p.config;
  assert(c.llama_family() && c.tied);
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, NKV = c.kv_heads(), hs = c.head_size();
  const int F = c.mlp_size(), V = c.vocab_size, Q = c.q_dim(), W = c.qkv_width();
  assert(B >= 1 && T >= 1 && T <= c.n_positions && tokens.size() == static_cast<size_t>(B) * T);
  const int N = B * T;
  const size_t BT = static_cast<size_t>(N), LBT = BT * L;
  const bool mlp = options.mlp;
  typename ActivationsT<S>::Parts parts;
  parts.mlp = mlp;
  parts.fc = false;  // gate | up in the scratch (s.gate_up), as the backward pass reads them
  a.size_for(c, B, T, T, tokens, parts);
  s.gate_up.resize(mlp ? LBT * 2 * F : 0);
  for (size_t i = 0; i < BT; ++i)
    std::copy_n(p.ptr(kWte) + static_cast<size_t>(tokens[i]) * C, C, a.encoded.data() + i * C);
  const std::vector<double> inv_freq = rope_inv_freq(c);
  const double eps = c.layer_norm_epsilon;
  for (int l = 0; l < L; ++l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const S* x = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    S* ln1 = a.ln1.data() + o * C;
    S* qkv = a.qkv.data() + o * W;
    S* atty = a.atty.data() + o * Q;
    S* attproj = a.attproj.data() + o * C;
    S* residual2 = a.residual2.data() + o * C;
    S* out = a.residual3.data() + o * C;
    rmsnorm_forward(x, p.ptr(kLn1W, l), N, C, eps, ln1, a.ln1_rstd.data() + o);
    matmul_forward(ln1, p.ptr(kQkvW, l), c.qkv_bias ? p.ptr(kQkvB, l) : nullptr, N, C, W, qkv, 1);
    rope_rows(qkv, c, B, T, inv_freq, false);
    attention_forward(qkv, B, T, NH, NKV, hs, c.window(l), a.att.data() + o * NH * T, atty, 1);
    matmul_forward<S>(atty, p.ptr(kAttProjW, l), nullptr, N, Q, C, attproj, 1);
    residual_forward(x, attproj, BT * C, residual2);
    if (!mlp) {
      std::copy(residual2, residual2 + BT * C, out);
      continue;
    }
    S* ln2 = a.ln2.data() + o * C;
    S* gate_up = s.gate_up.data() + o * 2 * F;
    S* act = a.fch_gelu.data() + o * F;
    S* down = a.fcproj.data() + o * C;
    rmsnorm_forward(residual2, p.ptr(kLn2W, l), N, C, eps, ln2, a.ln2_rstd.data() + o);
    matmul_forward<S>(ln2, p.ptr(kFcW, l), nullptr, N, C, 2 * F, gate_up, 1);
    swiglu_forward(gate_up, N, F, act);
    matmul_forward<S>(act, p.ptr(kFcProjW, l), nullptr, N, F, C, down, 1);
    residual_forward(residual2, down, BT * C, out);
  }
  rmsnorm_forward(a.residual3.data() + (LBT - BT) * C, p.ptr(kLnfW), N, C, eps, a.lnf.data(),
                  a.lnf_rstd.data());
  logits_forward(a.lnf.data(), p.ptr(kWte), N, C, V, a.logits.data(), 1);
}

template <typename S>
double llama_backward(const ParameterBuffer<S>& p, const ActivationsT<S>& a,
                      const std::vector<int>& targets, double scale, ParameterBuffer<S>& g,
                      LlamaScratch<S>& s, const ForwardOptions& options, int* counted,
                      const PreviousTokenShaping& shaping) {
  const Config& c = p.config;
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, NKV = c.kv_heads(), hs = c.head_size();
  const int F = c.mlp_size(), V = c.vocab_size, Q = c.q_dim(), W = c.qkv_width();
  const int B = a.B, T = a.T, N = B * T;
  const size_t BT = static_cast<size_t>(N);
  assert(a.logits_T == T && targets.size() == BT && g.total() == p.total());
  s.dlogits.resize(BT * V);
  s.dlnf.resize(BT * C);
  s.dresidual.assign(BT * C, S(0));
  s.dln.resize(BT * C);
  s.dqkv.resize(BT * W);
  s.datty.resize(BT * Q);
  if (options.mlp) {
    s.dact.resize(BT * F);
    s.dgate_up.resize(BT * 2 * F);
  }
  const double loss =
      crossentropy_backward(s.dlogits.data(), a.logits.data(), targets.data(), N, V, scale);
  if (counted)
    *counted = static_cast<int>(
        std::count_if(targets.begin(), targets.end(), [](int t) { return t >= 0; }));
  logits_backward(s.dlnf.data(), g.ptr(kWte), s.dlogits.data(), a.lnf.data(), p.ptr(kWte), N, C, V);
  rmsnorm_backward(s.dresidual.data(), g.ptr(kLnfW), s.dlnf.data(),
                   a.residual3.data() + (static_cast<size_t>(L) - 1) * BT * C, p.ptr(kLnfW),
                   a.lnf_rstd.data(), N, C);
  const std::vector<double> inv_freq = rope_inv_freq(c);
  // s.dresidual holds the gradient of the residual stream as the layers are walked back: first of
  // layer l's output, then of residual2, then of the layer's input.
  S* dres = s.dresidual.data();
  for (int l = L - 1; l >= 0; --l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const S* x = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    if (options.mlp) {
      // out = residual2 + down(silu(gate) ⊙ up), (gate | up) = ln2 · W_gate|up.
      matmul_backward<S>(s.dact.data(), g.ptr(kFcProjW, l), nullptr, dres,
                         a.fch_gelu.data() + o * F, p.ptr(kFcProjW, l), N, F, C);
      swiglu_backward(s.dgate_up.data(), s.gate_up.data() + o * 2 * F, s.dact.data(), N, F);
      matmul_backward<S>(s.dln.data(), g.ptr(kFcW, l), nullptr, s.dgate_up.data(),
                         a.ln2.data() + o * C, p.ptr(kFcW, l), N, C, 2 * F);
      rmsnorm_backward(dres, g.ptr(kLn2W, l), s.dln.data(), a.residual2.data() + o * C,
                       p.ptr(kLn2W, l), a.ln2_rstd.data() + o, N, C);
    }
    // residual2 = x + o_proj(attention(rope(ln1 · W_qkv + b))).
    matmul_backward<S>(s.datty.data(), g.ptr(kAttProjW, l), nullptr, dres, a.atty.data() + o * Q,
                       p.ptr(kAttProjW, l), N, Q, C);
    attention_backward(s.dqkv.data(), s.datty.data(), a.qkv.data() + o * W,
                       a.att.data() + o * NH * T, B, T, NH, NKV, hs, c.window(l),
                       shaped_head_of(shaping, l), shaping.scale);
    // RoPE is a rotation: its backward rotates the gradient back by the same angle.
    rope_rows(s.dqkv.data(), c, B, T, inv_freq, true);
    matmul_backward(s.dln.data(), g.ptr(kQkvW, l), c.qkv_bias ? g.ptr(kQkvB, l) : nullptr,
                    s.dqkv.data(), a.ln1.data() + o * C, p.ptr(kQkvW, l), N, C, W);
    rmsnorm_backward(dres, g.ptr(kLn1W, l), s.dln.data(), x, p.ptr(kLn1W, l), a.ln1_rstd.data() + o,
                     N, C);
  }
  for (size_t i = 0; i < BT; ++i) {
    S* e = g.ptr(kWte) + static_cast<size_t>(a.tokens[i]) * C;
    for (int j = 0; j < C; ++j) e[j] += dres[i * C + static_cast<size_t>(j)];
  }
  return loss;
}

void llama_weights_from_params(Model& m) {
  const Config& c = m.config;
  const Parameters& p = m.params;
  assert(c.llama_family() && c.tied);
  const int C = c.n_embd, F = c.mlp_size(), Q = c.q_dim(), KV = c.kv_dim(), W = c.qkv_width();
  // A (out, in) Weight from columns [c0, c0 + out) of an (in, out_total) matrix.
  auto columns = [](const float* m, int in, int out_total, int c0, int out) {
    Weight w;
    w.rows = out;
    w.cols = in;
    w.f32.resize(static_cast<size_t>(in) * out);
    for (int r = 0; r < out; ++r)
      for (int i = 0; i < in; ++i)
        w.f32[static_cast<size_t>(r) * in + i] = m[static_cast<size_t>(i) * out_total + c0 + r];
    return w;
  };
  auto vec = [](const float* x, int n) { return AlignedVector<float>(x, x + n); };
  LlamaWeights w;
  w.embed.rows = c.vocab_size;
  w.embed.cols = C;
  w.embed.f32.assign(p.ptr(kWte), p.ptr(kWte) + p.count[kWte]);
  w.norm = vec(p.ptr(kLnfW), C);
  w.layers.resize(static_cast<size_t>(c.n_layer));
  for (int l = 0; l < c.n_layer; ++l) {
    LlamaLayer& y = w.layers[static_cast<size_t>(l)];
    y.attn_norm = vec(p.ptr(kLn1W, l), C);
    y.mlp_norm = vec(p.ptr(kLn2W, l), C);
    y.q = columns(p.ptr(kQkvW, l), C, W, 0, Q);
    y.k = columns(p.ptr(kQkvW, l), C, W, Q, KV);
    y.v = columns(p.ptr(kQkvW, l), C, W, Q + KV, KV);
    if (c.qkv_bias) {
      y.q_bias = vec(p.ptr(kQkvB, l), Q);
      y.k_bias = vec(p.ptr(kQkvB, l) + Q, KV);
      y.v_bias = vec(p.ptr(kQkvB, l) + Q + KV, KV);
    }
    y.o = columns(p.ptr(kAttProjW, l), Q, C, 0, C);
    y.gate = columns(p.ptr(kFcW, l), C, 2 * F, 0, F);
    y.up = columns(p.ptr(kFcW, l), C, 2 * F, F, F);
    y.down = columns(p.ptr(kFcProjW, l), F, C, 0, C);
  }
  m.llama = std::move(w);
}

#define ATTN_LM_LLAMA_TRAIN(S)                                                                  \
  template void rmsnorm_backward<S>(S*, S*, const S*, const S*, const S*, const S*, int, int);  \
  template void swiglu_forward<S>(const S*, int, int, S*);                                      \
  template void swiglu_backward<S>(S*, const S*, const S*, int, int);                           \
  template void llama_train_forward<S>(const ParameterBuffer<S>&, const std::vector<int>&, int, \
                                       int, ActivationsT<S>&, LlamaScratch<S>&,                 \
                                       const ForwardOptions&);                                  \
  template double llama_backward<S>(const ParameterBuffer<S>&, const ActivationsT<S>&,          \
                                    const std::vector<int>&, double, ParameterBuffer<S>&,       \
                                    LlamaScratch<S>&, const ForwardOptions&, int*,              \
                                    const PreviousTokenShaping&);
ATTN_LM_LLAMA_TRAIN(float)
ATTN_LM_LLAMA_TRAIN(double)
#undef ATTN_LM_LLAMA_TRAIN

}  // namespace attn::lm
