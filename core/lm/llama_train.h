// Training a Llama-family model: the forward pass over the flat parameter buffer (lm/model.h's
// ParamLayout for a Llama config) and its hand-written backward pass, one function per layer kind
// as GPT-2's (lm/backward.h) — RMSNorm, rotate-half RoPE, SwiGLU; the attention is GPT-2's own
// attention_forward/backward, which read grouped K/V heads and a sliding window — templates on the
// scalar: float for training, double for the finite-difference checks. The output head is tied
// to the embedding. The trained weights become the inference model's (lm/llama_forward.h) with
// llama_weights_from_params, so evaluation, saving and every view read the same numbers. Shape
// letters as in lm/forward.h, with NKV the K/V heads, W = (NH + 2·NKV)·hs the width of Q | K | V
// and F the SwiGLU width.
#pragma once

#include <vector>

#include "lm/backward.h"

namespace attn::lm {

// ---- one function per layer kind ----
// dinp (N,C) += ∂/∂inp of out = inp·rstd ⊙ weight; dweight (C) +=. Reads the rstd the forward
// kept (rmsnorm_forward in lm/llama_forward.h).
template <typename S>
void rmsnorm_backward(S* dinp, S* dweight, const S* dout, const S* inp, const S* weight,
                      const S* rstd, int N, int C);
// SwiGLU: gate_up (N, 2F) rows gate | up → out (N,F) = silu(gate) ⊙ up.
template <typename S>
void swiglu_forward(const S* gate_up, int N, int F, S* out);
// dgate_up (N, 2F) = ∂/∂(gate | up) of swiglu_forward, overwritten.
template <typename S>
void swiglu_backward(S* dgate_up, const S* gate_up, const S* dout, int N, int F);

// Buffers of the training passes, reused from one step to the next.
template <typename S>
struct LlamaScratch {
  AlignedVector<S> gate_up;  // (L, B, T, 2F): the fused gate|up product the MLP's backward reads
  AlignedVector<S> dlogits, dlnf, dresidual, dln, dqkv, datty, dact, dgate_up;
};

// The whole network on B sequences of T tokens with the parameters of a Llama-family config in
// the training layout. `a` keeps what the backward pass reads: the norms' outputs and rstd, qkv
// after RoPE, att, atty, residual2, silu(gate) ⊙ up in fch_gelu, residual3, lnf and every logit;
// the fused gate|up product goes to scratch.gate_up (not fch and fc_up), and Q and K before RoPE
// are not kept. Without options.mlp the MLP blocks are skipped (they add zero when their weights
// are).
template <typename S>
void llama_train_forward(const ParameterBuffer<S>& params, const std::vector<int>& tokens, int B,
                         int T, ActivationsT<S>& a, LlamaScratch<S>& scratch,
                         const ForwardOptions& options = {});
// The backward pass after llama_train_forward, as gpt_backward: accumulates into `grad` the
// gradient of scale·(sum of the next-token losses), and of `shaping`'s term when it has one;
// returns the sum of the next-token losses.
template <typename S>
double llama_backward(const ParameterBuffer<S>& params, const ActivationsT<S>& a,
                      const std::vector<int>& targets, double scale, ParameterBuffer<S>& grad,
                      LlamaScratch<S>& scratch, const ForwardOptions& options,
                      int* counted = nullptr, const PreviousTokenShaping& shaping = {});

// The inference model's weights (m.llama, F32, tied head) from the training buffer m.params.
void llama_weights_from_params(Model& m);

}  // namespace attn::lm
