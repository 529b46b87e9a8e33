// Stage 3, the mask: the active rules in words with this query's position filled in, and for
// every key whether it is visible or hidden and why.
#include <algorithm>
#include <cstdlib>

#include "attention/mask.h"
#include "explain/narrator.h"

namespace attn::narration {

std::string Narrator::reason_text(uint8_t bits, int j) const {
  MaskGeometry geo(t_.mask, t_.n_q, t_.n_k);
  std::string s = describe_reason(bits, t_.mask, geo.position(i_), j, t_.n_k);
  return r_.unicode ? unicode_reason(s) : s;
}

// The rules that are active, in words, with this query's position filled in.
void Narrator::mask_rules() {
  const MaskSpec& m = t_.mask;
  MaskGeometry geo(m, t_.n_q, t_.n_k);
  const int p = geo.position(i_);
  const std::string pos = std::to_string(p);
  if (m.causal == CausalAlign::kTopLeft)
    line("Causal (top-left, as PyTorch's is_causal): query " + std::to_string(i_) +
         " sits at position p = " + pos + ";\n   key j is visible only when j " + s_.le + " " +
         pos + ".");
  if (m.causal == CausalAlign::kLowerRight)
    line(std::string("Causal (lower-right, as when decoding with a KV cache): p = i + n_k ") +
         s_.minus + " n_q = " + std::to_string(i_) + " + " + std::to_string(t_.n_k) + " " +
         s_.minus + " " + std::to_string(t_.n_q) + " = " + pos +
         ";\n   key j is visible only when j " + s_.le + " " + pos + ".");
  if (m.window) {
    const int W = *m.window;
    // In 64 bits: p ± W overflows an int for windows near INT_MAX.
    const int lo = static_cast<int>(std::max<long long>(0, static_cast<long long>(p) - W));
    const int hi_right =
        static_cast<int>(std::min<long long>(static_cast<long long>(p) + W, t_.n_k - 1));
    if (m.causal == CausalAlign::kNone)
      line("Query " + std::to_string(i_) + " sits at position p = " + pos + ".");
    if (m.causal != CausalAlign::kNone)
      line("Sliding window W = " + std::to_string(W) + " (with causal): keys p " + s_.minus +
           " W " + s_.le + " j " + s_.le + " p are visible, i.e. " +
           keys_text(lo, std::min(p, t_.n_k - 1)) + ".");
    else
      line("Sliding window W = " + std::to_string(W) + ": key j is visible only when |p " +
           s_.minus + " j| " + s_.le + " " + std::to_string(W) + ", i.e. " +
           keys_text(lo, hi_right) + ".");
    if (!m.global.empty()) {
      std::string list;
      for (int gpos : m.global) list += (list.empty() ? "" : ", ") + std::to_string(gpos);
      line("Global positions " + list +
           " (Longformer): a global query sees every key and every query sees the");
      line("global keys. Global relaxes the window only, never causal or padding.");
      if (geo.is_global(p)) line("This query is global, so the window does not limit it.");
    }
  }
  if (m.key_length)
    line("Padding: key length L = " + std::to_string(*m.key_length) + ", so keys j " + s_.ge + " " +
         std::to_string(*m.key_length) + " are padding, hidden from every query.");
  if (!m.custom.empty())
    line("Custom mask: 1 = may attend, 0 = hidden (row " + std::to_string(i_) +
         (m.custom.size() > 1 ? " of head " + std::to_string(h_) + "'s mask)." : " of the mask)."));
  if (!m.bias.empty())
    line(std::string("Bias: added to the scaled score (masked = scaled + bias); a bias of ") +
         s_.neg_inf + " hides the key.");
}

// Visible only because of a global position: outside the window, yet not hidden by it.
bool Narrator::relaxed_by_global(int j) const {
  const MaskSpec& m = t_.mask;
  if (!m.window || m.global.empty() || hidden(j)) return false;
  MaskGeometry geo(m, t_.n_q, t_.n_k);
  const long long d = static_cast<long long>(geo.position(i_)) - j, W = *m.window;
  bool inside = m.causal != CausalAlign::kNone ? (d >= 0 && d <= W) : std::llabs(d) <= W;
  return !inside;
}

std::string Narrator::masked_value_text(int j) const {
  const Matrix* bias = mask_for_head(t_.mask.bias, h_);
  const double sc = (*scaled_)(row_, j), mk = (*before_conv_)(row_, j);
  if (hidden(j)) return s_.neg_inf;
  if (!bias) return num(mk);
  const double b = (*bias)(i_, j);
  return join_sum({num(sc), num(b)}, s_) + " = " + num(mk);
}

void Narrator::mask_key_line(int j, size_t w) {
  const bool hid = hidden(j);
  std::string text = pad_right(kn(j), w) + "  " + pad_right(hid ? "hidden" : "visible", 7) + "  " +
                     masked_value_text(j);
  if (hid)
    text = pad_right(text, w + 20) + "  " + reason_text(reason(j), j);
  else if (relaxed_by_global(j))
    text += std::string("   (outside the window, but ") +
            (MaskGeometry(t_.mask, t_.n_q, t_.n_k).is_global(j) ? "key " + std::to_string(j)
                                                                : std::string("this query")) +
            " is global)";
  line(text);
}

// Long rows: runs of consecutive keys with the same reason, one line per run.
void Narrator::mask_groups() {
  int shown = 0;
  for (int lo = 0; lo < t_.n_k;) {
    int hi = lo;
    while (hi + 1 < t_.n_k && reason(hi + 1) == reason(lo)) ++hi;
    if (shown++ == 12) {
      line(std::string(s_.ellipsis) + " (the remaining keys alternate; see the masked heatmap)");
      break;
    }
    std::string keys = "keys " + range_text(lo, hi);
    if (lo == hi) keys = "key " + std::to_string(lo);
    if (reason(lo) == kVisible)
      line(pad_right(keys, 14) + "  visible");
    else
      line(pad_right(keys, 14) + "  hidden   " + reason_text(reason(lo), lo) +
           (lo == hi ? ""
                     : "; the same for key" + std::string(hi > lo + 1 ? "s " : " ") +
                           range_text(lo + 1, hi)));
    lo = hi + 1;
  }
}

void Narrator::mask() {
  const MaskSpec& m = t_.mask;
  if (m.empty()) {
    heading(3, "Mask: none " + std::string(s_.dash) + " every key is visible to " + quoted_query() +
                   (cross() ? " (cross-attention reads the whole other sequence)"
                            : " (bidirectional, as in BERT)"));
    line("masked = scaled, unchanged.");
    return;
  }
  heading(3, std::string("Mask: keys this query may not see get the score ") + s_.neg_inf);
  mask_rules();
  const size_t w = key_label_width();
  if (cell_ || t_.n_k <= kMaxDetailKeys) {
    for (int j : detail_) mask_key_line(j, w);
  } else {
    mask_groups();
    line("The " + std::to_string(detail_.size()) + " keys narrated here:");
    for (int j : detail_) mask_key_line(j, w);
  }
  if (!cell_ || hidden(*r_.key))
    line(std::string("A hidden key gets exp(") + s_.neg_inf +
         ") = 0 in the softmax: it receives no attention at all.");
}

}  // namespace attn::narration
