// Adam with bias correction and global-norm clipping (see adam.h).
#include "seq2seq/adam.h"

#include <cmath>

namespace attn::s2s {

namespace {
std::vector<Mat<float>*> list(Params<float>& p) {
  std::vector<Mat<float>*> out;
  p.visit([&out](const char*, Mat<float>& m) { out.push_back(&m); });
  return out;
}
}  // namespace

double Adam::step(Params<float>& params, const Params<float>& grad) {
  if (steps == 0) {
    m = params.zeros_like();
    v = params.zeros_like();
  }
  ++steps;
  Params<float> g = grad;
  auto P = list(params), G = list(g), M = list(m), V = list(v);
  double norm2 = 0;
  for (auto* x : G) norm2 += static_cast<double>(x->squaredNorm());
  const double norm = std::sqrt(norm2);
  const float factor = clip > 0 && norm > clip ? static_cast<float>(clip / norm) : 1.0f;
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const double c1 = 1.0 - std::pow(beta1, static_cast<double>(steps));
  const double c2 = 1.0 - std::pow(beta2, static_cast<double>(steps));
  const float step_size = static_cast<float>(lr * std::sqrt(c2) / c1);
  const float e = static_cast<float>(eps);
  for (size_t k = 0; k < P.size(); ++k) {
    const auto gk = (G[k]->array() * factor).eval();
    M[k]->array() = b1 * M[k]->array() + (1 - b1) * gk;
    V[k]->array() = b2 * V[k]->array() + (1 - b2) * gk.square();
    P[k]->array() -= step_size * M[k]->array() / (V[k]->array().sqrt() + e);
  }
  return norm;
}

}  // namespace attn::s2s
