// A GRU cell (Cho et al. 2014) over a batch, forward and backward, with a per-row mask that keeps
// the state of finished (padded) sequences unchanged.
#pragma once

#include "seq2seq/tensor.h"

namespace attn::s2s {

// Gates are laid out [z r n] along the columns: z = σ(x Wx_z + h Wh_z + b_z),
// r = σ(x Wx_r + h Wh_r + b_r), n = tanh(x Wx_n + (r ⊙ h) Wh_n + b_n), h' = (1 − z) ⊙ n + z ⊙ h.
// The reset gate acts on h before the product, as in Cho et al.'s original formulation.
template <typename T>
struct GruParams {
  Mat<T> wx;  // (in, 3h)
  Mat<T> wh;  // (h, 3h)
  Mat<T> b;   // (1, 3h)
};

// What the backward pass needs from one forward step (B rows).
template <typename T>
struct GruCache {
  Mat<T> x, h_prev, z, r, n, rh;
  Mat<T> mask;  // (B, 1) with 1 = this row advances; empty = every row advances
};

// One step: returns h' (B, h); fills `cache`.
template <typename T>
Mat<T> gru_forward(const GruParams<T>& p, const Mat<T>& x, const Mat<T>& h, const Mat<T>* mask,
                   GruCache<T>& cache);

// Given dL/dh', accumulates parameter gradients into `grad` and returns dL/dx and dL/dh.
template <typename T>
void gru_backward(const GruParams<T>& p, const GruCache<T>& cache, const Mat<T>& dh_new,
                  GruParams<T>& grad, Mat<T>& dx, Mat<T>& dh_prev);

}  // namespace attn::s2s
