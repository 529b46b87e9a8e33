// The rope step's pairs and distance view, from the one rotation rope_rotated.
#include "attention/rope.h"

#include <algorithm>
#include <cmath>

namespace attn {
namespace {

double dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

}  // namespace

std::vector<RopePair> rope_pairs(const Matrix& before, int row, int pos,
                                 const std::vector<double>& inv_freq) {
  const std::vector<double> after = rope_rotated(before, row, pos, inv_freq);
  const int half = static_cast<int>(before.cols()) / 2;
  std::vector<RopePair> out;
  for (int i = 0; i < half; ++i) {
    RopePair p;
    p.i = i;
    p.theta = inv_freq[static_cast<size_t>(i)];
    p.angle = pos * p.theta;
    p.x0 = before(row, i);
    p.x1 = before(row, i + half);
    p.y0 = after[static_cast<size_t>(i)];
    p.y1 = after[static_cast<size_t>(i + half)];
    out.push_back(p);
  }
  return out;
}

double rope_score(const Matrix& qb, int q_row, int pos_q, const Matrix& kb, int k_row, int pos_k,
                  const std::vector<double>& inv_freq) {
  return dot(rope_rotated(qb, q_row, pos_q, inv_freq), rope_rotated(kb, k_row, pos_k, inv_freq));
}

Matrix rope_distance_scores(const Matrix& qb, int q_row, const Matrix& kb, int k_row,
                            const std::vector<double>& inv_freq, int n) {
  // Each vector turned once per position, then every pair's dot product (as rope_score).
  std::vector<std::vector<double>> q, k;
  for (int p = 0; p < n; ++p) {
    q.push_back(rope_rotated(qb, q_row, p, inv_freq));
    k.push_back(rope_rotated(kb, k_row, p, inv_freq));
  }
  Matrix m(n, n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      m(a, b) = static_cast<float>(dot(q[static_cast<size_t>(a)], k[static_cast<size_t>(b)]));
  return m;
}

double rope_diagonal_spread(const Matrix& s) {
  double spread = 0;
  for (Eigen::Index a = 0; a < s.rows(); ++a)
    for (Eigen::Index b = 0; b < s.cols(); ++b) {
      // Compare with the first cell of the same diagonal.
      const Eigen::Index back = std::min(a, b);
      spread = std::max(spread, static_cast<double>(std::abs(s(a, b) - s(a - back, b - back))));
    }
  return spread;
}

}  // namespace attn
