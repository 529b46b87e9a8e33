// What the rope step shows beyond its angles: one vector's pairs of dimensions before and after
// the rotation, and the distance view — one q and one k placed at every pair of positions, whose
// score depends on the distance between them only. All of it from rope_rotated (scenario.h).
#pragma once

#include <vector>

#include "attention/scenario.h"

namespace attn {

// Pair i of a vector's dimensions, (i, i + d_k/2), before RoPE (x0, x1) and after it (y0, y1),
// turned by angle = position · theta.
struct RopePair {
  int i = 0;
  double theta = 0, angle = 0;
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};

// Row `row` of `before` (a q_before or k_before) at position `pos`, pair by pair.
std::vector<RopePair> rope_pairs(const Matrix& before, int row, int pos,
                                 const std::vector<double>& inv_freq);

// The score of row q_row of qb placed at position pos_q and row k_row of kb placed at pos_k:
// RoPE(q, pos_q) · RoPE(k, pos_k), in double.
double rope_score(const Matrix& qb, int q_row, int pos_q, const Matrix& kb, int k_row, int pos_k,
                  const std::vector<double>& inv_freq);

// The distance view: rope_score for query position a (row) and key position b (column), both in
// [0, n). Constant along each diagonal a − b = d, since the rotation by a·θ and b·θ leaves the
// dot product turned by (a − b)·θ only.
Matrix rope_distance_scores(const Matrix& qb, int q_row, const Matrix& kb, int k_row,
                            const std::vector<double>& inv_freq, int n);

// The largest difference between a cell of `scores` and the first cell of its diagonal (a − b): 0
// up to float rounding for rope_distance_scores — the identity, checked on its own numbers.
double rope_diagonal_spread(const Matrix& scores);

}  // namespace attn
