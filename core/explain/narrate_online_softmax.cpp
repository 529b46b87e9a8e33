// The online softmax (FlashAttention), stages 4 and 5 together: one query row's keys in blocks of
// B, with the running maximum m, the running sum ℓ, the accumulator rescaled by e^(m_old − m_new)
// when m grows, and the one division at the end; the numbers come from online_softmax_walk.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "explain/narrator.h"

namespace attn::narration {

namespace {

// Blocks narrated in full at the start and end of a long row; the ones between get one line each
// up to kMaxSummaryBlocks, else one line for all of them.
constexpr int kHeadBlocks = 6, kTailBlocks = 4, kMaxSummaryBlocks = 40;
// Keys of one block whose p_j is written out; the rest of the block is summed.
constexpr int kMaxBlockKeys = 6;

}  // namespace

std::string Narrator::vec_text(const std::vector<double>& v) const {
  std::vector<std::string> e;
  for (double x : v) e.push_back(num(x));
  return vector_text(e, s_);
}

std::string Narrator::block_keys_text(int first, int last) const {
  std::string s = keys_text(first, last - 1);
  if (last - first <= 3) {
    std::string names;
    for (int j = first; j < last; ++j) names += (names.empty() ? "" : ", ") + kn(j);
    s += " (" + names + ")";
  }
  return s;
}

void Narrator::online_block(const OnlineSoftmaxWalk& w, size_t index) {
  const OnlineBlock& b = w.blocks[index];
  const std::string& ell = s_.ell;
  out_ << "\n";
  line("Block " + std::to_string(index + 1) + " of " + std::to_string(w.blocks.size()) + ": " +
       block_keys_text(b.first, b.last));
  if (b.visible == 0) {
    line("  every key of this block is hidden (p = 0): m, " + ell + " and acc stay as they are");
    return;
  }
  std::string mline =
      "  m   = max(" + num(b.m_old) + ", " + num(b.block_max) + ") = " + num(b.m_new);
  if (std::isinf(b.m_old))
    mline += "   (the first visible key: nothing to rescale yet)";
  else if (b.grew())
    mline += "   m grew: rescale by e^(" + num(b.m_old) + " " + s_.minus + " " + num(b.m_new) +
             ") = " + num(b.rescale);
  else
    mline += "   m did not grow: factor 1";
  line(mline);
  double rest = 0.0;
  int shown = 0, rest_n = 0;
  size_t w_lab = 0;
  for (int j = b.first; j < b.last && j < b.first + kMaxBlockKeys; ++j)
    w_lab = std::max(w_lab, display_width(kn(j)));
  for (int j = b.first; j < b.last; ++j) {
    const double p = b.p[static_cast<size_t>(j - b.first)];
    if (shown >= kMaxBlockKeys) {
      rest += p;
      rest_n += std::isinf(w.x[static_cast<size_t>(j)]) ? 0 : 1;
      continue;
    }
    ++shown;
    const std::string lhs = "  " + pad_right("p_" + kn(j), w_lab + 2);
    if (std::isinf(w.x[static_cast<size_t>(j)])) {
      line(lhs + " = 0   (hidden)");
      continue;
    }
    line(lhs + " = exp(" + num(w.x[static_cast<size_t>(j)]) + " " + s_.minus + " " +
         (b.m_new < 0 ? "(" + num(b.m_new) + ")" : num(b.m_new)) + ") = " + num(p));
  }
  if (rest_n > 0)
    line("  [" + std::to_string(rest_n) + " more keys of the block: " + s_.sum +
         " p = " + num(rest) + "]");
  double psum = 0.0;
  for (double p : b.p) psum += p;
  const bool first = std::isinf(b.m_old) || b.l_old == 0.0;
  const bool one = b.last - b.first == 1;
  const std::string added_l = one ? num(psum) : std::string(s_.sum) + " p_j";
  if (first)
    line("  " + ell + "   = " + added_l + (one ? "" : " = " + num(psum)));
  else
    line("  " + ell + "   = " + ell + " " + s_.times + " " + num(b.rescale) + " + " + added_l +
         " = " + num(b.l_old) + " " + s_.times + " " + num(b.rescale) + " + " + num(psum) + " = " +
         num(b.l_new));
  // The block's share Σ p_j·v_j, as the difference the accumulator took (one key: p × v_j).
  std::vector<double> share(b.acc_new.size());
  for (size_t c = 0; c < share.size(); ++c)
    share[c] = b.acc_new[c] - (first ? 0.0 : b.rescale * b.acc_old[c]);
  const std::string added = one ? product(num(b.p[0]), row_text(*v_, b.first), s_)
                                : std::string(s_.sum) + " p_j" + s_.times + "v_j";
  if (first) {
    out_ << equation("     ", "acc", {{added}, {vec_text(b.acc_new)}}, s_);
    return;
  }
  Segment terms{vec_text(b.acc_old) + " " + s_.times + " " + num(b.rescale),
                one ? added : added + " (" + vec_text(share) + ")"};
  out_ << equation("     ", "acc", {terms, {vec_text(b.acc_new)}}, s_);
}

// One line for a block between the ones narrated in full.
void Narrator::online_block_summary(const OnlineBlock& b, size_t index) {
  line("Block " + std::to_string(index + 1) + ": " + keys_text(b.first, b.last - 1) +
       "   m = " + num(b.m_new) +
       (b.grew() && !std::isinf(b.m_old) ? " (grew, factor " + num(b.rescale) + ")" : "") + "   " +
       s_.ell + " = " + num(b.l_new));
}

std::string Narrator::run_online(int block) {
  header(true);
  const OnlineSoftmaxWalk w = online_softmax_walk(t_, i_, h_, block);
  const std::string& ell = s_.ell;
  out_ << "\nOnline softmax (FlashAttention): softmax and weighted sum in one pass over the keys,\n"
       << "in blocks of B = " << block << (block == 1 ? " key" : " keys")
       << ", never storing the row of scores or weights\n";
  // Every x_j, as the blocks will read them.
  {
    Segment xs;
    for (int j = 0; j < t_.n_k && static_cast<int>(xs.size()) < 2 * kMaxDetailKeys; ++j)
      xs.push_back("x_" + kn(j) + " = " +
                   (std::isinf(w.x[static_cast<size_t>(j)]) ? std::string(s_.neg_inf)
                                                            : num(w.x[static_cast<size_t>(j)])));
    if (t_.n_k > 2 * kMaxDetailKeys)
      xs.push_back(std::string(s_.ellipsis) + " " + std::to_string(t_.n_k - 2 * kMaxDetailKeys) +
                   " more");
    line(std::string("x_j = the masked score of key j") +
         (t_.temperature != 1.0f ? " divided by T = " + num(t_.temperature) : "") +
         (visible_count() < t_.n_k ? " (" + std::string(s_.neg_inf) + " = hidden)" : "") + ":");
    std::string row;
    for (const std::string& x : xs) {
      if (!row.empty() && display_width(row) + display_width(x) + 3 > kLineWidth - 6) {
        line("  " + row);
        row.clear();
      }
      row += (row.empty() ? "" : "   ") + x;
    }
    if (!row.empty()) line("  " + row);
  }
  line("Three running values: m, the largest x_j so far; " + ell + " = " + s_.sum + " exp(x_j " +
       s_.minus + " m) so far;");
  line("acc = " + std::string(s_.sum) + " exp(x_j " + s_.minus + " m) " + s_.times +
       " v_j so far. Per block: m_new = max(m, the block's largest x_j);");
  line("when m grows, the old " + ell + " and acc were measured against the old m, so both are");
  line("multiplied by e^(m " + std::string(s_.minus) + " m_new) " + s_.le +
       " 1; then p_j = exp(x_j " + s_.minus + " m_new) is added to " + ell + " and p_j " +
       s_.times + " v_j to acc.");

  const ScoreTraffic tr = score_traffic(t_, block);
  line("Memory for this shape (float32, " + std::to_string(t_.num_heads) +
       (t_.num_heads == 1 ? " head" : " heads") + "): the standard way writes S = QK" +
       (r_.unicode ? "ᵀ" : "^T") + " and P = softmax(S),");
  line("each " + std::to_string(t_.n_q) + " " + s_.times + " " + std::to_string(t_.n_k) +
       " per head (" + bytes_text(tr.matrix_bytes) + "), and reads both back: " +
       bytes_text(tr.traffic_bytes) + " of memory traffic that FlashAttention");
  line("never makes; it keeps only B = " + std::to_string(block) + " scores (" +
       bytes_text(tr.block_bytes) + ") per query row on chip, plus m, " + ell + " and acc.");
  out_ << "\n";
  line("Start: m = " + std::string(s_.neg_inf) + ", " + ell +
       " = 0, acc = " + vec_text(std::vector<double>(static_cast<size_t>(t_.d_v), 0.0)));

  const int nb = static_cast<int>(w.blocks.size());
  const bool elide = nb > kHeadBlocks + kTailBlocks;
  for (int b = 0; b < nb; ++b) {
    const bool full = !elide || b < kHeadBlocks || b >= nb - kTailBlocks;
    if (full) {
      online_block(w, static_cast<size_t>(b));
      continue;
    }
    const int middle = nb - kHeadBlocks - kTailBlocks;
    if (middle > kMaxSummaryBlocks) {
      if (b == kHeadBlocks) {
        out_ << "\n";
        line(std::string(s_.ellipsis) + " blocks " + std::to_string(kHeadBlocks + 1) + ".." +
             std::to_string(nb - kTailBlocks) + " the same way");
      }
      continue;
    }
    if (b == kHeadBlocks) out_ << "\n";
    online_block_summary(w.blocks[static_cast<size_t>(b)], static_cast<size_t>(b));
  }

  out_ << "\n";
  if (w.empty_row) {
    line("End: every key was hidden, so " + ell + " = 0 and there is nothing to divide by;");
    line("the output is the zero vector (no NaN), as in the standard softmax.");
  } else {
    const std::vector<double>& acc = w.blocks.back().acc_new;
    const double l = w.blocks.back().l_new;
    line("End: divide once, output = acc / " + ell + " (the standard softmax divides every weight");
    line("by its sum before the weighted sum; here the division comes last, once per component)");
    for (int c = 0; c < t_.d_v; ++c) {
      if (t_.d_v > kMaxComponents && c == 4) {
        line(std::string(s_.ellipsis) + " components 4.." + std::to_string(t_.d_v - 3) +
             " are divided the same way");
        c = t_.d_v - 3;
        continue;
      }
      line("out[" + std::to_string(c) + "] = " + num(acc[static_cast<size_t>(c)]) + " / " + num(l) +
           " = " + num(w.output[static_cast<size_t>(c)]));
    }
  }
  // The standard softmax's output, as explain's stage 5 prints it, beside the walk's.
  const std::string walk = vec_text(w.output), standard = row_text(*output_, row_);
  if (walk == standard) {
    line("The standard softmax (explain, stage 5) prints the same output, digit for digit.");
  } else {
    double gap = 0.0;
    for (int c = 0; c < t_.d_v; ++c)
      gap = std::max(gap, std::abs(w.output[static_cast<size_t>(c)] - (*output_)(row_, c)));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1e", gap);
    line("The standard softmax (explain, stage 5) prints " + standard + ";");
    line(std::string("the engine computes in float32, this walk in double: they differ by ") + buf +
         ".");
  }
  line("output_" + qn() + " = " + walk + "   (the attention output for " + quoted_query() + ")");
  return out_.str();
}

}  // namespace attn::narration
