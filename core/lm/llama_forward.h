// The Llama family's forward pass — Llama, Mistral, Qwen2 as one code path, the architecture as
// data (lm/model.h's Config): RMSNorm, rotate-half RoPE with its frequency scaling, grouped-query
// attention with an optional sliding window, SwiGLU, Qwen2's q/k/v biases, a tied or separate
// output head. Each layer is two halves around the attention, so the whole-text pass (every
// activation kept, for the trace and the app) and generation with a KV cache (lm/generate.h) run
// the same code.
#pragma once

#include <vector>

#include "lm/forward.h"

namespace attn::lm {

// RoPE's inverse frequencies, head_size / 2 of them: theta^(−2i/hs), then rope_scaling's
// (linear: divided by factor; llama3: Llama 3.1's smooth scaling of the low frequencies).
std::vector<double> rope_inv_freq(const Config& c);
// Rotates `heads` consecutive heads of hs values at x for position `pos` (rotate-half form:
// x' = x·cos + rotate_half(x)·sin, rotate_half(x) = (−x[hs/2:], x[:hs/2])); with `inverse`, by
// the opposite angle — the rotation's transpose, which is its backward pass. The angles' cosines
// and sines are computed in double for either scalar (float for the model, double for the
// gradient checks of lm/llama_train.h).
template <typename S>
void rope_rotate(S* x, int heads, int hs, const std::vector<double>& inv_freq, int pos,
                 bool inverse = false);

// out (N, C) = x / sqrt(mean(x²) + eps) ⊙ weight, row by row; rstd (N) keeps 1/sqrt(…) (may be
// null). The sum of squares is accumulated in double.
template <typename S>
void rmsnorm_forward(const S* x, const S* weight, int N, int C, double eps, S* out, S* rstd);

// Causal grouped-query attention: n queries at positions q0.., NH heads of hs (rows of q, ldq
// apart), over m keys and values at positions k0.. (NKV heads; rows ldkv apart). Query head h
// reads K/V head h / (NH / NKV); the query at position i sees keys at j ≤ i with i − W < j when
// `window` W > 0. Scores q·k/√hs. Writes out (n rows, ldo apart, NH·hs wide) and, when `att`
// is not null, the weights as (NH, n, m), 0 where masked. Each head is lm/forward.h's
// attend_head, the routine training runs too.
void gqa_attention(const float* q, int64_t ldq, const float* k, const float* v, int64_t ldkv, int n,
                   int m, int q0, int k0, int NH, int NKV, int hs, int window, float* out,
                   int64_t ldo, float* att, int threads = 0);

// One layer's intermediates for n rows (tokens), each (n, width) row-major.
struct LayerRows {
  float* ln1 = nullptr;           // (n, C)
  float* rstd1 = nullptr;         // (n)
  float* qkv = nullptr;           // (n, W) after RoPE
  float* qk_unrotated = nullptr;  // (n, q_dim + kv_dim) before RoPE, or null (not kept)
  float* atty = nullptr;          // (n, q_dim), filled by the caller's attention
  float* attproj = nullptr;       // (n, C)
  float* residual2 = nullptr;     // (n, C)
  float* ln2 = nullptr;           // (n, C)
  float* rstd2 = nullptr;         // (n)
  float* gate = nullptr;          // (n, F)
  float* up = nullptr;            // (n, F)
  float* act = nullptr;           // (n, F)  silu(gate) ⊙ up
  float* down = nullptr;          // (n, C)
  float* out = nullptr;           // (n, C)  the layer's output (residual after the MLP)
};

// The halves of layer l on n rows of the residual stream x at positions p0, p0 + 1, …:
// before the attention (norm, Q | K | V with biases, RoPE), and after it (o_proj, residual,
// norm, SwiGLU, residual). The caller runs gqa_attention between them.
void llama_layer_qkv(const Model& m, int l, const float* x, int n, int p0, const LayerRows& r,
                     const std::vector<double>& inv_freq, int threads = 0);
void llama_layer_rest(const Model& m, int l, const float* x, int n, const LayerRows& r,
                      int threads = 0);

// The whole network on B sequences of T tokens (each id in [0, vocab_size), T ≤ n_positions),
// every activation kept in `a` as gpt_forward keeps GPT-2's.
void llama_forward(const Model& m, const std::vector<int>& tokens, int B, int T, Activations& a,
                   const ForwardOptions& options = {});

}  // namespace attn::lm
