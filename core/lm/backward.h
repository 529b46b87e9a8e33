// GPT-2's backward pass, written by hand beside the forward pass (lm/forward.h) as in llm.c's
// train_gpt2.c: one function per layer kind, each reading what its forward function kept in the
// Activations, and the next-token cross-entropy that starts it. Templates on the scalar (float for
// training, double for the finite-difference checks). Shape letters as in forward.h.
#pragma once

#include <vector>

#include "lm/forward.h"

namespace attn::lm {

// ---- one function per layer kind: gradients of the loss with respect to each input ----
// dwte[tokens] += dout, dwpe[0..T) += dout (dout (B,T,C)).
template <typename S>
void encoder_backward(S* dwte, S* dwpe, const S* dout, const int* tokens, int B, int T, int C);
// dinp (N,C) += ∂/∂inp; dweight, dbias (C) +=. Reads the mean and rstd the forward kept.
template <typename S>
void layernorm_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                        const S* mean, const S* rstd, int N, int C);
// out = inp·weight + bias: dinp (N,C) = dout·weightᵀ (overwritten); dweight (C,OC) += inpᵀ·dout;
// dbias (OC) += the column sums of dout (when not null).
template <typename S>
void matmul_backward(S* dinp, S* dweight, S* dbias, const S* dout, const S* inp, const S* weight,
                     int N, int C, int OC);
// attention_forward's backward: dqkv (B,T,W) from datty (B,T,NH·hs), overwritten, using the
// weights att (B,NH,T,T): dV = attᵀ·dout, datt = dout·Vᵀ, the softmax's backward
// dscores = att ⊙ (datt − rowsum(att ⊙ datt)), dQ = dscores·K/√hs, dK = dscoresᵀ·Q/√hs; a K/V
// head's gradient sums over the query heads that read it. With shaped_head ≥ 0 the gradient of
// shape_scale·Σ −ln w(t, t−1) of that query head (PreviousTokenShaping) is added: its softmax's
// scores get shape_scale·(w(t, ·) − onehot(t−1)) at every t ≥ 1.
template <typename S>
void attention_backward(S* dqkv, const S* datty, const S* qkv, const S* att, int B, int T, int NH,
                        int NKV, int hs, int window, int shaped_head = -1, double shape_scale = 0);
// dinp (N) += gelu'(inp)·dout, the derivative of the tanh approximation.
template <typename S>
void gelu_backward(S* dinp, const S* inp, const S* dout, size_t N);
// logits = inp·wteᵀ: dinp (N,C) = dlogits·wte (overwritten); dwte (V,C) += dlogitsᵀ·inp.
template <typename S>
void logits_backward(S* dinp, S* dwte, const S* dlogits, const S* inp, const S* wte, int N, int C,
                     int V);

// Next-token cross-entropy over logits (N,V): for each row with target ≥ 0 the loss
// −log softmax(logits)[target] and dlogits = scale·(softmax − onehot(target)); rows with target
// −1 count nothing and get dlogits 0. Returns the sum of the losses.
template <typename S>
double crossentropy_backward(S* dlogits, const S* logits, const int* targets, int N, int V,
                             double scale);

// Attention shaping (lm train --shape-previous): an extra term of the loss,
// scale·Σ −ln w(t, t−1) over every sequence's positions t ≥ 1, for query head `head` of layer
// `layer` — it pulls that head toward the previous token, the first half of an induction circuit
// that a RoPE model may not otherwise form (docs/lm.md). The head's window must include the
// previous token. scale 0 (the default): no term.
struct PreviousTokenShaping {
  int layer = 0, head = 0;
  double scale = 0;
};
// The query head that `s` shapes in layer l, or −1 for none.
inline int shaped_head_of(const PreviousTokenShaping& s, int l) {
  return s.scale != 0 && l == s.layer ? s.head : -1;
}

// Buffers of the backward pass, reused from one step to the next.
template <typename S>
struct GradScratch {
  AlignedVector<S> dlogits, dlnf, dresidual, dln, dqkv, datty, dfch, dfch_gelu;
};

// The whole backward pass after gpt_forward(params, tokens, B, T, acts, options) with all logits
// and the same options (MLP or not): accumulates into `grad` (allocated like params) the gradient
// of scale·(sum of the losses), targets (B·T, −1 = no loss) being the next tokens. Returns the sum
// of the losses and sets `counted` to the number of targets ≥ 0. With `shaping`, its term's
// gradient is added too (the returned sum stays the next-token losses').
template <typename S>
double gpt_backward(const ParameterBuffer<S>& params, const ActivationsT<S>& acts,
                    const std::vector<int>& targets, double scale, ParameterBuffer<S>& grad,
                    GradScratch<S>& scratch, const ForwardOptions& options, int* counted = nullptr,
                    const PreviousTokenShaping& shaping = {});

}  // namespace attn::lm
