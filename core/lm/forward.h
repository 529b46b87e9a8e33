// GPT-2's forward pass with Eigen, one function per layer kind as in llm.c's train_gpt2.c, every
// intermediate kept in one Activations struct for the backward pass beside it (lm/backward.h).
// Each function is a template on the scalar: float for inference and training, double for the
// gradient checks, the same code. Shape letters: B batch, T tokens, C channels, NH heads,
// hs = C/NH, F MLP width, V vocabulary, L layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lm/model.h"

namespace attn::lm {

// Everything the forward pass computes, for B sequences of T tokens (row-major, b outermost).
// The same struct serves every architecture; the Llama family's use is noted where it differs
// (RMSNorm keeps no mean, the MLP is SwiGLU). W = Q | K | V's width: 3C for GPT-2,
// (NH + 2·NKV)·hs for grouped-query attention (Config::qkv_width).
template <typename S>
struct ActivationsT {
  int B = 0, T = 0;
  int logits_T = 0;               // T, or 1 when only the last position's logits were asked for
  std::vector<int> tokens;        // (B, T)
  AlignedVector<S> encoded;       // (B, T, C)   wte[token] + wpe[t]; the Llama family: embed[token]
  AlignedVector<S> ln1;           // (L, B, T, C)  ln_1 / input_layernorm
  AlignedVector<S> ln1_mean;      // (L, B, T)     (empty for RMSNorm)
  AlignedVector<S> ln1_rstd;      // (L, B, T)
  AlignedVector<S> qkv;           // (L, B, T, W)  Q | K | V (after RoPE); head h at columns h·hs
  AlignedVector<S> qk_unrotated;  // (L, B, T, NH·hs + NKV·hs) Q | K before RoPE (RoPE models)
  AlignedVector<S> att;           // (L, B, NH, T, T) softmax weights (0 where masked)
  AlignedVector<S> atty;          // (L, B, T, NH·hs) the heads' outputs side by side
  AlignedVector<S> attproj;       // (L, B, T, C)
  AlignedVector<S> residual2;     // (L, B, T, C)   residual after attention
  AlignedVector<S> ln2;           // (L, B, T, C)   ln_2 / post_attention_layernorm
  AlignedVector<S> ln2_mean;      // (L, B, T)      (empty for RMSNorm)
  AlignedVector<S> ln2_rstd;      // (L, B, T)
  AlignedVector<S> fch;           // (L, B, T, F)   c_fc / gate_proj
  AlignedVector<S> fc_up;         // (L, B, T, F)   up_proj (SwiGLU only)
  AlignedVector<S> fch_gelu;      // (L, B, T, F)   GELU(c_fc) / silu(gate) ⊙ up
  AlignedVector<S> fcproj;        // (L, B, T, C)   c_proj / down_proj
  AlignedVector<S> residual3;     // (L, B, T, C)   residual after the MLP: the layer's output
  AlignedVector<S> lnf;           // (B, T, C)
  AlignedVector<S> lnf_mean;      // (B, T)
  AlignedVector<S> lnf_rstd;      // (B, T)
  AlignedVector<S> logits;        // (B, logits_T, V)

  // Which buffers a forward pass writes besides those every one does.
  struct Parts {
    bool norm_means = false;    // LayerNorm's means (GPT-2); RMSNorm has none
    bool mlp = true;            // the MLP's buffers (off: attention-only models)
    bool fc = true;             // c_fc / gate_proj kept apart (the trainer keeps gate | up itself)
    bool fc_up = false;         // SwiGLU's up_proj
    bool qk_unrotated = false;  // Q and K before RoPE (the app's views)
  };
  // Sizes every buffer for B sequences of the T `tokens` (logits for the last logits_T
  // positions of each), and drops the parts not written (empty).
  void size_for(const Config& c, int batch, int T_, int logits_T_, const std::vector<int>& tokens_,
                const Parts& parts) {
    const int L = c.n_layer, C = c.n_embd, F = c.mlp_size();
    const size_t BT = static_cast<size_t>(batch) * T_, LBT = BT * L;
    const bool mlp = parts.mlp;
    B = batch;
    T = T_;
    logits_T = logits_T_;
    tokens = tokens_;
    encoded.resize(BT * C);
    ln1.resize(LBT * C);
    ln1_mean.resize(parts.norm_means ? LBT : 0);
    ln1_rstd.resize(LBT);
    qkv.resize(LBT * c.qkv_width());
    qk_unrotated.resize(parts.qk_unrotated ? LBT * (c.q_dim() + c.kv_dim()) : 0);
    att.resize(LBT * c.n_head * T_);
    atty.resize(LBT * c.q_dim());
    attproj.resize(LBT * C);
    residual2.resize(LBT * C);
    ln2.resize(mlp ? LBT * C : 0);
    ln2_mean.resize(mlp && parts.norm_means ? LBT : 0);
    ln2_rstd.resize(mlp ? LBT : 0);
    fch.resize(mlp && parts.fc ? LBT * F : 0);
    fc_up.resize(mlp && parts.fc_up ? LBT * F : 0);
    fch_gelu.resize(mlp ? LBT * F : 0);
    fcproj.resize(mlp ? LBT * C : 0);
    residual3.resize(LBT * C);
    lnf.resize(BT * C);
    lnf_mean.resize(parts.norm_means ? BT : 0);
    lnf_rstd.resize(BT);
    logits.resize(static_cast<size_t>(batch) * logits_T_ * c.vocab_size);
  }

  // Attention weights of layer l, sequence b, head h: a (T, T) row-major block.
  const S* att_at(const Config& c, int l, int b, int h) const {
    return att.data() + ((static_cast<size_t>(l) * B + b) * c.n_head + h) * T * T;
  }
  // Q, K and V of layer l, sequence b: (T, W) rows.
  const S* qkv_at(const Config& c, int l, int b) const {
    return qkv.data() + (static_cast<size_t>(l) * B + b) * T * c.qkv_width();
  }
};

using Activations = ActivationsT<float>;

struct ForwardOptions {
  bool all_logits = true;  // false: logits of the last position of each sequence only
  int threads = 0;         // 0: every core
  bool mlp = true;         // false: skip the MLP blocks (attention-only; fch… stay empty)
};

// ---- one function per layer kind (inputs first, outputs last; sizes in the shape letters) ----
// out (B,T,C) = wte[tokens] + wpe[0..T)
template <typename S>
void encoder_forward(const S* wte, const S* wpe, const int* tokens, int B, int T, int C, S* out);
// out (N,C) = (inp − mean)·rstd·weight + bias over each row; keeps mean and rstd (N) for backward.
template <typename S>
void layernorm_forward(const S* inp, const S* weight, const S* bias, int N, int C, S eps, S* out,
                       S* mean, S* rstd);
// out (N,OC) = inp (N,C) · weight (C,OC) + bias (OC) (bias may be null), on `threads` cores.
template <typename S>
void matmul_forward(const S* inp, const S* weight, const S* bias, int N, int C, int OC, S* out,
                    int threads = 0);
// One head's causal attention, the routine every forward pass runs (training, inference and the
// KV cache): n queries at positions q0.. (rows ldq apart) over m keys and values at positions
// k0.. (rows ldkv apart), all hs wide. The query at position i sees keys at j ≤ i, and i − W < j
// too when `window` W > 0. Scores q·k/√hs, softmax over the keys seen. Writes out (n rows, ldo
// apart, hs wide) and, when `att` is not null, the weights (n, m), 0 where masked; `scratch`
// holds them otherwise.
template <typename S>
void attend_head(const S* q, int64_t ldq, const S* k, const S* v, int64_t ldkv, int n, int m,
                 int q0, int k0, int hs, int window, S* out, int64_t ldo, S* att,
                 RowMatrix<S>& scratch);
// Causal attention over qkv (B,T,W), each row q | k | v with NH query heads and NKV K/V heads of
// hs (W = (NH + 2·NKV)·hs): query head h reads K/V head h / (NH/NKV), so GPT-2's multi-head
// attention is NKV = NH and grouped-query attention NKV < NH; position i sees keys j ≤ i, and
// i − window < j too when window > 0 (Mistral's sliding window). Writes the weights att
// (B,NH,T,T), 0 where masked, and out (B,T,NH·hs). The softmax's backward needs only att, so the
// scaled scores are not kept (a head's scores are in its trace, lm/head_trace.h).
template <typename S>
void attention_forward(const S* qkv, int B, int T, int NH, int NKV, int hs, int window, S* att,
                       S* out, int threads = 0);
// GPT-2's tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
template <typename S>
void gelu_forward(const S* inp, size_t N, S* out, int threads = 0);
// out = a + b
template <typename S>
void residual_forward(const S* a, const S* b, size_t N, S* out);
// out (N,V) = inp (N,C) · wteᵀ
template <typename S>
void logits_forward(const S* inp, const S* wte, int N, int C, int V, S* out, int threads = 0);

// The whole network on `tokens` (B·T ids, each in [0, V), T ≤ n_positions; asserted).
template <typename S>
void gpt_forward(const ParameterBuffer<S>& params, const std::vector<int>& tokens, int B, int T,
                 ActivationsT<S>& acts, const ForwardOptions& options = {});
// The same for a loaded model, whichever its architecture (the Llama family's in
// lm/llama_forward.h); a GPT-2 model's MLP blocks are skipped when they are all zero (Model::mlp).
void gpt_forward(const Model& model, const std::vector<int>& tokens, int B, int T,
                 Activations& acts, const ForwardOptions& options = {});

// ---- the limits around a forward pass (docs/robustness.md) ----
// The most the activations of one forward pass (and what a command keeps beside them) may take:
// 1.5 GiB. GPT-2 small (12 layers × 12 heads) reading its whole context of 1024 tokens with the
// logits of every position takes 1.44 GiB; a folder declaring n_positions 2^20 and given a long
// text would ask for n_layer·n_head·n² floats of attention weights alone, terabytes.
constexpr double kMaxForwardBytes = 1610612736.0;
// The bytes of gpt_forward's activations for B sequences of T tokens (options.mlp and
// options.all_logits as given), computed in double so no size overflows.
double forward_bytes(const Config& c, int B, int T, const ForwardOptions& options);
// "" when forward_bytes + extra_bytes ≤ kMaxForwardBytes, else an error with the sizes (the
// tokens, L·NH·n² attention cells, the bytes and the limit). `extra_bytes` is what the caller
// keeps beside the activations (e.g. `lm attention`'s copy of the weights).
std::string check_forward_size(const Config& c, int B, int T, const ForwardOptions& options,
                               double extra_bytes = 0);
// "" when every value the forward pass computed is finite; else where the first non-finite one
// appeared, in the order the pass computes them: "layer 0, attention c_attn output: value
// overflows float32 (inf at token 3, column 5)". Finite weights can still overflow float32
// (weights of 1e37 make Q·K infinite); nothing computed from such a pass may be shown.
std::string check_forward_finite(const Config& c, const Activations& a);
// The size check, the pass, the finiteness check: "" when the activations may be used, else the
// error (and `a` is not to be read).
std::string checked_forward(const Model& model, const std::vector<int>& tokens, int B, int T,
                            Activations& a, const ForwardOptions& options = {},
                            double extra_bytes = 0);

// Softmax of logits / temperature in double precision, as probabilities (temperature > 0).
std::vector<double> softmax_probabilities(const float* logits, int V, double temperature = 1.0);

}  // namespace attn::lm
