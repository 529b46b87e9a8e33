// Reading and writing NumPy .npy files holding one attention tensor: (n, d) or (H, n, d).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/matrix.h"

namespace attn {

// A tensor read from or written to a .npy file. Rank 2 is one head; rank 3 is (H, rows, cols).
struct NpyTensor {
  HeadStack heads;
  int rank = 0;
};

// What a file may hold. kFloat: little-endian float32/float64 (Q, K, V, bias). kMask: also bool
// and integer types (a custom mask, where nonzero means "may attend"); values are cast to float.
enum class NpyContent { kFloat, kMask };

// The most heads (the first dimension of a rank-3 file) a tensor may have.
constexpr int kMaxNpyHeads = 4096;

// Parses the bytes of a .npy file: versions 1.0, 2.0 and 3.0, C order, rank 2 or 3, no zero
// dimension. Float64 values must fit in float32. `name` (usually the path) starts every error,
// e.g. "q.npy: truncated data: expected 96 bytes after the header, found 40".
std::optional<NpyTensor> parse_npy(const std::string& bytes, const std::string& name,
                                   NpyContent content, std::string& error);

// Reads and parses a .npy file (a regular file of at most kMaxNpyFileBytes, io/input_file.h);
// errors start with the path.
std::optional<NpyTensor> read_npy(const std::string& path, NpyContent content, std::string& error);

// The bytes of a float32 ('<f4') version 1.0 .npy file holding `heads` with the given rank
// (2: exactly one head). Every head must have the same shape. The header is padded with spaces
// and a final '\n' so the data starts at a multiple of 64 bytes.
std::string npy_bytes(const HeadStack& heads, int rank);

// npy_bytes in pieces, for data written as it is computed: the header of a float32 file of shape
// (rows, cols) (rank 2, heads = 1) or (heads, rows, cols) (rank 3), then the data of each matrix
// in C order.
std::string npy_header(int rank, size_t heads, Eigen::Index rows, Eigen::Index cols);
// The same for a shape of any rank, e.g. (n_layer, n_head, n, n).
std::string npy_header(const std::vector<size_t>& shape);
std::string npy_data(const Matrix& m);
// The same bytes without a copy where the host's floats already are them (little-endian): a view
// of m's memory, else of npy_data(m) kept in `scratch`. Valid while m and scratch are.
std::string_view npy_data_view(const Matrix& m, std::string& scratch);

// Writes npy_bytes(heads, rank) atomically (nothing at `path` changes on failure).
bool write_npy(const std::string& path, const HeadStack& heads, int rank, std::string& error);

// The bytes of a float32 version 1.0 .npy file of any rank: `shape` (empty for a scalar) and
// its product of row-major values; the header padded as npy_bytes() pads it.
std::string npy_array_bytes(const std::vector<size_t>& shape, const float* data);

}  // namespace attn
