// The attention variants beyond masks (cli.md, "Variants beyond masks"): Linformer's projections of
// the keys and values, and Multi-Token Attention's key–query convolution and head mixing. Each is
// empty when unused; the staged CPU engine computes them (attention/variant_stages.h).
#pragma once

#include "attention/matrix.h"

namespace attn {

// Linformer (Wang et al., 2020): K̃ = E·K and Ṽ = F·V per key/value head, so every query
// attends to k "virtual keys", mixtures of the n_k positions.
struct LinformerSpec {
  HeadStack e, f;  // both empty, or 1 (shared) or H_kv matrices (k, n_k) each
  bool enabled() const { return !e.empty() || !f.empty(); }
  int k() const { return e.empty() ? 0 : static_cast<int>(e[0].rows()); }
  // E (or F) of key/value head g.
  const Matrix& e_of(int g) const { return e[e.size() == 1 ? 0 : static_cast<size_t>(g)]; }
  const Matrix& f_of(int g) const { return f[f.size() == 1 ? 0 : static_cast<size_t>(g)]; }
};

// Multi-Token Attention (Golovneva et al., 2025).
struct MultiTokenSpec {
  // Pre-softmax key–query convolution: empty, 1 (shared) or H kernels θ of shape (c_q, c_k).
  HeadStack kq_conv;
  // Post-softmax head mixing: empty, or G matrices (c_h, c_h) with G·c_h = H.
  HeadStack head_mix;
  const Matrix& kernel_of(int h) const {
    return kq_conv[kq_conv.size() == 1 ? 0 : static_cast<size_t>(h)];
  }
  int mix_group_size() const { return head_mix.empty() ? 0 : static_cast<int>(head_mix[0].rows()); }
};

struct VariantSpec {
  LinformerSpec linformer;
  MultiTokenSpec multi_token;
  bool any() const {
    return linformer.enabled() || !multi_token.kq_conv.empty() || !multi_token.head_mix.empty();
  }
};

}  // namespace attn
