// Why an attention head's key wins: the score q·k/√d_k of query t and key j split exactly into
// what each part of the residual stream at position j put into the key — the token's embedding,
// its position, each earlier head's output, each earlier MLP, and the constant biases. This is
// how an induction head is explained (Elhage et al. 2021, K-composition): the layer-1 head's
// winning key gets its score from what a layer-0 head wrote there, the previous token's identity.
#pragma once

#include <string>
#include <vector>

#include "lm/forward.h"

namespace attn::lm {

struct ScorePart {
  std::string name;  // "token embedding", "position" (GPT-2), "L0H2 output", "L0 MLP", "biases"
  int layer = -1, head = -1;  // for a head's output; -1 otherwise
  double value = 0;           // its share of the scaled score
};

// The parts of head (layer, head)'s scaled score q_t·k_j/√hs on sequence 0 (0 ≤ key ≤ query < T).
// GPT-2: the key is c_attn applied to ln_1 of the residual stream x_j; with ln_1's mean and 1/σ of
// x_j held at their values, ln_1 is linear in x_j, so each part p of x_j contributes
// q_t·((p − mean(p))·rstd_j ⊙ γ · W_K)/√hs, and ln_1's β and c_attn's biases the constant.
// The Llama family: the key is RoPE_j(RMSNorm(x_j)·W_Kᵀ) of the head's K/V head; with 1/rms of x_j
// held, each part p contributes q_t·RoPE_j(p·rstd_j ⊙ g · W_Kᵀ)/√hs (the rotation is linear), and
// there is no position part (RoPE is the position); Qwen2's k bias, rotated, is the constant
// ("biases", absent without it). The parts sum to the score (to rounding).
std::vector<ScorePart> key_score_parts(const Model& m, const Activations& a, int layer, int head,
                                       int query, int key);

// The scaled score q_t·k_j/√hs of head (layer, head) on sequence 0, from the activations.
double head_score(const Config& c, const Activations& a, int layer, int head, int query, int key);

}  // namespace attn::lm
