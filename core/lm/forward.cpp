// GPT-2's forward pass: plain loops for the cheap layers, Eigen products split across the cores
// for the matrix multiplications; each function instantiated for float and double.
#include "lm/forward.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "lm/llama_forward.h"
#include "lm/parallel.h"

namespace attn::lm {
namespace {

using Eigen::Index;
using OuterStride = Eigen::OuterStride<>;
template <typename S>
using StridedMap = Eigen::Map<const RowMatrix<S>, 0, OuterStride>;
template <typename S>
using ConstMap = Eigen::Map<const RowMatrix<S>>;
template <typename S>
using Map = Eigen::Map<RowMatrix<S>>;

}  // namespace

template <typename S>
void encoder_forward(const S* wte, const S* wpe, const int* tokens, int B, int T, int C, S* out) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const S* e = wte + static_cast<size_t>(tokens[b * T + t]) * C;
      const S* p = wpe + static_cast<size_t>(t) * C;
      S* o = out + (static_cast<size_t>(b) * T + t) * C;
      for (int i = 0; i < C; ++i) o[i] = e[i] + p[i];
    }
}

template <typename S>
void layernorm_forward(const S* inp, const S* weight, const S* bias, int N, int C, S eps, S* out,
                       S* mean, S* rstd) {
  for (int n = 0; n < N; ++n) {
    const S* x = inp + static_cast<size_t>(n) * C;
    S m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    S v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;  // the biased variance, as PyTorch's LayerNorm
    const S s = S(1) / std::sqrt(v + eps);
    S* o = out + static_cast<size_t>(n) * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

template <typename S>
void matmul_forward(const S* inp, const S* weight, const S* bias, int N, int C, int OC, S* out,
                    int threads) {
  ConstMap<S> x(inp, N, C), w(weight, C, OC);
  Map<S> y(out, N, OC);
  // Each core computes a band of output columns: with a few tokens there are too few rows to
  // share, while OC is always in the hundreds.
  split_range(OC, thread_count(threads), 16, [&](Index j0, Index j1) {
    y.middleCols(j0, j1 - j0).noalias() = x * w.middleCols(j0, j1 - j0);
    if (bias)
      y.middleCols(j0, j1 - j0).rowwise() +=
          Eigen::Map<const Eigen::Matrix<S, 1, Eigen::Dynamic>>(bias + j0, j1 - j0);
  });
}

template <typename S>
void attend_head(const S* q, int64_t ldq, const S* k, const S* v, int64_t ldkv, int n, int m,
                 int q0, int k0, int hs, int window, S* out, int64_t ldo, S* att,
                 RowMatrix<S>& scratch) {
  const S scale = S(1) / std::sqrt(static_cast<S>(hs));
  const StridedMap<S> Q(q, n, hs, OuterStride(ldq));
  const StridedMap<S> K(k, m, hs, OuterStride(ldkv));
  const StridedMap<S> V(v, m, hs, OuterStride(ldkv));
  if (!att) scratch.resize(n, m);
  // The weights are computed where they are kept: in `att`, or in the scratch matrix.
  Map<S> w(att ? att : scratch.data(), n, m);
  // Two steps, the same numbers as `q * kᵀ * scale`: the product straight into `w` (no (n, m)
  // temporary), then the scale in place.
  w.noalias() = Q * K.transpose();
  w *= scale;
  for (int t = 0; t < n; ++t) {
    // The keys this query sees: positions lo..hi as columns (causal, and the window); the softmax
    // subtracts the row's maximum for stability.
    const int pos = q0 + t;
    const int hi = pos - k0, lo = std::max(0, window > 0 ? pos - window + 1 - k0 : 0);
    S mx = -INFINITY;
    for (int j = lo; j <= hi; ++j) mx = std::max(mx, w(t, j));
    S sum = 0;
    for (int j = lo; j <= hi; ++j) {
      w(t, j) = std::exp(w(t, j) - mx);
      sum += w(t, j);
    }
    for (int j = lo; j <= hi; ++j) w(t, j) /= sum;
    for (int j = 0; j < lo; ++j) w(t, j) = S(0);
    for (int j = hi + 1; j < m; ++j) w(t, j) = S(0);
  }
  Eigen::Map<RowMatrix<S>, 0, OuterStride> o(out, n, hs, OuterStride(ldo));
  o.noalias() = w * V;
}

template <typename S>
void attention_forward(const S* qkv, int B, int T, int NH, int NKV, int hs, int window, S* att,
                       S* out, int threads) {
  assert(NKV >= 1 && NH % NKV == 0);
  const int group = NH / NKV, Q = NH * hs, KV = NKV * hs, W = Q + 2 * KV;
  // The (b, h) pairs are independent: shared out over the cores.
  split_range(Index{B} * NH, thread_count(threads), 1, [&](Index i0, Index i1) {
    RowMatrix<S> scratch;
    for (Index i = i0; i < i1; ++i) {
      const int b = static_cast<int>(i / NH), h = static_cast<int>(i % NH);
      const S* base = qkv + static_cast<size_t>(b) * T * W;
      const S* k = base + Q + static_cast<size_t>(h / group) * hs;
      attend_head(base + static_cast<size_t>(h) * hs, W, k, k + KV, W, T, T, 0, 0, hs, window,
                  out + static_cast<size_t>(b) * T * Q + h * hs, Q,
                  att + (static_cast<size_t>(b) * NH + h) * T * T, scratch);
    }
  });
}

template <typename S>
void gelu_forward(const S* inp, size_t N, S* out, int threads) {
  const S s = std::sqrt(S(2) / static_cast<S>(M_PI));
  split_range(static_cast<Index>(N), thread_count(threads), 4096, [&](Index i0, Index i1) {
    for (Index i = i0; i < i1; ++i) {
      const S x = inp[i];
      out[i] = S(0.5) * x * (S(1) + std::tanh(s * (x + S(0.044715) * x * x * x)));
    }
  });
}

template <typename S>
void residual_forward(const S* a, const S* b, size_t N, S* out) {
  for (size_t i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

template <typename S>
void logits_forward(const S* inp, const S* wte, int N, int C, int V, S* out, int threads) {
  ConstMap<S> x(inp, N, C), e(wte, V, C);
  Map<S> y(out, N, V);
  split_range(V, thread_count(threads), 64, [&](Index j0, Index j1) {
    y.middleCols(j0, j1 - j0).noalias() = x * e.middleRows(j0, j1 - j0).transpose();
  });
}

template <typename S>
void gpt_forward(const ParameterBuffer<S>& p, const std::vector<int>& tokens, int B, int T,
                 ActivationsT<S>& a, const ForwardOptions& options) {
  const Config& c = p.config;
  const int L = c.n_layer, C = c.n_embd, NH = c.n_head, F = c.mlp_size(), V = c.vocab_size;
  assert(B >= 1 && T >= 1 && T <= c.n_positions && tokens.size() == static_cast<size_t>(B) * T);
  const size_t BT = static_cast<size_t>(B) * T;
  const bool mlp = options.mlp;
  typename ActivationsT<S>::Parts parts;
  parts.norm_means = true;
  parts.mlp = mlp;
  a.size_for(c, B, T, options.all_logits ? T : 1, tokens, parts);

  const int N = static_cast<int>(BT), th = options.threads;
  const auto eps = static_cast<S>(c.layer_norm_epsilon);
  encoder_forward(p.ptr(kWte), p.ptr(kWpe), tokens.data(), B, T, C, a.encoded.data());
  for (int l = 0; l < L; ++l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const S* residual = l == 0 ? a.encoded.data() : a.residual3.data() + (o - BT) * C;
    S* ln1 = a.ln1.data() + o * C;
    S* qkv = a.qkv.data() + o * 3 * C;
    S* atty = a.atty.data() + o * C;
    S* attproj = a.attproj.data() + o * C;
    S* residual2 = a.residual2.data() + o * C;
    S* residual3 = a.residual3.data() + o * C;
    layernorm_forward(residual, p.ptr(kLn1W, l), p.ptr(kLn1B, l), N, C, eps, ln1,
                      a.ln1_mean.data() + o, a.ln1_rstd.data() + o);
    matmul_forward(ln1, p.ptr(kQkvW, l), p.ptr(kQkvB, l), N, C, 3 * C, qkv, th);
    attention_forward(qkv, B, T, NH, NH, C / NH, 0, a.att.data() + o * NH * T, atty, th);
    matmul_forward(atty, p.ptr(kAttProjW, l), p.ptr(kAttProjB, l), N, C, C, attproj, th);
    residual_forward(residual, attproj, BT * C, residual2);
    if (!mlp) {
      std::copy(residual2, residual2 + BT * C, residual3);
      continue;
    }
    S* ln2 = a.ln2.data() + o * C;
    S* fch = a.fch.data() + o * F;
    S* fch_gelu = a.fch_gelu.data() + o * F;
    S* fcproj = a.fcproj.data() + o * C;
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

void gpt_forward(const Model& model, const std::vector<int>& tokens, int B, int T, Activations& a,
                 const ForwardOptions& options) {
  if (model.config.llama_family()) {
    llama_forward(model, tokens, B, T, a, options);
    return;
  }
  ForwardOptions o = options;
  o.mlp = options.mlp && model.mlp;
  gpt_forward(model.params, tokens, B, T, a, o);
}

double forward_bytes(const Config& c, int B, int T, const ForwardOptions& o) {
  const double BT = static_cast<double>(B) * T, L = c.n_layer, C = c.n_embd, NH = c.n_head,
               F = c.mlp_size(), V = c.vocab_size, W = c.qkv_width(), Q = c.q_dim(),
               KV = c.kv_dim();
  const bool llama = c.llama_family();
  // Per layer and token: ln1, qkv, att, atty, attproj, residual2, residual3 (+ two statistics);
  // with the MLP also ln2, fch, fch_gelu, fcproj (+ two statistics); the Llama family also keeps
  // Q | K before RoPE and up_proj's output.
  double per_layer = C + W + NH * T + Q + C + C + C + 2;
  if (llama) per_layer += Q + KV;
  if (o.mlp || llama) per_layer += C + F + F + C + 2 + (llama ? F : 0);
  // The attention's scratch: one (T, T) score matrix per (sequence, head) computed at once,
  // at most B·NH of them (one per core in use).
  const double scores = static_cast<double>(B) * NH * T * static_cast<double>(T);
  const double floats = BT * C + L * BT * per_layer + BT * (C + 2) + scores +
                        static_cast<double>(B) * (o.all_logits ? T : 1) * V;
  return 4.0 * floats + 4.0 * BT;  // and the tokens
}

namespace {

std::string gigabytes(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

std::string integer(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

}  // namespace

std::string check_forward_size(const Config& c, int B, int T, const ForwardOptions& o,
                               double extra_bytes) {
  const double bytes = forward_bytes(c, B, T, o) + extra_bytes;
  if (bytes <= kMaxForwardBytes) return "";
  const double cells = static_cast<double>(c.n_layer) * c.n_head * B * T * static_cast<double>(T);
  return "the forward pass of " + std::to_string(B * static_cast<long long>(T)) +
         " tokens is too "
         "large: its attention weights alone are n_layer·n_head·n² = " +
         std::to_string(c.n_layer) + "·" + std::to_string(c.n_head) + "·" + std::to_string(T) +
         "² = " + integer(cells) + " floats, and it would need " + gigabytes(bytes) + " (" +
         integer(bytes) + " bytes); at most " + gigabytes(kMaxForwardBytes) + " (" +
         integer(kMaxForwardBytes) +
         " bytes) are allowed (docs/robustness.md); give a shorter text";
}

namespace {

// Where the first non-finite value of `n` floats is, or -1.
long long first_non_finite(const float* p, size_t n) {
  if (n == 0 || Eigen::Map<const Eigen::ArrayXf>(p, static_cast<Eigen::Index>(n)).allFinite())
    return -1;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return static_cast<long long>(i);
  return -1;
}

}  // namespace

std::string check_forward_finite(const Config& c, const Activations& a) {
  const int T = a.T, NH = c.n_head;
  const size_t BT = static_cast<size_t>(a.B) * T;
  std::string where;
  // Checks `rows` rows of `width` floats; on a non-finite value sets `where`.
  auto check = [&](const std::string& name, const float* p, size_t rows, size_t width,
                   const char* column = "column", size_t per_sequence = 0, size_t first = 0) {
    if (per_sequence == 0) per_sequence = static_cast<size_t>(T);
    if (!where.empty() || width == 0) return;
    const long long i = first_non_finite(p, rows * width);
    if (i < 0) return;
    const size_t row = static_cast<size_t>(i) / width, col = static_cast<size_t>(i) % width;
    const float x = p[i];
    std::string at = "token " + std::to_string(first + row % per_sequence);
    if (a.B > 1) at = "sequence " + std::to_string(row / per_sequence) + ", " + at;
    where = name + ": value overflows float32 (" +
            (std::isnan(x) ? std::string("nan")
             : x > 0       ? "inf"
                           : "-inf") +
            " at " + at + ", " + column + " " + std::to_string(col) + ")";
  };
  const auto C = static_cast<size_t>(c.n_embd), F = static_cast<size_t>(c.mlp_size()),
             W = static_cast<size_t>(c.qkv_width()), Q = static_cast<size_t>(c.q_dim());
  // The tensors by the names the folder's own code gives them.
  const bool llama = c.llama_family();
  const char* norm1 = llama ? "input_layernorm output" : "ln_1 output";
  const char* qkv_name = llama ? "attention q/k/v_proj output (Q, K, V after RoPE)"
                               : "attention c_attn output (Q, K, V)";
  const char* proj = llama ? "attention o_proj output" : "attention c_proj output";
  const char* norm2 = llama ? "post_attention_layernorm output" : "ln_2 output";
  const char* fc = llama ? "mlp gate_proj output" : "mlp c_fc output";
  const char* act = llama ? "mlp silu(gate) ⊙ up output" : "mlp GELU output";
  const char* down = llama ? "mlp down_proj output" : "mlp c_proj output";
  check(llama ? "the embeddings (embed_tokens)" : "the embeddings (wte + wpe)", a.encoded.data(),
        BT, C);
  const bool mlp = !a.fch.empty();
  for (int l = 0; l < c.n_layer && where.empty(); ++l) {
    const size_t o = static_cast<size_t>(l) * BT;
    const std::string L = "layer " + std::to_string(l) + ", ";
    check(L + norm1, a.ln1.data() + o * C, BT, C);
    check(L + qkv_name, a.qkv.data() + o * W, BT, W);
    if (where.empty()) {  // the weights are (B, NH, T, T): name the head and the query
      const float* w = a.att.data() + o * NH * T;
      const long long i = first_non_finite(w, BT * NH * T);
      if (i >= 0) {
        const size_t t2 = static_cast<size_t>(i) % T, rest = static_cast<size_t>(i) / T;
        const size_t t = rest % T, h = (rest / T) % NH;
        where = L + "attention weights (softmax of Q·Kᵀ/√d): value overflows float32 (" +
                (std::isnan(w[i]) ? std::string("nan") : "inf") + " at head " + std::to_string(h) +
                ", query " + std::to_string(t) + ", key " + std::to_string(t2) + ")";
      }
    }
    check(L + "attention output (weights · V)", a.atty.data() + o * Q, BT, Q);
    check(L + proj, a.attproj.data() + o * C, BT, C);
    check(L + "residual after attention", a.residual2.data() + o * C, BT, C);
    if (mlp) {
      check(L + norm2, a.ln2.data() + o * C, BT, C);
      check(L + fc, a.fch.data() + o * F, BT, F);
      if (llama) check(L + "mlp up_proj output", a.fc_up.data() + o * F, BT, F);
      check(L + act, a.fch_gelu.data() + o * F, BT, F);
      check(L + down, a.fcproj.data() + o * C, BT, C);
    }
    check(L + "residual after the MLP", a.residual3.data() + o * C, BT, C);
  }
  check(llama ? "model.norm output" : "ln_f output", a.lnf.data(), BT, C);
  check("the logits", a.logits.data(), static_cast<size_t>(a.B) * a.logits_T,
        static_cast<size_t>(c.vocab_size), "vocabulary id", static_cast<size_t>(a.logits_T),
        static_cast<size_t>(T - a.logits_T));
  return where;
}

std::string checked_forward(const Model& model, const std::vector<int>& tokens, int B, int T,
                            Activations& a, const ForwardOptions& options, double extra_bytes) {
  ForwardOptions o = options;
  o.mlp = options.mlp && model.mlp;
  if (std::string e = check_forward_size(model.config, B, T, o, extra_bytes); !e.empty()) return e;
  gpt_forward(model, tokens, B, T, a, o);
  return check_forward_finite(model.config, a);
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

#define ATTN_LM_FORWARD(S)                                                                         \
  template void encoder_forward<S>(const S*, const S*, const int*, int, int, int, S*);             \
  template void layernorm_forward<S>(const S*, const S*, const S*, int, int, S, S*, S*, S*);       \
  template void matmul_forward<S>(const S*, const S*, const S*, int, int, int, S*, int);           \
  template void attend_head<S>(const S*, int64_t, const S*, const S*, int64_t, int, int, int, int, \
                               int, int, S*, int64_t, S*, RowMatrix<S>&);                          \
  template void attention_forward<S>(const S*, int, int, int, int, int, int, S*, S*, int);         \
  template void gelu_forward<S>(const S*, size_t, S*, int);                                        \
  template void residual_forward<S>(const S*, const S*, size_t, S*);                               \
  template void logits_forward<S>(const S*, const S*, int, int, int, S*, int);                     \
  template void gpt_forward<S>(const ParameterBuffer<S>&, const std::vector<int>&, int, int,       \
                               ActivationsT<S>&, const ForwardOptions&);
ATTN_LM_FORWARD(float)
ATTN_LM_FORWARD(double)
#undef ATTN_LM_FORWARD

}  // namespace attn::lm
