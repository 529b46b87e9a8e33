// The online softmax walk (online_softmax.h): the recurrence of FlashAttention (Dao et al. 2022)
// and of Milakov & Gimelshein's online normaliser, written as plain loops over one query row.
#include "explain/online_softmax.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace attn {

OnlineSoftmaxWalk online_softmax_walk(const AttentionTrace& t, int query, int head, int block) {
  assert(block >= 1 && head >= 0 && head < t.num_heads);
  const int row = query - t.first_row;
  const Matrix& masked = t.head(StageId::kMasked, head);
  assert(row >= 0 && row < masked.rows());
  const int g = t.kv_head_of.empty() ? 0 : t.kv_head_of[static_cast<size_t>(head)];
  const Matrix& v = t.step(StageId::kV).heads[static_cast<size_t>(g)];
  const size_t dv = static_cast<size_t>(t.d_v);

  OnlineSoftmaxWalk w;
  w.query = query;
  w.head = head;
  w.block_size = block;
  w.x.resize(static_cast<size_t>(t.n_k));
  for (int j = 0; j < t.n_k; ++j) {
    const double s = masked(row, j);
    w.x[static_cast<size_t>(j)] = std::isinf(s) ? -INFINITY : s / t.temperature;
  }
  double m = -INFINITY, l = 0.0;
  std::vector<double> acc(dv, 0.0);
  for (int first = 0; first < t.n_k; first += block) {
    OnlineBlock b;
    b.first = first;
    b.last = std::min(first + block, t.n_k);
    b.block_max = -INFINITY;
    for (int j = b.first; j < b.last; ++j)
      if (!std::isinf(w.x[static_cast<size_t>(j)])) {
        ++b.visible;
        b.block_max = std::max(b.block_max, w.x[static_cast<size_t>(j)]);
      }
    b.m_old = m;
    b.m_new = std::max(m, b.block_max);
    // Before any visible key both maxima are −∞ and there is nothing to rescale yet.
    b.rescale = std::isinf(b.m_new) ? 1.0 : std::exp(b.m_old - b.m_new);
    b.l_old = l;
    b.acc_old = acc;
    l *= b.rescale;
    for (double& a : acc) a *= b.rescale;
    for (int j = b.first; j < b.last; ++j) {
      const double xj = w.x[static_cast<size_t>(j)];
      const double p = std::isinf(xj) ? 0.0 : std::exp(xj - b.m_new);
      b.p.push_back(p);
      l += p;
      for (size_t c = 0; c < dv; ++c) acc[c] += p * v(j, static_cast<Eigen::Index>(c));
    }
    b.l_new = l;
    b.acc_new = acc;
    m = b.m_new;
    w.blocks.push_back(std::move(b));
  }
  w.empty_row = l == 0.0;
  w.output.assign(dv, 0.0);
  if (!w.empty_row)
    for (size_t c = 0; c < dv; ++c) w.output[c] = acc[c] / l;
  return w;
}

ScoreTraffic score_traffic(const AttentionTrace& t, int block) {
  ScoreTraffic s;
  s.cells_per_head = static_cast<int64_t>(t.n_q) * t.n_k;
  s.matrix_bytes = s.cells_per_head * t.num_heads * static_cast<int64_t>(sizeof(float));
  s.traffic_bytes = 4 * s.matrix_bytes;
  s.block_bytes = static_cast<int64_t>(std::min(block, std::max(t.n_k, 1))) *
                  static_cast<int64_t>(sizeof(float));
  return s;
}

std::string bytes_text(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace attn
