// What the gradient checks of the two hand-written backward passes share (test_lm_grad.cpp for
// GPT-2, test_llama_grad.cpp for the Llama family): random parameters with no gradient trivially
// zero, a small batch whose last target is padding, and the central difference of the loss.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "lm/backward.h"
#include "lm/model.h"

namespace attn::test {

// Random values in every tensor (the norms' weights around 1), so that no gradient is trivially
// zero.
template <typename S>
lm::ParameterBuffer<S> random_params(const lm::Config& c, uint64_t seed) {
  lm::ParameterBuffer<S> p;
  p.allocate(c);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-0.7, 0.7);
  for (int pi = 0; pi < lm::kNumParams; ++pi) {
    const auto t = static_cast<lm::Param>(pi);
    const bool norm = t == lm::kLn1W || t == lm::kLn2W || t == lm::kLnfW;
    S* x = p.ptr(t);
    for (size_t i = 0; i < p.count[t]; ++i) x[i] = static_cast<S>((norm ? 1.0 : 0.0) + u(rng));
  }
  return p;
}

// Two sequences of 6 tokens; the last target of the second is −1 (no loss), as padding would be.
inline const std::vector<int> kGradTokens = {1, 4, 2, 8, 4, 2, 0, 3, 3, 7, 5, 6};
inline const std::vector<int> kGradTargets = {4, 2, 8, 4, 2, 5, 3, 3, 7, 5, 6, -1};
constexpr int kGradB = 2, kGradT = 6;

// (loss(x + eps) − loss(x − eps)) / 2eps for element i of tensor t, which is left as it was.
template <typename Loss>
double central_difference(lm::ParameterBuffer<double>& p, lm::Param t, size_t i, Loss loss,
                          double eps = 1e-6) {
  double& x = p.ptr(t)[i];
  const double keep = x;
  x = keep + eps;
  const double up = loss(p);
  x = keep - eps;
  const double down = loss(p);
  x = keep;
  return (up - down) / (2 * eps);
}

// The next-token loss of the batch, summed over its counted targets, from the logits the forward
// pass kept (logits, (B·T, V)): a plain double-precision loop, so a central difference of it
// needs no backward pass and does not read the loss from the code under test.
inline double next_token_loss(const lm::ActivationsT<double>& a, int vocab_size) {
  double loss = 0;
  for (size_t n = 0; n < kGradTargets.size(); ++n) {
    if (kGradTargets[n] < 0) continue;
    const double* z = a.logits.data() + n * vocab_size;
    double mx = z[0], sum = 0;
    for (int i = 1; i < vocab_size; ++i) mx = std::max(mx, z[i]);
    for (int i = 0; i < vocab_size; ++i) sum += std::exp(z[i] - mx);
    loss += std::log(sum) + mx - z[kGradTargets[n]];
  }
  return loss;
}

// The attention-shaping term (lm/backward.h's PreviousTokenShaping) of a batch of kGradB × kGradT,
// computed here from the weights the forward pass kept (att, (L,B,NH,T,T)): scale times the sum of
// −ln w(t, t−1) of the shaped head over every sequence's positions t ≥ 1.
inline double shaping_term(const lm::ActivationsT<double>& a, int n_head,
                           const lm::PreviousTokenShaping& s) {
  const size_t T = kGradT;
  double sum = 0;
  for (int b = 0; b < kGradB; ++b) {
    const size_t block = (static_cast<size_t>(s.layer) * kGradB + b) * n_head + s.head;
    for (size_t t = 1; t < T; ++t) sum -= std::log(a.att[block * T * T + t * T + t - 1]);
  }
  return s.scale * sum;
}

}  // namespace attn::test
