// Attention rollout (Abnar & Zuidema 2020) across a model's layers: how much each input token
// feeds each position after l layers, counting the residual connection. Per layer the heads'
// weights are averaged, A' = ½·A + ½·I (the residual: half of a position stays itself), rows
// renormalised, and the layers multiplied, R_l = A'_l · R_(l−1). One layer mixes pairs of
// tokens; two layers mix pairs of pairs — why a model has several attention layers.
#pragma once

#include <vector>

#include "attention/matrix.h"
#include "lm/forward.h"

namespace attn::lm {

struct Rollout {
  int n_layer = 0, T = 0;
  std::vector<MatrixD> layer;       // A'_l, (T, T)
  std::vector<MatrixD> cumulative;  // R_l = A'_l · … · A'_0, (T, T)
};

// The rollout of sequence b of a forward pass's attention weights.
Rollout attention_rollout(const Config& c, const Activations& acts, int b = 0);

// Row t of R_l for every depth l, by vector–matrix products (O(L²·T²), not the O(L·T³) of the
// full products): what the app shows for one token of a long text.
std::vector<std::vector<double>> rollout_of_token(const Config& c, const Activations& acts, int t,
                                                  int b = 0);

// The input tokens position `t` draws at least `threshold` of its rollout weight from after layer
// l: its receptive field at that depth.
int receptive_field(const Rollout& r, int l, int t, double threshold);

}  // namespace attn::lm
