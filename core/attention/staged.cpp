// The staged CPU computation: each stage of attention with Eigen for the trace, computed in blocks
// of query rows on every core (blocked products, masks by ranges, vectorised softmax rows),
// writing straight into the trace's matrices; and the masked row softmax every CPU path shares.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/additive.h"
#include "attention/engine.h"
#include "attention/mask.h"
#include "attention/parallel.h"
#include "attention/stage_memory.h"
#include "attention/variant_stages.h"

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

constexpr int kBlockRows = kStageBlockRows;

// weights[0, n) = softmax(logits / T) over the cells where hidden is 0 (hidden cells get 0);
// returns false when every cell is hidden (weights all 0). Vectorised by Eigen.
bool softmax_row(const float* logits, const uint8_t* hidden, Eigen::Index n, float inv_t,
                 float* weights) {
  Eigen::Map<RowVector> w(weights, n);
  // The scaled logits are stored once and read by both the max and the exponentials: computing
  // them twice lets the compiler fuse one into an FMA, and at large logits / T the rounding
  // difference against the max becomes exp(huge) = inf and then NaN.
  w = Eigen::Map<const RowVector>(logits, n) * inv_t;
  for (Eigen::Index j = 0; j < n; ++j) weights[j] = hidden[j] ? kNegInf : weights[j];
  const float m = w.maxCoeff();
  if (m == kNegInf) {
    w.setZero();
    return false;
  }
  w = (w.array() - m).exp();
  // Eigen's vectorised exp clamps its argument on some instruction sets, so exp(-inf) can come
  // out as a tiny positive number: hidden cells are set to exactly 0.
  for (Eigen::Index j = 0; j < n; ++j) weights[j] = hidden[j] ? 0.0f : weights[j];
  const double sum = w.cast<double>().sum();
  w /= static_cast<float>(sum);
  return true;
}

}  // namespace

namespace {

// The row blocks of every head, the work items both CPU paths share.
struct RowBlocks {
  int n_q, blocks;
  explicit RowBlocks(int n) : n_q(n), blocks((n + kBlockRows - 1) / kBlockRows) {}
  int head(int item) const { return item / blocks; }
  int first(int item) const { return (item % blocks) * kBlockRows; }
  int rows(int item) const { return std::min(kBlockRows, n_q - first(item)); }
};

// Rows of the masked stage given rows of the scaled one: the bias added, -inf where `hidden` says
// (filled here), and the softmax of each row into `weights` (may be `masked` itself). Marks the
// rows whose every key is hidden in `empty` (indexed from the block's first row).
template <typename Masked, typename Weights>
void mask_and_softmax(const AttentionProblem& p, const MaskGeometry& geo, int h, int i0,
                      Masked&& masked, Eigen::Ref<ReasonMatrix> hidden, Weights&& weights,
                      float inv_t, char* empty) {
  const Eigen::Index rows = masked.rows(), n_k = masked.cols();
  if (const Matrix* bias = mask_for_head(p.options.mask.bias, h))
    masked += bias->middleRows(i0, rows);
  fill_reason_rows(p.options.mask, geo, h, i0, i0, hidden);
  for (Eigen::Index r = 0; r < rows; ++r) {
    float* m = &masked(r, 0);
    const uint8_t* hid = &hidden(r, 0);
    for (Eigen::Index j = 0; j < n_k; ++j) m[j] = hid[j] ? kNegInf : m[j];
    empty[r] = softmax_row(m, hid, n_k, inv_t, &weights(r, 0)) ? 0 : 1;
  }
}

std::vector<std::vector<bool>> to_bools(const std::vector<std::vector<char>>& empty) {
  std::vector<std::vector<bool>> out;
  for (const auto& rows : empty) out.emplace_back(rows.begin(), rows.end());
  return out;
}

}  // namespace

void compute_stages_cpu(const AttentionProblem& p, AttentionTrace& t) {
  if (p.options.variants.any()) return compute_variant_stages_cpu(p, t);
  const int H = p.input.num_heads(), n_q = p.input.n_q(), n_k = p.input.n_k();
  const float scale = p.effective_scale();
  const float inv_t = 1.0f / p.options.temperature;
  const MaskGeometry geo = MaskGeometry::of(p);
  // weights and output are allocated once, in the trace's own steps, and the blocks write into
  // them. scores (one product per block), scaled and masked are cheap functions of Q, K and the
  // masks that the trace derives when asked (AttentionTrace::head), and the hidden cells'
  // reasons follow from the masks (AttentionTrace::hidden_of): storing them would triple a long
  // sequence's memory.
  TraceStep scores{StageId::kScores, "", "", {}, {}}, scaled = scores, masked = scores,
                                                      weights = scores, output = scores;
  scores.derived = DerivedStage::kScores;
  scaled.id = StageId::kScaled;
  scaled.derived = DerivedStage::kScaled;
  masked.id = StageId::kMasked;
  masked.derived = DerivedStage::kMasked;
  weights.id = StageId::kWeights;
  output.id = StageId::kOutput;
  // Additive scores are not Q·Kᵀ: they are stored, and scaled and masked follow from them
  // (AttentionTrace::head multiplies stored scores by the scale).
  if (p.options.additive) {
    scores.derived = DerivedStage::kStored;
    scores.heads.assign(static_cast<size_t>(H), Matrix(n_q, n_k));
  }
  for (TraceStep* s : {&weights, &output}) s->heads.resize(static_cast<size_t>(H));
  for (size_t h = 0; h < static_cast<size_t>(H); ++h) {
    resize_for_writing(weights.heads[h], n_q, n_k);
    resize_for_writing(output.heads[h], n_q, p.input.d_v());
  }
  t.hidden.clear();
  // Written by several threads, so bytes rather than std::vector<bool>'s shared words.
  std::vector<std::vector<char>> empty(static_cast<size_t>(H),
                                       std::vector<char>(static_cast<size_t>(n_q), 0));

  const RowBlocks b(n_q);
  parallel_items(H * b.blocks, [&](int item) {
    const int h = b.head(item), i0 = b.first(item), rows = b.rows(item);
    const size_t hs = static_cast<size_t>(h);
    const size_t g = static_cast<size_t>(p.input.kv_head_of(h));
    auto W = weights.heads[hs].middleRows(i0, rows);
    // The block's scores, scaled and masked rows, in scratch: AttentionTrace::head repeats
    // these operations (the product in this block, × scale, + bias, −∞) to give the same bits.
    Matrix M(rows, n_k);
    if (p.options.additive) {
      additive_scores(*p.options.additive, p.input.q[hs], i0, rows, p.input.k[g], M);
      scores.heads[hs].middleRows(i0, rows) = M;
    } else {
      const Matrix Qb = p.input.q[hs].middleRows(i0, rows);  // as AttentionTrace::head does
      M.noalias() = Qb * p.input.k[g].transpose();
    }
    M *= scale;
    ReasonMatrix R(rows, n_k);
    mask_and_softmax(p, geo, h, i0, M, R, W, inv_t, &empty[hs][static_cast<size_t>(i0)]);
    output.heads[hs].middleRows(i0, rows).noalias() = W * p.input.v[g];
  });

  t.empty_row = to_bools(empty);
  for (int h = 0; h < H; ++h)
    for (TraceStep* s : {&scores, &scaled, &masked, &weights, &output})
      s->kv_head.push_back(p.input.kv_head_of(h));
  for (TraceStep* s : {&scores, &scaled, &masked, &weights, &output})
    t.steps.push_back(std::move(*s));
}

void compute_weights_cpu(const AttentionProblem& p, HeadStack& weights, HeadStack& output,
                         std::vector<std::vector<bool>>& empty_row) {
  if (p.options.variants.any()) {
    AttentionTrace t;
    compute_variant_stages_cpu(p, t);
    weights = std::move(t.find(StageId::kWeights)->heads);
    output = std::move(t.find(StageId::kOutput)->heads);
    empty_row = std::move(t.empty_row);
    return;
  }
  const int H = p.input.num_heads(), n_q = p.input.n_q(), n_k = p.input.n_k();
  const float scale = p.effective_scale();
  const float inv_t = 1.0f / p.options.temperature;
  const MaskGeometry geo = MaskGeometry::of(p);
  // resize keeps the memory of matrices already this size (compute --weights calls this block
  // after block of rows with the same HeadStacks).
  weights.resize(static_cast<size_t>(H));
  output.resize(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) {
    resize_for_writing(weights[static_cast<size_t>(h)], n_q, n_k);
    resize_for_writing(output[static_cast<size_t>(h)], n_q, p.input.d_v());
  }
  std::vector<std::vector<char>> empty(static_cast<size_t>(H),
                                       std::vector<char>(static_cast<size_t>(n_q), 0));
  const RowBlocks b(n_q);
  parallel_items(H * b.blocks, [&](int item) {
    const int h = b.head(item), i0 = b.first(item), rows = b.rows(item);
    const size_t hs = static_cast<size_t>(h);
    const size_t g = static_cast<size_t>(p.input.kv_head_of(h));
    // The same operations as compute_stages_cpu, in place in the weights: scores, times the
    // scale, plus the bias, -inf, softmax; so the numbers are the staged path's, bit for bit.
    auto W = weights[hs].middleRows(i0, rows);
    if (p.options.additive) {
      Matrix S;
      additive_scores(*p.options.additive, p.input.q[hs], i0, rows, p.input.k[g], S);
      W = S;
    } else {
      const Matrix Qb = p.input.q[hs].middleRows(i0, rows);  // as compute_stages_cpu
      W.noalias() = Qb * p.input.k[g].transpose();
    }
    W *= scale;  // as compute_stages_cpu and AttentionTrace::head
    ReasonMatrix hidden(rows, n_k);
    mask_and_softmax(p, geo, h, i0, W, hidden, W, inv_t, &empty[hs][static_cast<size_t>(i0)]);
    output[hs].middleRows(i0, rows).noalias() = W * p.input.v[g];
  });
  empty_row = to_bools(empty);
}

void masked_softmax_rows(const Matrix& logits, const ReasonMatrix& hidden, float temperature,
                         Matrix& weights, std::vector<bool>& empty_row) {
  const Eigen::Index n_q = logits.rows(), n_k = logits.cols();
  weights.resize(n_q, n_k);
  empty_row.assign(static_cast<size_t>(n_q), false);
  const float inv_t = 1.0f / temperature;
  for (Eigen::Index i = 0; i < n_q; ++i)
    if (!softmax_row(&logits(i, 0), &hidden(i, 0), n_k, inv_t, &weights(i, 0)))
      empty_row[static_cast<size_t>(i)] = true;
}

}  // namespace attn
