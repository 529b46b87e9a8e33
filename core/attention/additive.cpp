// The additive score (additive.h), computed per block of query rows as the engine's other stages.
#include "attention/additive.h"

#include <cmath>
#include <sstream>

namespace attn {

void additive_scores(const AdditiveScore& a, const Matrix& q, int i0, int rows, const Matrix& k,
                     Matrix& out) {
  const Eigen::Index n_k = k.rows(), d_a = a.v.size();
  // (rows, d_a) and (n_k, d_a): each query and key projected once, then every pair combined.
  const Matrix qa = q.middleRows(i0, rows) * a.w_q.transpose();
  const Matrix ka = k * a.w_k.transpose();
  out.resize(rows, n_k);
  Matrix sum(n_k, d_a);
  for (Eigen::Index r = 0; r < rows; ++r) {
    sum = ka.rowwise() + qa.row(r);
    out.row(r).noalias() = (sum.array().tanh().matrix() * a.v.transpose()).transpose();
  }
}

std::string validate_additive(const AdditiveScore& a, int d_k) {
  std::ostringstream s;
  const Eigen::Index d_a = a.v.size();
  if (d_a < 1) return "additive v is empty; expected d_a >= 1 values";
  for (const auto& [m, name] : {std::pair<const Matrix*, const char*>{&a.w_q, "W_q"},
                                std::pair<const Matrix*, const char*>{&a.w_k, "W_k"}}) {
    if (m->rows() != d_a || m->cols() != d_k) {
      s << "additive " << name << " has shape (" << m->rows() << ", " << m->cols()
        << "); expected (d_a, d_k) = (" << d_a << ", " << d_k << ") (d_a from v, d_k from Q)";
      return s.str();
    }
    for (Eigen::Index i = 0; i < m->size(); ++i)
      if (!std::isfinite(m->data()[i])) {
        s << "additive " << name << "[" << i / m->cols() << ", " << i % m->cols() << "] is "
          << m->data()[i] << "; expected a finite number";
        return s.str();
      }
  }
  for (Eigen::Index i = 0; i < d_a; ++i)
    if (!std::isfinite(a.v[i])) {
      s << "additive v[" << i << "] is " << a.v[i] << "; expected a finite number";
      return s.str();
    }
  return "";
}

}  // namespace attn
