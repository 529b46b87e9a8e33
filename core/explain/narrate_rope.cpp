// Stage 0 of a RoPE model's head: how the rotation turned the query row and the keys, pair by
// pair, with the numbers; and why it is there — the rotated score depends on the distance
// between the two tokens only, shown by moving the same q and k further along.
#include <algorithm>

#include "attention/rope.h"
#include "explain/narrator.h"

namespace attn::narration {

void Narrator::rope() {
  const RopeInputs& r = t_.rope;
  if (!r.enabled()) return;
  const Matrix& qb = r.q_before[static_cast<size_t>(h_)];
  const Matrix& kb = r.k_before[static_cast<size_t>(g_)];
  const int d = static_cast<int>(qb.cols()), half = d / 2;
  const int pq = r.q_position0 + i_;
  heading(0, "RoPE: each pair of dimensions (i, i + " + std::to_string(half) +
                 ") of q and k turns by position × θ_i");
  std::string freqs;
  for (int i = 0; i < half; ++i) {
    if (half > 5 && i == 3) {
      freqs += ", " + std::string(s_.ellipsis);
      i = half - 2;
      continue;
    }
    freqs +=
        (i ? ", θ_" : "θ_") + std::to_string(i) + " = " + num(r.inv_freq[static_cast<size_t>(i)]);
  }
  line(freqs);
  line("q_" + qn() + " before, at position " + std::to_string(pq) + " = " + row_text(qb, i_));
  // The first pair (the fastest turn) and the last (the slowest), with their numbers.
  const std::vector<RopePair> pairs = rope_pairs(qb, i_, pq, r.inv_freq);
  for (int i : {0, half - 1}) {
    if (i == half - 1 && half == 1) break;
    const RopePair& p = pairs[static_cast<size_t>(i)];
    const double a = p.angle, x0 = p.x0, x1 = p.x1;
    const std::string c = "cos " + num(a), s = "sin " + num(a);
    // A negative number after a sign is written in parentheses, as the dot products are.
    auto term = [this](double x) { return x < 0 ? "(" + num(x) + ")" : num(x); };
    line("pair " + std::to_string(i) + ": angle " + std::to_string(pq) + " × " +
         num(r.inv_freq[static_cast<size_t>(i)]) + " = " + num(a) + " rad");
    line("  q[" + std::to_string(i) + "] → " + num(x0) + "×" + c + " − " + term(x1) + "×" + s +
         " = " + num(p.y0));
    line("  q[" + std::to_string(i + half) + "] → " + num(x1) + "×" + c + " + " + term(x0) + "×" +
         s + " = " + num(p.y1));
  }
  line("q_" + qn() + " after = " + row_text(*q_, i_) + "   (row " + std::to_string(i_) +
       " of Q, what the scores use)");
  line(
      "Each key turns the same way by its own position: k_j before RoPE is row j of K before, "
      "after it row j of K.");
  // The rotated score depends on i − j only: the same q and k moved along give the same score.
  const int j = std::min(focus_key(), t_.n_k - 1);
  const int pk = r.k_position0 + j;
  const int shift = 7;
  const double here = rope_score(qb, i_, pq, kb, j, pk, r.inv_freq);
  const double moved = rope_score(qb, i_, pq + shift, kb, j, pk + shift, r.inv_freq);
  const double unrotated = rope_score(qb, i_, 0, kb, j, 0, r.inv_freq);
  line("Why: the score of two rotated vectors depends only on the distance between them.");
  line("  q_" + qn() + " · k_" + kn(j) + " at positions " + std::to_string(pq) + " and " +
       std::to_string(pk) + " (distance " + std::to_string(pq - pk) + "): " + num(here));
  line("  the same q and k at positions " + std::to_string(pq + shift) + " and " +
       std::to_string(pk + shift) + " (distance " + std::to_string(pq - pk) + "): " + num(moved));
  line("  without the rotation (both at position 0): " + num(unrotated));
}

}  // namespace attn::narration
