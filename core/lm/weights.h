// The weights of a Llama-family model as the forward pass reads them: each matrix kept in the
// precision it was stored in when that saves memory (BF16 stays two bytes a value and is widened
// to float32 a block of rows at a time, as it is used; F16 is widened once, when loading; F32 is
// used as it is), and the one product every layer is made of, y = x·Wᵀ + b, split over the cores.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::lm {

// Buffers of the model's numbers, aligned as Eigen aligns its own (64 bytes with AVX-512): Eigen's
// vectorised loops start at the first aligned element, so where a buffer starts changes the order
// of additions. With every buffer aligned, the same run gives the same bytes every time.
template <typename S>
using AlignedVector = std::vector<S, Eigen::aligned_allocator<S>>;

template <typename S>
using RowMatrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixF = RowMatrix<float>;
using MatMap = Eigen::Map<RowMatrixF>;
using ConstMatMap = Eigen::Map<const RowMatrixF>;

// A (rows, cols) row-major matrix in PyTorch's Linear layout (out, in): float32 or bfloat16.
struct Weight {
  int64_t rows = 0, cols = 0;
  AlignedVector<float> f32;    // rows·cols values, or empty when the matrix is kept in BF16
  std::vector<uint16_t> bf16;  // rows·cols values, or empty when it is kept in F32
  bool is_bf16() const { return !bf16.empty(); }
  size_t bytes() const { return f32.size() * 4 + bf16.size() * 2; }
  // Row r widened to float32 into out (cols values).
  void row(int64_t r, float* out) const;
};

// bfloat16 bits to float32: the 16 bits are float32's top half.
void widen_bf16(const uint16_t* in, size_t n, float* out);

// y (n, ldy) columns [0, w.rows) = x (n, w.cols) · wᵀ + bias (w.rows values, or null), the
// output rows of w shared over `threads` cores (0: every core). A BF16 matrix is widened a block
// of rows at a time into a buffer each core keeps, so the whole matrix is never widened at once.
void linear_forward(const float* x, int n, const Weight& w, const float* bias, float* y,
                    int64_t ldy, int threads = 0);

}  // namespace attn::lm
