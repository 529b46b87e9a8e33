// GPT-2's backward pass, layer by layer in reverse (see backward.h); instantiated for float and
// double.
#include "lm/backward.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace attn::lm {
namespace {

using Eigen::Index;
using OuterStride = Eigen::OuterStride<>;
template <typename S>
using ConstMap = Eigen::Map<const RowMatrix<S>>;
template <typename S>
using Map = Eigen::Map<RowMatrix<S>>;
template <typename S>
using ConstStrided = Eigen::Map<const RowMatrix<S>, 0, OuterStride>;
template <typename S>
using Strided = Eigen::Map<RowMatrix<S>, 0, OuterStride>;

}  // namespace

template <typename S>
void encoder_backward(S* dwte, S* dwpe, const S* dout, const int* tokens, int B, int T, int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const S* d = dout + (static_cast<size_t>(b) * T + t) * C;
      S* e = dwte + static_cast<size_t>(tokens[b * T + t]) * C;
      S* p = dwpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) {
        e[i] += d[i];
        p[i] += d[i];
      }
    }
}

template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                        const S* mean, const S* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<size_t>(n) * C;
    const S* d = dout + static_cast<size_t>(n) * C;
    S* dx = dinp + static_cast<size_t>(n) * C;
    const S m = mean[n], s = rstd[n];
    // y = norm·w + b with norm = (x − mean)·rstd; through the mean and the variance every input
    // moves every norm, hence the two averages.
    S dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int i = 0; i < C; ++i) {
      const S norm = (x[i] - m) * s;
      const S dnorm = weight[i] * d[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int i = 0; i < C; ++i) {
      const S norm = (x[i] - m) * s;
      const S dnorm = weight[i] * d[i];
      dbias[i] += d[i];
      dweight[i] += norm * d[i];
      dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
  }
}

template <typename S>
void matmul_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                     int N, int C, int OC) {
  ConstMap<S> d(dout, N, OC), x(inp, N, C), w(weight, C, OC);
  Map<S>(dinp, N, C).noalias() = d * w.transpose();
  Map<S>(dweight, C, OC).noalias() += x.transpose() * d;
  if (dbias) Eigen::Map<Eigen::Matrix<S, 1, Eigen::Dynamic>>(dbias, OC) += d.colwise().sum();
}

template <typename S>
void attention_backward(S* dqkv, const S* datty, const S* qkv, const S* att, int B, int T, int NH,
                        int NKV, int hs, int window, int shaped_head, double shape_scale) {
  const int group = NH / NKV, Q = NH * hs, KV = NKV * hs, W = Q + 2 * KV;
  const S scale = S(1) / std::sqrt(static_cast<S>(hs));
  // A K/V head's gradient sums over the query heads that read it.
  std::fill(dqkv, dqkv + static_cast<size_t>(B) * T * W, S(0));
  RowMatrix<S> dw(T, T), ds(T, T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h) {
      const size_t qcol = static_cast<size_t>(h) * hs,
                   kcol = Q + static_cast<size_t>(h / group) * hs;
      const S* base = qkv + static_cast<size_t>(b) * T * W;
      S* dbase = dqkv + static_cast<size_t>(b) * T * W;
      const ConstStrided<S> q(base + qcol, T, hs, OuterStride(W));
      const ConstStrided<S> k(base + kcol, T, hs, OuterStride(W));
      const ConstStrided<S> v(base + kcol + KV, T, hs, OuterStride(W));
      Strided<S> dq(dbase + qcol, T, hs, OuterStride(W));
      Strided<S> dk(dbase + kcol, T, hs, OuterStride(W));
      Strided<S> dv(dbase + kcol + KV, T, hs, OuterStride(W));
      const ConstStrided<S> d(datty + static_cast<size_t>(b) * T * Q + qcol, T, hs, OuterStride(Q));
      const ConstMap<S> w(att + (static_cast<size_t>(b) * NH + h) * T * T, T, T);
      dv.noalias() += w.transpose() * d;
      dw.noalias() = d * v.transpose();
      // The softmax's Jacobian row by row; the hidden keys (future, or outside the window) have
      // w = 0, so ds = 0 there.
      for (int t = 0; t < T; ++t) {
        const int lo = window > 0 ? std::max(0, t - window + 1) : 0;
        S dot = 0;
        for (int t2 = lo; t2 <= t; ++t2) dot += w(t, t2) * dw(t, t2);
        for (int t2 = 0; t2 < T; ++t2)
          ds(t, t2) = t2 >= lo && t2 <= t ? w(t, t2) * (dw(t, t2) - dot) : S(0);
      }
      if (h == shaped_head) {  // ∂(−ln w(t, t−1))/∂score(t, t2) = w(t, t2) − [t2 = t−1]
        const S c = static_cast<S>(shape_scale);
        for (int t = 1; t < T; ++t)
          for (int t2 = window > 0 ? std::max(0, t - window + 1) : 0; t2 <= t; ++t2)
            ds(t, t2) += c * (w(t, t2) - S(t2 == t - 1 ? 1 : 0));
      }
      dq.noalias() += ds * k * scale;
      dk.noalias() += ds.transpose() * q * scale;
    }
}

template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, size_t N) {
  const S s = std::sqrt(S(2) / static_cast<S>(M_PI));
  for (size_t i = 0; i < N; ++i) {
    const S x = inp[i];
    const S th = std::tanh(s * (x + S(0.044715) * x * x * x));
    const S sech2 = S(1) - th * th;
    const S grad = S(0.5) * (S(1) + th) + S(0.5) * x * sech2 * s * (S(1) + S(3 * 0.044715) * x * x);
    dinp[i] += grad * dout[i];
  }
}

template <typename S>
void logits_backward(S* dinp, S* dwte, const S* dlogits, const S* inp, const S* wte, int N, int C,
                     int V) {
  ConstMap<S> d(dlogits, N, V), x(inp, N, C), e(wte, V, C);
  Map<S>(dinp, N, C).noalias() = d * e;
  Map<S>(dwte, V, C).noalias() += d.transpose() * x;
}

template <typename S>
double crossentropy_backward(S* dlogits, const S* logits, const int* targets, int N, int V,
                             double scale) {
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    const S* z = logits + static_cast<size_t>(n) * V;
    S* dz = dlogits + static_cast<size_t>(n) * V;
    const int target = targets[n];
    if (target < 0) {
      std::fill(dz, dz + V, S(0));
      continue;
    }
    assert(target < V);
    const S mx = *std::max_element(z, z + V);
    S sum = 0;
    for (int i = 0; i < V; ++i) sum += dz[i] = std::exp(z[i] - mx);
    loss += static_cast<double>(std::log(sum) - (z[target] - mx));
    const S f = static_cast<S>(scale) / sum;
    for (int i = 0; i < V; ++i) dz[i] *= f;
    dz[target] -= static_cast<S>(scale);
  }
  return loss;
}

template <typename S>
double gpt_backward(const ParameterBuffer<S>& p, const ActivationsT<S>& a,
                    const std::vector<int>& targets, double scale, ParameterBuffer<S>& g,
                    GradScratch<S>& s, const ForwardOptions& options, int* counted,
                    const PreviousTokenShaping& shaping) {
  const Config& c = p.config;
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, F = c.mlp_size(), V = c.vocab_size;
  const int B = a.B, T = a.T, N = B * T;
  const size_t BT = static_cast<size_t>(N);
  assert(a.logits_T == T && targets.size() == BT && g.total() == p.total());
  s.dlogits.resize(BT * V);
  s.dlnf.resize(BT * C);
  s.dresidual.assign(BT * C, S(0));
  s.dln.resize(BT * C);
  s.dqkv.resize(BT * 3 * C);
  s.datty.resize(BT * C);
  if (options.mlp) {
    s.dfch.resize(BT * F);
    s.dfch_gelu.resize(BT * F);
  }
  const double loss =
      crossentropy_backward(s.dlogits.data(), a.logits.data(), targets.data(), N, V, scale);
  if (counted)
    *counted = static_cast<int>(
        std::count_if(targets.begin(), targets.end(), [](int t) { return t >= 0; }));
  logits_backward(s.dlnf.data(), g.ptr(kWte), s.dlogits.data(), a.lnf.data(), p.ptr(kWte), N, C, V);
  layernorm_backward(s.dresidual.data(), g.ptr(kLnfW), g.ptr(kLnfB), s.dlnf.data(),
                     a.residual3.data() + (static_cast<size_t>(L) - 1) * BT * C, p.ptr(kLnfW),
                     a.lnf_mean.data(), a.lnf_rstd.data(), N, C);
  // s.dresidual holds the gradient of the residual stream as the layers are walked back: first of
  // layer l's output (residual3), then of residual2, then of the layer's input.
  S* dres = s.dresidual.data();
  for (int l = L - 1; l >= 0; --l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const S* residual = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    if (options.mlp) {
      // residual3 = residual2 + c_proj(gelu(c_fc(ln_2(residual2)))).
      matmul_backward(s.dfch_gelu.data(), g.ptr(kFcProjW, l), g.ptr(kFcProjB, l), dres,
                      a.fch_gelu.data() + o * F, p.ptr(kFcProjW, l), N, F, C);
      std::fill(s.dfch.begin(), s.dfch.end(), S(0));
      gelu_backward(s.dfch.data(), a.fch.data() + o * F, s.dfch_gelu.data(), BT * F);
      matmul_backward(s.dln.data(), g.ptr(kFcW, l), g.ptr(kFcB, l), s.dfch.data(),
                      a.ln2.data() + o * C, p.ptr(kFcW, l), N, C, F);
      layernorm_backward(dres, g.ptr(kLn2W, l), g.ptr(kLn2B, l), s.dln.data(),
                         a.residual2.data() + o * C, p.ptr(kLn2W, l), a.ln2_mean.data() + o,
                         a.ln2_rstd.data() + o, N, C);
    }
    // residual2 = residual + c_proj(attention(c_attn(ln_1(residual)))).
    matmul_backward(s.datty.data(), g.ptr(kAttProjW, l), g.ptr(kAttProjB, l), dres,
                    a.atty.data() + o * C, p.ptr(kAttProjW, l), N, C, C);
    attention_backward(s.dqkv.data(), s.datty.data(), a.qkv.data() + o * 3 * C,
                       a.att.data() + o * NH * T, B, T, NH, NH, C / NH, 0,
                       shaped_head_of(shaping, l), shaping.scale);
    matmul_backward(s.dln.data(), g.ptr(kQkvW, l), g.ptr(kQkvB, l), s.dqkv.data(),
                    a.ln1.data() + o * C, p.ptr(kQkvW, l), N, C, 3 * C);
    layernorm_backward(dres, g.ptr(kLn1W, l), g.ptr(kLn1B, l), s.dln.data(), residual,
                       p.ptr(kLn1W, l), a.ln1_mean.data() + o, a.ln1_rstd.data() + o, N, C);
  }
  encoder_backward(g.ptr(kWte), g.ptr(kWpe), dres, a.tokens.data(), B, T, C);
  return loss;
}

#define ATTN_LM_BACKWARD(S)                                                                      \
  template void encoder_backward<S>(S*, S*, const S*, const int*, int, int, int);                \
  template void layernorm_backward<S>(S*, S*, S*, const S*, const S*, const S*, const S*,        \
                                      const S*, int, int);                                       \
  template void matmul_backward<S>(S*, S*, S*, const S*, const S*, const S*, int, int, int);     \
  template void attention_backward<S>(S*, const S*, const S*, const S*, int, int, int, int, int, \
                                      int, int, double);                                         \
  template void gelu_backward<S>(S*, const S*, const S*, size_t);                                \
  template void logits_backward<S>(S*, S*, const S*, const S*, const S*, int, int, int);         \
  template double crossentropy_backward<S>(S*, const S*, const int*, int, int, double);          \
  template double gpt_backward<S>(const ParameterBuffer<S>&, const ActivationsT<S>&,             \
                                  const std::vector<int>&, double, ParameterBuffer<S>&,          \
                                  GradScratch<S>&, const ForwardOptions&, int*,                  \
                                  const PreviousTokenShaping&);
ATTN_LM_BACKWARD(float)
ATTN_LM_BACKWARD(double)
#undef ATTN_LM_BACKWARD

}  // namespace attn::lm
