// GPT-2's forward pass: plain loops for the cheap layers, Eigen products split across the cores
// for the matrix multiplications.
#include "lm/forward.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <thread>

namespace attn::lm {
namespace {

using Eigen::Index;
using OuterStride = Eigen::OuterStride<>;
using StridedMap = Eigen::Map<const RowMatrixF, 0, OuterStride>;

int thread_count(int requested) {
  return requested > 0 ? requested
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs f(begin, end) over [0, n) in `threads` contiguous chunks of multiples of `align`.
template <typename F>
void split_columns(Index n, int threads, Index align, const F& f) {
  const Index per = ((n + threads - 1) / threads + align - 1) / align * align;
  if (threads <= 1 || per >= n) {
    f(Index{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  for (Index begin = per; begin < n; begin += per)
    pool.emplace_back([&f, begin, end = std::min(n, begin + per)] { f(begin, end); });
  f(Index{0}, per);
  for (auto& t : pool) t.join();
}

}  // namespace

void encoder_forward(const float* wte, const float* wpe, const int* tokens, int B, int T, int C,
                     float* out) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* e = wte + static_cast<size_t>(tokens[b * T + t]) * C;
      const float* p = wpe + static_cast<size_t>(t) * C;
      float* o = out + (static_cast<size_t>(b) * T + t) * C;
      for (int i = 0; i < C; ++i) o[i] = e[i] + p[i];
    }
}

void layernorm_forward(const float* inp, const float* weight, const float* bias, int N, int C,
                       float eps, float* out, float* mean, float* rstd) {
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<size_t>(n) * C;
    float m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    float v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;  // the biased variance, as PyTorch's LayerNorm
    const float s = 1.0f / std::sqrt(v + eps);
    float* o = out + static_cast<size_t>(n) * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

void matmul_forward(const float* inp, const float* weight, const float* bias, int N, int C, int OC,
                    float* out, int threads) {
  ConstMatMap x(inp, N, C), w(weight, C, OC);
  MatMap y(out, N, OC);
  // Each core computes a band of output columns: with a few tokens there are too few rows to
  // share, while OC is always in the hundreds.
  split_columns(OC, thread_count(threads), 16, [&](Index j0, Index j1) {
    y.middleCols(j0, j1 - j0).noalias() = x * w.middleCols(j0, j1 - j0);
    if (bias)
      y.middleCols(j0, j1 - j0).rowwise() +=
          Eigen::Map<const Eigen::RowVectorXf>(bias + j0, j1 - j0);
  });
}

void attention_forward(const float* qkv, int B, int T, int C, int NH, float* att, float* out,
                       int threads) {
  const int hs = C / NH;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  // The (b, h) pairs are independent: shared out over the cores.
  split_columns(Index{B} * NH, thread_count(threads), 1, [&](Index i0, Index i1) {
    RowMatrixF scores(T, T);
    for (Index i = i0; i < i1; ++i) {
      const int b = static_cast<int>(i / NH), h = static_cast<int>(i % NH);
      const float* base = qkv + static_cast<size_t>(b) * T * 3 * C + static_cast<size_t>(h) * hs;
      const StridedMap q(base, T, hs, OuterStride(3 * C));
      const StridedMap k(base + C, T, hs, OuterStride(3 * C));
      const StridedMap v(base + 2 * C, T, hs, OuterStride(3 * C));
      const size_t bh = (static_cast<size_t>(b) * NH + h) * T * T;
      MatMap w(att + bh, T, T);
      scores.noalias() = q * k.transpose() * scale;
      for (int t = 0; t < T; ++t) {
        // Keys t2 ≤ t only (causal); the softmax subtracts the row's maximum for stability.
        float mx = -INFINITY;
        for (int t2 = 0; t2 <= t; ++t2) mx = std::max(mx, scores(t, t2));
        float sum = 0;
        for (int t2 = 0; t2 <= t; ++t2) {
          w(t, t2) = std::exp(scores(t, t2) - mx);
          sum += w(t, t2);
        }
        for (int t2 = 0; t2 <= t; ++t2) w(t, t2) /= sum;
        for (int t2 = t + 1; t2 < T; ++t2) w(t, t2) = 0.0f;
      }
      Eigen::Map<RowMatrixF, 0, OuterStride> o(out + static_cast<size_t>(b) * T * C + h * hs, T, hs,
                                               OuterStride(C));
      o.noalias() = w * v;
    }
  });
}

void gelu_forward(const float* inp, size_t N, float* out, int threads) {
  const float s = std::sqrt(2.0f / static_cast<float>(M_PI));
  split_columns(static_cast<Index>(N), thread_count(threads), 4096, [&](Index i0, Index i1) {
    for (Index i = i0; i < i1; ++i) {
      const float x = inp[i];
      out[i] = 0.5f * x * (1.0f + std::tanh(s * (x + 0.044715f * x * x * x)));
    }
  });
}

void residual_forward(const float* a, const float* b, size_t N, float* out) {
  for (size_t i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

void logits_forward(const float* inp, const float* wte, int N, int C, int V, float* out,
                    int threads) {
  ConstMatMap x(inp, N, C), e(wte, V, C);
  MatMap y(out, N, V);
  split_columns(V, thread_count(threads), 64, [&](Index j0, Index j1) {
    y.middleCols(j0, j1 - j0).noalias() = x * e.middleRows(j0, j1 - j0).transpose();
  });
}

void gpt_forward(const Model& model, const std::vector<int>& tokens, int B, int T, Activations& a,
                 const ForwardOptions& options) {
  const Config& c = model.config;
  const Parameters& p = model.params;
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, F = c.mlp_size(), V = c.vocab_size;
  assert(B >= 1 && T >= 1 && T <= c.n_positions && tokens.size() == static_cast<size_t>(B) * T);
  const size_t BT = static_cast<size_t>(B) * T, LBT = BT * L;
  a.B = B;
  a.T = T;
  a.logits_T = options.all_logits ? T : 1;
  a.tokens = tokens;
  a.encoded.resize(BT * C);
  a.ln1.resize(LBT * C);
  a.ln1_mean.resize(LBT);
  a.ln1_rstd.resize(LBT);
  a.qkv.resize(LBT * 3 * C);
  a.att.resize(LBT * NH * T);
  a.atty.resize(LBT * C);
  a.attproj.resize(LBT * C);
  a.residual2.resize(LBT * C);
  a.ln2.resize(LBT * C);
  a.ln2_mean.resize(LBT);
  a.ln2_rstd.resize(LBT);
  a.fch.resize(LBT * F);
  a.fch_gelu.resize(LBT * F);
  a.fcproj.resize(LBT * C);
  a.residual3.resize(LBT * C);
  a.lnf.resize(BT * C);
  a.lnf_mean.resize(BT);
  a.lnf_rstd.resize(BT);
  a.logits.resize(static_cast<size_t>(B) * a.logits_T * V);

  const int N = static_cast<int>(BT), th = options.threads;
  const auto eps = static_cast<float>(c.layer_norm_epsilon);
  encoder_forward(p.ptr(kWte), p.ptr(kWpe), tokens.data(), B, T, C, a.encoded.data());
  for (int l = 0; l < L; ++l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const float* residual = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    float* ln1 = a.ln1.data() + o * C;
    float* qkv = a.qkv.data() + o * 3 * C;
    float* atty = a.atty.data() + o * C;
    float* attproj = a.attproj.data() + o * C;
    float* residual2 = a.residual2.data() + o * C;
    float* ln2 = a.ln2.data() + o * C;
    float* fch = a.fch.data() + o * F;
    float* fch_gelu = a.fch_gelu.data() + o * F;
    float* fcproj = a.fcproj.data() + o * C;
    float* residual3 = a.residual3.data() + o * C;
    layernorm_forward(residual, p.ptr(kLn1W, l), p.ptr(kLn1B, l), N, C, eps, ln1,
                      a.ln1_mean.data() + o, a.ln1_rstd.data() + o);
    matmul_forward(ln1, p.ptr(kQkvW, l), p.ptr(kQkvB, l), N, C, 3 * C, qkv, th);
    attention_forward(qkv, B, T, C, NH, a.att.data() + o * NH * T, atty, th);
    matmul_forward(atty, p.ptr(kAttProjW, l), p.ptr(kAttProjB, l), N, C, C, attproj, th);
    residual_forward(residual, attproj, BT * C, residual2);
    layernorm_forward(residual2, p.ptr(kLn2W, l), p.ptr(kLn2B, l), N, C, eps, ln2,
                      a.ln2_mean.data() + o, a.ln2_rstd.data() + o);
    matmul_forward(ln2, p.ptr(kFcW, l), p.ptr(kFcB, l), N, C, F, fch, th);
    gelu_forward(fch, BT * F, fch_gelu, th);
    matmul_forward(fch_gelu, p.ptr(kFcProjW, l), p.ptr(kFcProjB, l), N, F, C, fcproj, th);
    residual_forward(residual2, fcproj, BT * C, residual3);
  }
  layernorm_forward(a.residual3.data() + (static_cast<size_t>(L) - 1) * BT * C, p.ptr(kLnfW),
                    p.ptr(kLnfB), N, C, eps, a.lnf.data(), a.lnf_mean.data(), a.lnf_rstd.data());
  if (options.all_logits) {
    logits_forward(a.lnf.data(), p.ptr(kWte), N, C, V, a.logits.data(), th);
  } else {
    for (int b = 0; b < B; ++b)
      logits_forward(a.lnf.data() + (static_cast<size_t>(b) * T + T - 1) * C, p.ptr(kWte), 1, C, V,
                     a.logits.data() + static_cast<size_t>(b) * V, th);
  }
}

std::vector<double> softmax_probabilities(const float* logits, int V, double temperature) {
  std::vector<double> p(static_cast<size_t>(V));
  double mx = -INFINITY;
  for (int i = 0; i < V; ++i) mx = std::max(mx, static_cast<double>(logits[i]) / temperature);
  double sum = 0;
  for (int i = 0; i < V; ++i)
    sum += p[static_cast<size_t>(i)] = std::exp(logits[i] / temperature - mx);
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace attn::lm
