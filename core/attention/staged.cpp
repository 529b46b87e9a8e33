// The staged CPU computation: each stage of attention with Eigen, head by head, in float, every
// stage kept for the trace; and the masked row softmax every CPU path shares.
#include <cmath>
#include <limits>

#include "attention/engine.h"
#include "attention/mask.h"

namespace attn {

void compute_stages_cpu(const AttentionProblem& p, AttentionTrace& t) {
  const int H = p.input.num_heads();
  const float scale = p.effective_scale();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  TraceStep scores{"scores", "", "", {}, {}}, scaled = scores, masked = scores, weights = scores,
                                              output = scores;
  t.hidden.assign(H, {});
  t.empty_row.assign(H, {});
  for (int h = 0; h < H; ++h) {
    const int g = p.input.kv_head_of(h);
    const Matrix& Q = p.input.q[h];
    const Matrix& K = p.input.k[g];
    const Matrix& V = p.input.v[g];
    Matrix S = Q * K.transpose();  // (n_q, n_k)
    Matrix Sc = S * scale;         // (n_q, n_k)
    Matrix M = Sc;
    if (const Matrix* bias = mask_for_head(p.options.mask.bias, h)) M += *bias;
    ReasonMatrix hidden = build_reasons(p, h);
    for (Eigen::Index i = 0; i < M.rows(); ++i)
      for (Eigen::Index j = 0; j < M.cols(); ++j)
        if (hidden(i, j)) M(i, j) = neg_inf;
    Matrix W;
    masked_softmax_rows(M, hidden, p.options.temperature, W, t.empty_row[h]);
    Matrix O = W * V;  // (n_q, d_v)
    scores.heads.push_back(std::move(S));
    scaled.heads.push_back(std::move(Sc));
    masked.heads.push_back(std::move(M));
    weights.heads.push_back(std::move(W));
    output.heads.push_back(std::move(O));
    t.hidden[h] = std::move(hidden);
    for (TraceStep* s : {&scores, &scaled, &masked, &weights, &output}) s->kv_head.push_back(g);
  }
  scaled.id = "scaled";
  masked.id = "masked";
  weights.id = "weights";
  output.id = "output";
  for (TraceStep* s : {&scores, &scaled, &masked, &weights, &output})
    t.steps.push_back(std::move(*s));
}

void masked_softmax_rows(const Matrix& logits, const ReasonMatrix& hidden, float temperature,
                         Matrix& weights, std::vector<bool>& empty_row) {
  const Eigen::Index n_q = logits.rows(), n_k = logits.cols();
  weights.setZero(n_q, n_k);
  empty_row.assign(static_cast<size_t>(n_q), false);
  const float inv_t = 1.0f / temperature;
  Eigen::Matrix<float, 1, Eigen::Dynamic> x(n_k);
  for (Eigen::Index i = 0; i < n_q; ++i) {
    // x is computed once and used for both the max and the exponentials: recomputing it lets
    // the compiler fuse one of the two into an FMA, and at large logits/T the rounding
    // difference against the max becomes exp(huge) = inf and then NaN.
    x = logits.row(i) * inv_t;
    float m = -std::numeric_limits<float>::infinity();
    for (Eigen::Index j = 0; j < n_k; ++j)
      if (!hidden(i, j)) m = std::max(m, x(j));
    if (m == -std::numeric_limits<float>::infinity()) {  // every key hidden: weights stay 0
      empty_row[static_cast<size_t>(i)] = true;
      continue;
    }
    double sum = 0.0;
    for (Eigen::Index j = 0; j < n_k; ++j) {
      if (hidden(i, j)) continue;
      float e = std::exp(x(j) - m);
      weights(i, j) = e;
      sum += e;
    }
    weights.row(i) /= static_cast<float>(sum);
  }
}

}  // namespace attn
