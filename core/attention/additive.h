// Bahdanau's additive score, vᵀ tanh(W_q q_i + W_k k_j), the score function the staged engine
// uses in place of the scaled dot product when AttentionOptions::additive is set.
#pragma once

#include <string>

#include "attention/attention.h"

namespace attn {

// scores(r, j) = Σ_a v_a · tanh((W_q q_{i0+r})_a + (W_k k_j)_a) for the `rows` query rows of `q`
// from i0, against every row of `k`, into `out` (resized to (rows, n_k)). Float, as the engine;
// the projections W_q q and W_k k are computed once per call.
void additive_scores(const AdditiveScore& a, const Matrix& q, int i0, int rows, const Matrix& k,
                     Matrix& out);

// "" when W_q, W_k and v fit queries and keys of width d_k and are finite, else a message
// naming the field ("additive W_q has shape (3, 4); expected (d_a, d_k) = (3, 5)").
std::string validate_additive(const AdditiveScore& a, int d_k);

}  // namespace attn
