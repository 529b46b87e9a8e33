// Stage 5, the weighted sum: the output component by component as Σ_j w_j × v_j (or one key's
// contribution for a cell), and the output read as a blend of the values.
#include "explain/narrator.h"

namespace attn::narration {

void Narrator::weighted_sum() {
  const int dv = t_.d_v;
  if (cell_) {
    const int j = *r_.key;
    heading(5, "Contribution of key \"" + tok(t_.key_tokens[static_cast<size_t>(j)]) +
                   "\" to the output: w_" + kn(j) + " " + s_.times + " v_" + kn(j));
    std::vector<std::string> parts;
    for (int c = 0; c < dv; ++c) parts.push_back(num((*weights_)(row_, j) * (*v_)(j, c)));
    line("w_" + kn(j) + " " + s_.times + " v_" + kn(j) + " = " + num((*weights_)(row_, j)) + " " +
         s_.times + " " + row_text(*v_, j) + " = " + vector_text(parts, s_));
    line("The output adds this to the other keys' shares: output_" + qn() + " = " +
         row_text(*output_, row_));
    return;
  }
  heading(5, std::string("Weighted sum: output = ") + s_.sum + "_j w_j " + s_.times +
                 " v_j, one component at a time");
  if (empty_row()) {
    line("Every weight is 0, so output_" + qn() + " = " + row_text(*output_, row_) +
         " (the zero vector).");
    return;
  }
  if (visible_count() < t_.n_k)
    line("(hidden keys have weight 0 and add nothing, so they are left out)");
  for (int c = 0; c < dv; ++c) {
    if (dv > kMaxComponents && c == 4) {
      line(std::string(s_.ellipsis) + " components 4.." + std::to_string(dv - 3) +
           " are computed the same way");
      c = dv - 3;
      continue;
    }
    Segment terms, prods;
    double rest = 0.0;
    for (int j = 0; j < t_.n_k; ++j) {
      if (hidden(j)) continue;
      const double wt = (*weights_)(row_, j), v = (*v_)(j, c);
      if (!is_detail(j)) {
        rest += wt * v;
        continue;
      }
      terms.push_back(product(num(wt), num(v), s_));
      prods.push_back(num(wt * v));
    }
    if (rest_visible() > 0) {
      const std::string more =
          "[" + std::to_string(rest_visible()) + " more keys: " + num(rest) + "]";
      terms.push_back(more);
      prods.push_back(more);
    }
    std::vector<Segment> segs{terms};
    if (terms.size() > 1) segs.push_back(prods);
    segs.push_back({num((*output_)(row_, c))});
    out_ << equation("   ", "out[" + std::to_string(c) + "]", segs, s_);
  }
  line("output_" + qn() + " = " + row_text(*output_, row_) + "   (the attention output for " +
       quoted_query() + ")");
  blend();
}

// "a blend of 46.1% v_Fear + 53.9% v_is": what the weighted sum means, for short rows.
void Narrator::blend() {
  // Counted first: a label costs a pass over the tokens, and a long row is never blended.
  int count = 0;
  for (int j = 0; j < t_.n_k && count <= 4; ++j)
    count += !hidden(j) && (*weights_)(row_, j) > 0 ? 1 : 0;
  if (count == 0 || count > 4) return;
  std::vector<std::string> parts;
  for (int j = 0; j < t_.n_k; ++j)
    if (!hidden(j) && (*weights_)(row_, j) > 0)
      parts.push_back(compact(100.0 * (*weights_)(row_, j), 1, r_.unicode) + "% v_" + kn(j));
  if (parts.empty() || parts.size() > 4) return;
  out_ << equation("   ", "As a blend of the values: output_" + qn(), {parts}, s_);
}

}  // namespace attn::narration
