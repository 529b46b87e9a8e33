// y = x·Wᵀ + b over float32 or bfloat16 matrices, each core taking a band of W's rows.
#include "lm/weights.h"

#include <algorithm>
#include <cstring>

#include "lm/parallel.h"

namespace attn::lm {

void widen_bf16(const uint16_t* in, size_t n, float* out) {
  // A plain loop the compiler turns into vector shifts (memcpy: the bits become a float without
  // breaking C++'s aliasing rules; it compiles to a plain store).
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(out + i, &bits, sizeof bits);
  }
}

void Weight::row(int64_t r, float* out) const {
  const auto c = static_cast<size_t>(cols);
  if (is_bf16())
    widen_bf16(bf16.data() + static_cast<size_t>(r) * c, c, out);
  else
    std::memcpy(out, f32.data() + static_cast<size_t>(r) * c, c * sizeof(float));
}

namespace {

// One token through a BF16 matrix, rows [j0, j1): each output a dot product of x with a row,
// the row widened as it is read (no buffer): generation's case, where the weights are read once
// per token and the memory they come from is the limit. Sixteen partial sums, so the compiler
// makes one vector of them without reordering any single sum.
void bf16_rows_dot(const float* x, const uint16_t* w, int64_t in, int64_t j0, int64_t j1,
                   const float* bias, float* y) {
  for (int64_t j = j0; j < j1; ++j) {
    const uint16_t* r = w + j * in;
    float acc[16] = {};
    int64_t i = 0;
    for (; i + 16 <= in; i += 16)
      for (int u = 0; u < 16; ++u) {
        const uint32_t bits = static_cast<uint32_t>(r[i + u]) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        acc[u] += x[i + u] * f;
      }
    float s = 0;
    for (float a : acc) s += a;
    for (; i < in; ++i) {
      const uint32_t bits = static_cast<uint32_t>(r[i]) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      s += x[i] * f;
    }
    y[j] = bias ? s + bias[j] : s;
  }
}

}  // namespace

void linear_forward(const float* x, int n, const Weight& w, const float* bias, float* y,
                    int64_t ldy, int threads) {
  using Eigen::Index;
  if (n == 1 && w.is_bf16()) {
    split_range(w.rows, thread_count(threads), 16, [&](Index j0, Index j1) {
      bf16_rows_dot(x, w.bf16.data(), w.cols, j0, j1, bias, y);
    });
    return;
  }
  const Index in = w.cols, out = w.rows;
  const Eigen::Map<const RowMatrixF> X(x, n, in);
  Eigen::Map<RowMatrixF, 0, Eigen::OuterStride<>> Y(y, n, out, Eigen::OuterStride<>(ldy));
  // Each core computes a band of output columns: with a few tokens there are too few rows of x
  // to share, while W has hundreds of rows or more.
  split_range(out, thread_count(threads), 16, [&](Index j0, Index j1) {
    if (!w.is_bf16()) {
      const Eigen::Map<const RowMatrixF> W(w.f32.data(), out, in);
      Y.middleCols(j0, j1 - j0).noalias() = X * W.middleRows(j0, j1 - j0).transpose();
    } else {
      // Blocks of rows widened into this core's buffer: about 256 KB (a core's cache) for one
      // token at a time, 4 MB when many tokens make each block's product long enough to pay.
      const Index block =
          std::max<Index>(16, (n >= 16 ? Index{1} << 20 : Index{1} << 16) / std::max<Index>(1, in));
      AlignedVector<float> buf(static_cast<size_t>(std::min(block, j1 - j0) * in));
      for (Index b0 = j0; b0 < j1; b0 += block) {
        const Index rows = std::min(block, j1 - b0);
        widen_bf16(w.bf16.data() + static_cast<size_t>(b0 * in), static_cast<size_t>(rows * in),
                   buf.data());
        const Eigen::Map<const RowMatrixF> W(buf.data(), rows, in);
        Y.middleCols(b0, rows).noalias() = X * W.transpose();
      }
    }
    if (bias)
      Y.middleCols(j0, j1 - j0).rowwise() +=
          Eigen::Map<const Eigen::RowVectorXf>(bias + j0, j1 - j0);
  });
}

}  // namespace attn::lm
