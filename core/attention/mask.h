// Which keys each query may see: the structural masks (causal, window, padding, global) and the
// custom mask and bias, with the reason each hidden cell is hidden.
#pragma once

#include <utility>

#include "attention/attention.h"

namespace attn {

// The index-only masks, evaluated cell by cell without materialising an (n_q, n_k) matrix,
// so the fused path can use it on inputs far too large for a full mask.
class MaskGeometry {
 public:
  // n_q is the whole problem's query count. Row i asked about below is row first_row + i of the
  // whole problem (first_row > 0 for a slice of rows, attention/row_slice.h).
  MaskGeometry(const MaskSpec& spec, int n_q, int n_k, int first_row = 0);
  // The geometry of a problem, whole or a slice of query rows.
  static MaskGeometry of(const AttentionProblem& p);
  // Position p_i of query i among the keys (top-left: i; lower-right: i + n_k - n_q).
  int position(int i) const {
    const int r = i + first_row_;
    return lower_right_ ? r + n_k_ - n_q_ : r;
  }
  // Bits of kHiddenCausal, kHiddenWindow, kHiddenPadding for cell (i, j).
  uint8_t reason(int i, int j) const;
  // A half-open range [lo, hi) of keys outside which query i sees nothing (structurally).
  std::pair<int, int> key_range(int i) const;
  bool is_global(int pos) const;
  // The window in effect (-1: none), clamped as the member below says.
  int window() const { return window_; }

 private:
  bool causal_ = false, lower_right_ = false;
  // The window, clamped to n_q + n_k (no |p - j| is larger), so p ± window never overflows.
  int window_ = -1, key_length_ = -1;
  int n_q_ = 0, n_k_ = 0, first_row_ = 0;
  std::vector<bool> global_;  // indexed by position, size max(n_q, n_k) + something
  bool any_global_ = false;   // found once: key_range runs for every query row
};

// The full reason matrix (n_q, n_k) for query head h, including the custom mask and -inf bias.
ReasonMatrix build_reasons(const AttentionProblem& p, int h);

// The custom mask / bias matrix that applies to head h (shared when only one is given), or null.
const Matrix* mask_for_head(const HeadStack& stack, int h);

// Words for a reason bit set, e.g. "causal: key 2 comes after query position 1"; every number
// comparison in it is a true inequality. n_k (when known) bounds the key ranges it names.
std::string describe_reason(uint8_t reason, const MaskSpec& spec, int pos, int j, int n_k = -1);

}  // namespace attn
