// GRU cell forward and backward over a batch (see gru.h for the equations).
#include "seq2seq/gru.h"

#include <cassert>

namespace attn::s2s {

namespace {
template <typename T>
Mat<T> sigmoid(const Mat<T>& a) {
  return (T(1) / (T(1) + (-a.array()).exp())).matrix();
}
}  // namespace

template <typename T>
Mat<T> gru_forward(const GruParams<T>& p, const Mat<T>& x, const Mat<T>& h, const Mat<T>* mask,
                   GruCache<T>& c) {
  const Eigen::Index hs = h.cols();
  assert(p.wx.rows() == x.cols() && p.wh.rows() == hs && p.wh.cols() == 3 * hs);
  Mat<T> gx = x * p.wx;
  gx.rowwise() += p.b.row(0);
  const Mat<T> gh = h * p.wh.leftCols(2 * hs);
  c.x = x;
  c.h_prev = h;
  c.z = sigmoid<T>(gx.leftCols(hs) + gh.leftCols(hs));
  c.r = sigmoid<T>(gx.middleCols(hs, hs) + gh.rightCols(hs));
  c.rh = c.r.cwiseProduct(h);
  c.n = (gx.rightCols(hs) + c.rh * p.wh.rightCols(hs)).array().tanh().matrix();
  Mat<T> out = ((T(1) - c.z.array()) * c.n.array() + c.z.array() * h.array()).matrix();
  if (mask) {
    c.mask = *mask;
    const auto m = mask->col(0).array();
    for (Eigen::Index b = 0; b < out.rows(); ++b)
      if (m(b) == T(0)) out.row(b) = h.row(b);
  } else {
    c.mask.resize(0, 0);
  }
  return out;
}

template <typename T>
void gru_backward(const GruParams<T>& p, const GruCache<T>& c, const Mat<T>& dh_new,
                  GruParams<T>& grad, Mat<T>& dx, Mat<T>& dh_prev) {
  const Eigen::Index hs = c.h_prev.cols();
  Mat<T> dhg = dh_new;
  dh_prev = Mat<T>::Zero(dh_new.rows(), hs);
  if (c.mask.size() > 0) {
    for (Eigen::Index b = 0; b < dhg.rows(); ++b)
      if (c.mask(b, 0) == T(0)) {
        dh_prev.row(b) = dh_new.row(b);
        dhg.row(b).setZero();
      }
  }
  const auto z = c.z.array();
  const auto n = c.n.array();
  const auto r = c.r.array();
  Mat<T> dg(dhg.rows(), 3 * hs);
  // n branch, then z, then r through (r ⊙ h) Wh_n.
  dg.rightCols(hs) = (dhg.array() * (T(1) - z) * (T(1) - n * n)).matrix();
  dg.leftCols(hs) = (dhg.array() * (c.h_prev.array() - n) * z * (T(1) - z)).matrix();
  dh_prev.array() += dhg.array() * z;
  const Mat<T> drh = dg.rightCols(hs) * p.wh.rightCols(hs).transpose();
  dg.middleCols(hs, hs) = (drh.array() * c.h_prev.array() * r * (T(1) - r)).matrix();
  dh_prev.array() += drh.array() * r;

  grad.wx.noalias() += c.x.transpose() * dg;
  grad.b += dg.colwise().sum();
  dx = dg * p.wx.transpose();
  grad.wh.leftCols(2 * hs).noalias() += c.h_prev.transpose() * dg.leftCols(2 * hs);
  grad.wh.rightCols(hs).noalias() += c.rh.transpose() * dg.rightCols(hs);
  dh_prev.noalias() += dg.leftCols(2 * hs) * p.wh.leftCols(2 * hs).transpose();
}

template Mat<float> gru_forward(const GruParams<float>&, const Mat<float>&, const Mat<float>&,
                                const Mat<float>*, GruCache<float>&);
template Mat<double> gru_forward(const GruParams<double>&, const Mat<double>&, const Mat<double>&,
                                 const Mat<double>*, GruCache<double>&);
template void gru_backward(const GruParams<float>&, const GruCache<float>&, const Mat<float>&,
                           GruParams<float>&, Mat<float>&, Mat<float>&);
template void gru_backward(const GruParams<double>&, const GruCache<double>&, const Mat<double>&,
                           GruParams<double>&, Mat<double>&, Mat<double>&);

}  // namespace attn::s2s
