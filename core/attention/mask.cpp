// Mask geometry and reasons, shared by every backend and by the narration of hidden keys.
#include "attention/mask.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <sstream>

namespace attn {

MaskGeometry::MaskGeometry(const MaskSpec& spec, int n_q, int n_k)
    : causal_(spec.causal != CausalAlign::kNone),
      lower_right_(spec.causal == CausalAlign::kLowerRight),
      window_(spec.window ? *spec.window : -1),
      key_length_(spec.key_length ? *spec.key_length : -1),
      n_q_(n_q),
      n_k_(n_k) {
  // Window alignment follows the causal alignment; without causal it is top-left.
  int span = std::max(n_q, n_k) + 1;
  global_.assign(span, false);
  for (int g : spec.global)
    if (g >= 0 && g < span) global_[g] = true;
}

bool MaskGeometry::is_global(int pos) const {
  return pos >= 0 && pos < static_cast<int>(global_.size()) && global_[pos];
}

uint8_t MaskGeometry::reason(int i, int j) const {
  uint8_t r = kVisible;
  int p = position(i);
  if (causal_ && j > p) r |= kHiddenCausal;
  if (window_ >= 0) {
    bool in_window = causal_ ? (j >= p - window_ && j <= p) : std::abs(p - j) <= window_;
    // Global queries see every key and every query sees global keys: this relaxes the window only.
    // A query is global when its position p (not its row index) is listed.
    if (!in_window && !is_global(p) && !is_global(j)) r |= kHiddenWindow;
  }
  if (key_length_ >= 0 && j >= key_length_) r |= kHiddenPadding;
  return r;
}

std::pair<int, int> MaskGeometry::key_range(int i) const {
  int lo = 0, hi = n_k_;
  int p = position(i);
  if (causal_) hi = std::min(hi, p + 1);
  if (key_length_ >= 0) hi = std::min(hi, key_length_);
  bool any_global = std::find(global_.begin(), global_.end(), true) != global_.end();
  if (window_ >= 0 && !any_global) {
    lo = std::max(lo, p - window_);
    if (!causal_) hi = std::min(hi, p + window_ + 1);
  }
  lo = std::max(lo, 0);
  hi = std::max(hi, lo);
  return {lo, hi};
}

const Matrix* mask_for_head(const HeadStack& stack, int h) {
  if (stack.empty()) return nullptr;
  return stack.size() == 1 ? &stack[0] : &stack[static_cast<size_t>(h)];
}

ReasonMatrix build_reasons(const AttentionProblem& p, int h) {
  const int n_q = p.input.n_q(), n_k = p.input.n_k();
  MaskGeometry geo(p.options.mask, n_q, n_k);
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
    const int W = spec.window ? *spec.window : 0;
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
      int lo = std::max(0, pos - W), hi = n_k > 0 ? std::min(pos, n_k - 1) : pos;
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
