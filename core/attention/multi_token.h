// Multi-Token Attention (Golovneva et al., 2025), exactly as cli.md defines it: the
// pre-softmax key–query convolution of the score map, so neighbouring queries and keys shape each
// weight, and the post-softmax mixing of the weights of groups of heads.
#pragma once

#include <string>

#include "attention/attention.h"

namespace attn {

// "" or a message naming the field, head and shape: kq_conv 1 or H kernels of one shape
// (c_q, c_k), c_q, c_k >= 1; head_mix G matrices (c_h, c_h) with G·c_h = H; all finite; no
// convolution over Linformer's projected keys (they have no order).
std::string validate_multi_token(const AttentionProblem& p);

// C[i, j] = Σ_{a<c_q} Σ_{b<c_k} θ[a, b] · S0[i − a, j − b + ⌊c_k/2⌋], terms outside S0 being 0.
Matrix kq_convolve(const Matrix& s0, const Matrix& theta);

// The key–query cell (row, column) of S0 that kernel entry θ[a, b] multiplies for cell (i, j)
// (may be outside the matrix).
inline int conv_source_row(int i, int a) { return i - a; }
inline int conv_source_col(int j, int b, int c_k) { return j - b + c_k / 2; }

// The weights of head g·c_h + a become Σ_b M[g, a, b] · weights[g·c_h + b].
HeadStack mix_heads(const HeadStack& weights, const HeadStack& mix);

}  // namespace attn
