// Attention rollout (rollout.h): averaged heads, the residual as ½·I, renormalised rows, products.
#include "lm/rollout.h"

namespace attn::lm {

namespace {

// A'_l: the heads' mean weights of layer l, plus ½·I, rows renormalised.
MatrixD residual_attention(const Config& c, const Activations& acts, int l, int b) {
  const int T = acts.T;
  MatrixD a = MatrixD::Zero(T, T);
  for (int h = 0; h < c.n_head; ++h) {
    const float* att = acts.att_at(c, l, b, h);
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) a(i, j) += att[static_cast<size_t>(i) * T + j];
  }
  a /= c.n_head;
  a = 0.5 * a + 0.5 * MatrixD::Identity(T, T);
  for (int i = 0; i < T; ++i) {
    const double s = a.row(i).sum();
    if (s > 0) a.row(i) /= s;
  }
  return a;
}

}  // namespace

std::vector<std::vector<double>> rollout_of_token(const Config& c, const Activations& acts, int t,
                                                  int b) {
  std::vector<MatrixD> layers;
  for (int l = 0; l < c.n_layer; ++l) layers.push_back(residual_attention(c, acts, l, b));
  std::vector<std::vector<double>> out;
  for (int depth = 0; depth < c.n_layer; ++depth) {
    // e_tᵀ · A'_depth · … · A'_0
    Eigen::RowVectorXd v = Eigen::RowVectorXd::Zero(acts.T);
    v[t] = 1.0;
    for (int l = depth; l >= 0; --l) v = v * layers[static_cast<size_t>(l)];
    out.emplace_back(v.data(), v.data() + v.size());
  }
  return out;
}

Rollout attention_rollout(const Config& c, const Activations& acts, int b) {
  Rollout r;
  r.n_layer = c.n_layer;
  r.T = acts.T;
  for (int l = 0; l < c.n_layer; ++l) {
    MatrixD a = residual_attention(c, acts, l, b);
    r.cumulative.push_back(l == 0 ? a : MatrixD(a * r.cumulative.back()));
    r.layer.push_back(std::move(a));
  }
  return r;
}

int receptive_field(const Rollout& r, int l, int t, double threshold) {
  int n = 0;
  const MatrixD& m = r.cumulative[static_cast<size_t>(l)];
  for (int j = 0; j < r.T; ++j) n += m(t, j) >= threshold ? 1 : 0;
  return n;
}

}  // namespace attn::lm
