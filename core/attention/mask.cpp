// Mask geometry and reasons, shared by every backend and by the narration of hidden keys.
#include "attention/mask.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace attn {

MaskGeometry::MaskGeometry(const MaskSpec& spec, int n_q, int n_k, int first_row)
    : causal_(spec.causal != CausalAlign::kNone),
      lower_right_(spec.causal == CausalAlign::kLowerRight),
      // Positions lie in [-(n_q - 1), max(n_q, n_k) - 1] and keys in [0, n_k - 1], so a window
      // of n_q + n_k already sees everything; a larger one (up to INT_MAX) means the same and
      // would overflow p + W.
      window_(spec.window ? static_cast<int>(std::min<long long>(std::max(*spec.window, 0),
                                                                 static_cast<long long>(n_q) + n_k))
                          : -1),
      key_length_(spec.key_length ? *spec.key_length : -1),
      n_q_(n_q),
      n_k_(n_k),
      first_row_(first_row) {
  // Window alignment follows the causal alignment; without causal it is top-left.
  const int span = std::max(n_q, n_k) + 1;
  global_.assign(span, false);
  for (int g : spec.global)
    if (g >= 0 && g < span) global_[g] = any_global_ = true;
}

MaskGeometry MaskGeometry::of(const AttentionProblem& p) {
  return MaskGeometry(p.options.mask, p.full_n_q(), p.input.n_k(), p.first_query_row);
}

bool MaskGeometry::is_global(int pos) const {
  return pos >= 0 && pos < static_cast<int>(global_.size()) && global_[pos];
}

uint8_t MaskGeometry::reason(int i, int j) const {
  uint8_t r = kVisible;
  int p = position(i);
  if (causal_ && j > p) r |= kHiddenCausal;
  if (window_ >= 0) {
    const long long d = static_cast<long long>(p) - j;  // |p - j| in 64 bits
    bool in_window = causal_ ? (d >= 0 && d <= window_) : std::llabs(d) <= window_;
    // Global queries see every key and every query sees global keys: this relaxes the window only.
    // A query is global when its position p (not its row index) is listed.
    if (!in_window && !is_global(p) && !is_global(j)) r |= kHiddenWindow;
  }
  if (key_length_ >= 0 && j >= key_length_) r |= kHiddenPadding;
  return r;
}

std::pair<int, int> MaskGeometry::key_range(int i) const {
  // In 64 bits: p + W + 1 must not wrap for any window an int can hold.
  long long lo = 0, hi = n_k_;
  const long long p = position(i);
  if (causal_) hi = std::min(hi, p + 1);
  if (key_length_ >= 0) hi = std::min<long long>(hi, key_length_);
  if (window_ >= 0 && !any_global_) {
    lo = std::max(lo, p - window_);
    if (!causal_) hi = std::min(hi, p + window_ + 1);
  }
  lo = std::max(lo, 0LL);
  hi = std::max(hi, lo);
  return {static_cast<int>(lo), static_cast<int>(hi)};
}

const Matrix* mask_for_head(const HeadStack& stack, int h) {
  if (stack.empty()) return nullptr;
  return stack.size() == 1 ? &stack[0] : &stack[static_cast<size_t>(h)];
}

ReasonMatrix build_reasons(const AttentionProblem& p, int h) {
  const int n_q = p.input.n_q(), n_k = p.input.n_k();
  const MaskGeometry geo = MaskGeometry::of(p);
  const Matrix* custom = mask_for_head(p.options.mask.custom, h);
  const Matrix* bias = mask_for_head(p.options.mask.bias, h);
  ReasonMatrix out(n_q, n_k);
  for (int i = 0; i < n_q; ++i) {
    for (int j = 0; j < n_k; ++j) {
      uint8_t r = geo.reason(i, j);
      if (custom && (*custom)(i, j) == 0.0f) r |= kHiddenCustom;
      if (bias && std::isinf((*bias)(i, j)) && (*bias)(i, j) < 0) r |= kHiddenBias;
      out(i, j) = r;
    }
  }
  return out;
}

std::string describe_reason(uint8_t reason, const MaskSpec& spec, int pos, int j, int n_k) {
  std::ostringstream s;
  const char* sep = "";
  if (reason & kHiddenCausal) {
    s << sep << "causal: key " << j << " comes after query position " << pos;
    sep = "; ";
  }
  if (reason & kHiddenWindow) {
    const long long W = spec.window ? *spec.window : 0;  // 64 bits: p ± W near INT_MAX
    if (spec.causal == CausalAlign::kNone) {
      s << sep << "window: |" << pos << " - " << j << "| = " << std::abs(pos - j) << " > W = " << W;
    } else {
      // A causal window keeps p - W <= j <= p: a later key is outside it because it is later,
      // not because it is far (|0 - 1| = 1 is not > W = 1).
      if (j > pos)
        s << sep << "window: key " << j << " > p = " << pos
          << ", and a causal window only looks back";
      else
        s << sep << "window: " << pos << " - " << j << " = " << pos - j << " > W = " << W;
      const long long lo = std::max<long long>(0, pos - W);
      const long long hi = n_k > 0 ? std::min(pos, n_k - 1) : pos;
      if (hi < lo)
        s << " (the causal window keeps no key)";
      else if (hi == lo)
        s << " (the causal window keeps key " << lo << " only)";
      else
        s << " (the causal window keeps keys " << lo << ".." << hi << ")";
    }
    sep = "; ";
  }
  if (reason & kHiddenPadding) {
    s << sep << "padding: key " << j << " >= key length "
      << (spec.key_length ? *spec.key_length : 0);
    sep = "; ";
  }
  if (reason & kHiddenCustom) {
    s << sep << "custom mask is 0 here";
    sep = "; ";
  }
  if (reason & kHiddenBias) s << sep << "bias is -inf here";
  return s.str();
}

}  // namespace attn
