// Adam (Kingma & Ba 2015) over a model's parameters, with global-norm gradient clipping.
#pragma once

#include "seq2seq/model.h"

namespace attn::s2s {

struct Adam {
  double lr = 3e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double clip = 5.0;  // global gradient norm cap (0 = none); keeps early BPTT steps stable
  long steps = 0;
  Params<float> m, v;

  // Applies one update; returns the gradient norm before clipping.
  double step(Params<float>& params, const Params<float>& grad);
};

}  // namespace attn::s2s
