// Multi-Token Attention's validation, key–query convolution and head mixing.
#include "attention/multi_token.h"

#include <cmath>
#include <sstream>

namespace attn {
namespace {

std::string first_non_finite(const HeadStack& st, const char* name) {
  for (size_t h = 0; h < st.size(); ++h)
    for (Eigen::Index i = 0; i < st[h].rows(); ++i)
      for (Eigen::Index j = 0; j < st[h].cols(); ++j)
        if (!std::isfinite(st[h](i, j))) {
          std::ostringstream s;
          s << name << "[" << h << ", " << i << ", " << j << "] is not a finite number";
          return s.str();
        }
  return "";
}

}  // namespace

std::string validate_multi_token(const AttentionProblem& p) {
  const MultiTokenSpec& m = p.options.variants.multi_token;
  const int H = p.input.num_heads();
  std::ostringstream s;
  if (!m.kq_conv.empty()) {
    if (p.options.variants.linformer.enabled())
      return "multi_token.kq_conv: the key–query convolution runs over keys in sequence order; "
             "Linformer's projected keys have none (use one or the other)";
    if (m.kq_conv.size() != 1 && static_cast<int>(m.kq_conv.size()) != H) {
      s << "multi_token.kq_conv has " << m.kq_conv.size()
        << " kernels; expected 1 (shared) or H = " << H;
      return s.str();
    }
    const Matrix& t0 = m.kq_conv[0];
    for (size_t h = 0; h < m.kq_conv.size(); ++h) {
      const Matrix& t = m.kq_conv[h];
      if (t.rows() < 1 || t.cols() < 1 || t.rows() != t0.rows() || t.cols() != t0.cols()) {
        s << "multi_token.kq_conv kernel " << h << " has shape (" << t.rows() << ", " << t.cols()
          << "); expected (c_q, c_k) with c_q, c_k >= 1, the same for every head";
        return s.str();
      }
    }
    const std::string e = first_non_finite(m.kq_conv, "multi_token.kq_conv");
    if (!e.empty()) return e;
  }
  if (!m.head_mix.empty()) {
    const int c = static_cast<int>(m.head_mix[0].rows());
    const int G = static_cast<int>(m.head_mix.size());
    for (int g = 0; g < G; ++g) {
      const Matrix& x = m.head_mix[static_cast<size_t>(g)];
      if (x.rows() != c || x.cols() != c || c < 1) {
        s << "multi_token.head_mix group " << g << " has shape (" << x.rows() << ", " << x.cols()
          << "); expected (c_h, c_h) = (" << c << ", " << c << "), square and the same for "
          << "every group";
        return s.str();
      }
    }
    if (G * c != H) {
      s << "multi_token.head_mix has shape (" << G << ", " << c << ", " << c << "): G·c_h = " << G
        << "·" << c << " = " << G * c << " heads, but there are H = " << H;
      return s.str();
    }
    const std::string e = first_non_finite(m.head_mix, "multi_token.head_mix");
    if (!e.empty()) return e;
  }
  return "";
}

Matrix kq_convolve(const Matrix& s0, const Matrix& theta) {
  const int n_q = static_cast<int>(s0.rows()), n_k = static_cast<int>(s0.cols());
  const int c_q = static_cast<int>(theta.rows()), c_k = static_cast<int>(theta.cols());
  Matrix c = Matrix::Zero(n_q, n_k);
  for (int a = 0; a < c_q; ++a)
    for (int b = 0; b < c_k; ++b) {
      const float w = theta(a, b);
      if (w == 0.0f) continue;
      // C[i, j] += w · S0[i − a, j − b + ⌊c_k/2⌋] over the (i, j) whose source is inside.
      const int di = -a, dj = c_k / 2 - b;
      const int i0 = std::max(0, -di), i1 = std::min(n_q, n_q - di);
      const int j0 = std::max(0, -dj), j1 = std::min(n_k, n_k - dj);
      if (i0 >= i1 || j0 >= j1) continue;
      c.block(i0, j0, i1 - i0, j1 - j0) += w * s0.block(i0 + di, j0 + dj, i1 - i0, j1 - j0);
    }
  return c;
}

HeadStack mix_heads(const HeadStack& weights, const HeadStack& mix) {
  if (mix.empty()) return weights;
  const size_t c = static_cast<size_t>(mix[0].rows());
  HeadStack out(weights.size());
  for (size_t h = 0; h < weights.size(); ++h) {
    const size_t g = h / c, a = h % c;
    out[h] = Matrix::Zero(weights[h].rows(), weights[h].cols());
    for (size_t b = 0; b < c; ++b)
      out[h] +=
          mix[g](static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) * weights[g * c + b];
  }
  return out;
}

}  // namespace attn
