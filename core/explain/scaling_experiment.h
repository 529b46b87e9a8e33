// Why attention divides by √d_k (Vaswani et al., 2017, footnote 4): q and k drawn from N(0, 1) give
// dot products whose variance is d_k, so without the division a softmax row over such scores turns
// one-hot as d_k grows and its gradient vanishes. This experiment computes that, for
// `attention-lab experiment sqrt-dk` and the app's "Why √d_k" window.
#pragma once

#include <cstdint>
#include <vector>

namespace attn {

struct ScalingRequest {
  uint32_t seed = 1;
  int samples = 4000;  // q·k pairs per d_k for the variance and the histograms
  int rows = 200;      // softmax rows per d_k
  int keys = 8;        // keys per softmax row
  int bins = 41;       // histogram bins over [−range, range]
};

struct Histogram {
  double range = 1;         // the bins cover [−range, range]; values outside go to the end bins
  std::vector<int> counts;  // bins
};

struct ScalingRow {
  int d_k = 0;
  double mean_dot = 0, var_dot = 0;        // of q·k, sample mean and variance (≈ 0 and d_k)
  double mean_scaled = 0, var_scaled = 0;  // of q·k / √d_k (≈ 0 and 1)
  Histogram dot, scaled;                   // on the same axis: range = 4·max(√d_k, 1)
  // One softmax row of `keys` scores, averaged over `rows` rows: the largest weight (1 is
  // one-hot) and the Frobenius norm of the softmax's Jacobian diag(p) − p pᵀ (0 when one-hot:
  // no gradient flows back to the scores).
  double max_weight_dot = 0, max_weight_scaled = 0;
  double jacobian_dot = 0, jacobian_scaled = 0;
  std::vector<double> example_dot, example_scaled;  // the first row's weights, both ways
};

// d_k = 2, 4, 8, …, 1024.
std::vector<int> scaling_dims();

// One row per d_k in `dims` (default: scaling_dims()), drawn from the request's seed.
std::vector<ScalingRow> run_scaling_experiment(const ScalingRequest& r,
                                               const std::vector<int>& dims = scaling_dims());

}  // namespace attn
