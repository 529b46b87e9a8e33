// The CPU fused outputs-only path: tiled online softmax with Eigen block products on every core.
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attention/mask.h"
#include "attention/parallel.h"
#include "backends/fused.h"

namespace attn {

KeyRanges key_ranges(const AttentionProblem& p) {
  const MaskSpec& m = p.options.mask;
  const int n_q = p.input.n_q();
  const MaskGeometry geo = MaskGeometry::of(p);
  KeyRanges r;
  r.rows.resize(static_cast<size_t>(n_q));
  for (int i = 0; i < n_q; ++i) r.rows[static_cast<size_t>(i)] = geo.key_range(i);
  // key_range ignores the window when global positions relax it, so it is only a bound then.
  r.exact = !(m.window && !m.global.empty()) && m.custom.empty() && m.bias.empty();
  return r;
}

long long visible_pairs(const AttentionProblem& p) {
  const MaskSpec& m = p.options.mask;
  const int n_q = p.input.n_q();
  const MaskGeometry geo = MaskGeometry::of(p);
  long long total = 0;
  const bool exact = !(m.window && !m.global.empty());
  for (int i = 0; i < n_q; ++i) {
    auto [lo, hi] = geo.key_range(i);
    if (exact) {
      total += hi - lo;
    } else {
      for (int j = lo; j < hi; ++j) total += geo.reason(i, j) == 0 ? 1 : 0;
    }
  }
  return total;
}

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per-thread scratch, allocated once per worker, so the inner loop never allocates.
struct Workspace {
  Matrix q_block, s, acc;
  Eigen::VectorXf m, l, m_use, alpha;
  Workspace(int bq, int bk, int d_k, int d_v)
      : q_block(bq, d_k), s(bq, bk), acc(bq, d_v), m(bq), l(bq), m_use(bq), alpha(bq) {}
};

struct FusedJob {
  const AttentionProblem& p;
  const KeyRanges& ranges;
  const MaskGeometry& geo;
  int block_q, block_k;
  float q_scale;  // scale / T folded into Q, so the logits come out of one product
  float inv_t;
  HeadStack& out;

  // One (head, block of queries) work item.
  void run(int h, int i0, Workspace& w) const {
    const AttentionInput& in = p.input;
    const int n_q = in.n_q();
    const int rows = std::min(block_q, n_q - i0);
    const Matrix& K = in.k[static_cast<size_t>(in.kv_head_of(h))];
    const Matrix& V = in.v[static_cast<size_t>(in.kv_head_of(h))];
    const Matrix* custom = mask_for_head(p.options.mask.custom, h);
    const Matrix* bias = mask_for_head(p.options.mask.bias, h);
    auto row_range = [&](int r) { return ranges.rows[static_cast<size_t>(i0 + r)]; };

    // The keys any row of this block may see; blocks outside are skipped entirely.
    int lo = std::numeric_limits<int>::max(), hi = 0;
    for (int r = 0; r < rows; ++r) {
      auto [a, b] = row_range(r);
      if (a < b) {
        lo = std::min(lo, a);
        hi = std::max(hi, b);
      }
    }
    auto Q = w.q_block.topRows(rows);
    auto acc = w.acc.topRows(rows);
    auto m = w.m.head(rows), l = w.l.head(rows), m_use = w.m_use.head(rows),
         alpha = w.alpha.head(rows);
    acc.setZero();
    m.setConstant(kNegInf);
    l.setZero();
    if (lo < hi) Q.noalias() = in.q[static_cast<size_t>(h)].middleRows(i0, rows) * q_scale;

    for (int j0 = lo; j0 < hi; j0 += block_k) {
      const int cols = std::min(block_k, hi - j0);
      auto S = w.s.block(0, 0, rows, cols);
      S.noalias() = Q * K.middleRows(j0, cols).transpose();
      // Cells need individual care only where a mask cuts through the block or a bias applies.
      bool full = ranges.exact;
      for (int r = 0; r < rows && full; ++r) {
        auto [a, b] = row_range(r);
        full = a <= j0 && j0 + cols <= b;
      }
      if (!full && ranges.exact) {
        // Only the structural masks: each row sees one contiguous range, so hide what lies outside.
        for (int r = 0; r < rows; ++r) {
          auto [a, b] = row_range(r);
          const int vis_lo = std::clamp(a - j0, 0, cols), vis_hi = std::clamp(b - j0, vis_lo, cols);
          S.row(r).head(vis_lo).setConstant(kNegInf);
          S.row(r).segment(vis_hi, cols - vis_hi).setConstant(kNegInf);
        }
      } else if (!full) {
        for (int r = 0; r < rows; ++r) {
          const int i = i0 + r;
          auto [a, b] = row_range(r);
          for (int c = 0; c < cols; ++c) {
            const int j = j0 + c;
            bool visible = j >= a && j < b;
            if (visible) {
              visible = geo.reason(i, j) == 0 && (!custom || (*custom)(i, j) != 0.0f) &&
                        (!bias || (*bias)(i, j) != kNegInf);
              if (visible && bias) S(r, c) += (*bias)(i, j) * inv_t;
            }
            if (!visible) S(r, c) = kNegInf;
          }
        }
      }
      // Online softmax: the new running max rescales what was accumulated so far.
      for (int r = 0; r < rows; ++r) {
        const float mb = std::max(m(r), S.row(r).maxCoeff());
        // A row that has seen no visible key yet keeps max -inf; exp against 0 then gives 0.
        m_use(r) = mb == kNegInf ? 0.0f : mb;
        alpha(r) = std::exp(m(r) - m_use(r));
        m(r) = mb;
      }
      if (full || ranges.exact) {
        S.array().colwise() -= m_use.array();
        S.array() = S.array().exp();  // vectorised
        // Eigen's vectorised exp clamps its argument on some instruction sets, so exp(-inf) can
        // come out as a tiny positive number: cells outside a row's range are set to exactly 0.
        if (!full)
          for (int r = 0; r < rows; ++r) {
            auto [a, b] = row_range(r);
            const int vis_lo = std::clamp(a - j0, 0, cols);
            const int vis_hi = std::clamp(b - j0, vis_lo, cols);
            S.row(r).head(vis_lo).setZero();
            S.row(r).segment(vis_hi, cols - vis_hi).setZero();
          }
      } else {
        // Cell-by-cell masks (custom, bias, window with globals): scalar, like the test above.
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c)
            S(r, c) = S(r, c) == kNegInf ? 0.0f : std::exp(S(r, c) - m_use(r));
      }
      l.array() = l.array() * alpha.array() + S.rowwise().sum().array();
      acc.array().colwise() *= alpha.array();
      acc.noalias() += S * V.middleRows(j0, cols);
    }
    Matrix& O = out[static_cast<size_t>(h)];
    for (int r = 0; r < rows; ++r) {
      // l = 0 only when every key is hidden from the row: its output is 0, never NaN.
      if (l(r) > 0)
        O.row(i0 + r) = acc.row(r) / l(r);
      else
        O.row(i0 + r).setZero();
    }
  }
};

}  // namespace

HeadStack fused_attention_cpu(const AttentionProblem& p, const FusedCpuConfig& config) {
  if (p.options.variants.any() || p.options.additive)
    throw std::invalid_argument(
        "the fused outputs-only path computes plain scaled dot-product attention: Linformer, the "
        "key–query convolution, head mixing and the additive score need the staged path");
  const AttentionInput& in = p.input;
  const int H = in.num_heads(), n_q = in.n_q(), n_k = in.n_k(), d_k = in.d_k(), d_v = in.d_v();
  const int bq = std::max(1, std::min(config.block_q, n_q));
  const int bk = std::max(1, std::min(config.block_k, n_k));
  const KeyRanges ranges = key_ranges(p);
  const MaskGeometry geo = MaskGeometry::of(p);
  HeadStack out(static_cast<size_t>(H), Matrix(n_q, d_v));
  const float inv_t = 1.0f / p.options.temperature;
  const FusedJob job{p, ranges, geo, bq, bk, p.effective_scale() * inv_t, inv_t, out};

  const int q_blocks = (n_q + bq - 1) / bq;
  const int items = H * q_blocks;
  const int threads = std::min(thread_count(config.threads), items);
  // Work items are handed out dynamically: under a causal mask the later query blocks cost more.
  std::atomic<int> next{0};
  run_workers(threads, [&](int, const std::atomic<bool>& stop) {
    Workspace w(bq, bk, d_k, d_v);
    // Last query blocks first: under a causal mask they see the most keys, and starting with
    // the longest items leaves short ones to even out the threads at the end.
    for (int it = next++; it < items && !stop; it = next++)
      job.run(it % H, (q_blocks - 1 - it / H) * bq, w);
  });
  return out;
}

}  // namespace attn
