// Stages 1 and 2, scores and scaling: each dot product q·k_j term by term, then the division by
// √d_k (or the chosen scale) and why it is there.
#include <algorithm>
#include <cmath>

#include "explain/narrator.h"

namespace attn::narration {

// q·k_j written term by term: "0.2×0.1 + … = 0.02 + … = 0.54" (wide vectors abbreviated).
std::vector<Segment> Narrator::dot_segments(int j) const {
  const int d = t_.d_k;
  Segment terms, prods;
  double middle = 0.0;
  for (int c = 0; c < d; ++c) {
    double a = (*q_)(i_, c), b = (*k_)(j, c);
    bool shown = d <= kMaxDims || c < 3 || c >= d - 2;
    if (!shown) {
      middle += a * b;
      if (c == 3) {
        terms.push_back(std::string(s_.ellipsis) + " " + std::to_string(d - 5) + " more terms " +
                        s_.ellipsis);
        prods.push_back("[" + std::to_string(d - 5) + " more: " + num(0) + "]");
      }
      continue;
    }
    // Inside a sum a negative first factor gets parentheses too, so every term reads
    // "+ (−0.23)×(−0.84)" instead of the puzzling "− 0.23×(−0.84)".
    std::string fa = num(a);
    if (!terms.empty() && a < 0 && fa.rfind(s_.minus, 0) == 0) fa = "(" + fa + ")";
    terms.push_back(product(fa, num(b), s_));
    prods.push_back(num(a * b));
  }
  if (d > kMaxDims) prods[3] = "[" + std::to_string(d - 5) + " more: " + num(middle) + "]";
  std::vector<Segment> segs{terms};
  if (d > 1) segs.push_back(prods);
  segs.push_back({num((*scores_)(row_, j))});
  return segs;
}

// Bahdanau's additive score for each key: W_q q once, then per key W_k k_j, the sum, its tanh
// and the dot product with v, component by component.
void Narrator::additive_scores() {
  const AdditiveScore& a = *t_.additive;
  const int d_a = static_cast<int>(a.v.size()), d_k = t_.d_k;
  heading(1, "Scores: how well " + quoted_query() + " matches each key " + s_.dash +
                 " the additive score v" + (r_.unicode ? "ᵀ" : "^T") + " tanh(W_q q + W_k k_j)");
  line("(Bahdanau et al. 2014: a small network with one tanh layer of d_a = " +
       std::to_string(d_a) + " units scores each pair,");
  line("instead of the dot product q " + std::string(s_.dot) + " k_j; W_q and W_k are d_a " +
       s_.times + " d_k = " + std::to_string(d_a) + " " + s_.times + " " + std::to_string(d_k) +
       ", v has d_a entries)");
  auto project = [&](const Matrix& w, const Matrix& x, int row) {
    std::vector<double> out(static_cast<size_t>(d_a), 0.0);
    for (int u = 0; u < d_a; ++u)
      for (int c = 0; c < d_k; ++c) out[static_cast<size_t>(u)] += double(w(u, c)) * x(row, c);
    return out;
  };
  auto text = [&](const std::vector<double>& v) {
    std::vector<std::string> e;
    for (double x : v) e.push_back(num(x));
    return vector_text(e, s_);
  };
  const std::vector<double> wq = project(a.w_q, *q_, i_);
  line("W_q q_" + qn() + " = " + text(wq) + "   (once for this query)");
  std::vector<double> v(static_cast<size_t>(d_a));
  for (int u = 0; u < d_a; ++u) v[static_cast<size_t>(u)] = a.v[u];
  line("v = " + text(v));
  for (int j : detail_) {
    const std::vector<double> wk = project(a.w_k, *k_, j);
    std::vector<double> sum(static_cast<size_t>(d_a)), th(static_cast<size_t>(d_a));
    for (size_t u = 0; u < sum.size(); ++u) {
      sum[u] = wq[u] + wk[u];
      th[u] = std::tanh(sum[u]);
    }
    out_ << "\n";
    line("key " + kn(j) + ":  W_k k_" + kn(j) + " = " + text(wk));
    line("  W_q q + W_k k = " + text(sum) + "   tanh " + s_.arrow + " " + text(th));
    Segment terms, prods;
    for (int u = 0; u < d_a; ++u) {
      const bool shown = d_a <= kMaxDims || u < 3 || u >= d_a - 2;
      if (!shown) {
        if (u == 3) {
          double middle = 0.0;
          for (int m = 3; m < d_a - 2; ++m)
            middle += v[static_cast<size_t>(m)] * th[static_cast<size_t>(m)];
          terms.push_back(std::string(s_.ellipsis) + " " + std::to_string(d_a - 5) +
                          " more terms " + s_.ellipsis);
          prods.push_back("[" + std::to_string(d_a - 5) + " more: " + num(middle) + "]");
        }
        continue;
      }
      std::string fa = num(v[static_cast<size_t>(u)]);
      if (!terms.empty() && v[static_cast<size_t>(u)] < 0 && fa.rfind(s_.minus, 0) == 0)
        fa = "(" + fa + ")";
      terms.push_back(product(fa, num(th[static_cast<size_t>(u)]), s_));
      prods.push_back(num(v[static_cast<size_t>(u)] * th[static_cast<size_t>(u)]));
    }
    std::vector<Segment> segs{terms};
    if (d_a > 1) segs.push_back(prods);
    segs.push_back({num((*scores_)(row_, j))});
    out_ << equation("     ", "v " + std::string(s_.dot) + " tanh(" + s_.ellipsis + ")", segs, s_);
  }
  if (!cell_ && rest_count() > 0)
    line("The other " + std::to_string(rest_count()) + " keys are scored the same way.");
}

void Narrator::scores() {
  if (t_.additive) {
    additive_scores();
    return;
  }
  heading(1, "Scores: how well " + quoted_query() + " matches each key " + s_.dash +
                 " the dot product q " + s_.dot + " k_j");
  if (t_.d_k > kMaxDims)
    line("(d_k = " + std::to_string(t_.d_k) +
         ": the first 3 and last 2 products are shown, the middle ones summed)");
  std::vector<std::string> lhs;
  size_t w = 0;
  for (int j : detail_) {
    lhs.push_back("q_" + qn() + " " + s_.dot + " k_" + kn(j));
    w = std::max(w, display_width(lhs.back()));
  }
  for (size_t r = 0; r < detail_.size(); ++r)
    out_ << equation("   ", pad_right(lhs[r], w), dot_segments(detail_[r]), s_);
  if (!cell_ && rest_count() > 0) {
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < t_.n_k; ++j)
      if (!is_detail(j)) {
        lo = std::min<double>(lo, (*scores_)(row_, j));
        hi = std::max<double>(hi, (*scores_)(row_, j));
      }
    line("The other " + std::to_string(rest_count()) +
         " keys are computed the same way; their scores run from " + num(lo) + " to " + num(hi) +
         ".");
  }
}

void Narrator::scaling() {
  const size_t w = key_label_width() + 1;
  if (t_.additive && !t_.scale_overridden) {
    heading(2, "Scaling: none for the additive score (scale = 1)");
    line("Its tanh keeps every term in [" + std::string(s_.minus) +
         "1, 1], so the score is at most " + s_.sum + "|v_a| whatever d_k is:");
    line(std::string("no ") + s_.sqrt + "d_k is needed. scaled = scores.");
    return;
  }
  if (!t_.scale_overridden) {
    const double root = std::sqrt(static_cast<double>(t_.d_k));
    heading(2, std::string("Scaling: divide by ") + s_.sqrt + "d_k = " + s_.sqrt +
                   std::to_string(t_.d_k) + " = " + num(root) + " (the same as " + s_.times + " " +
                   num(t_.scale) + ")");
    line("Why: a dot product of d_k terms spreads out like " + std::string(s_.sqrt) +
         "d_k. Dividing keeps the scores in a range");
    line("where the softmax stays soft instead of putting almost all weight on one key.");
    for (int j : detail_)
      line(pad_right(kn(j) + ":", w) + " " + num((*scores_)(row_, j)) + " " + s_.divide + " " +
           num(root) + " = " + num((*scaled_)(row_, j)));
  } else {
    heading(2, std::string("Scaling: multiply by the chosen scale s = ") + num(t_.scale) +
                   " (instead of 1/" + s_.sqrt +
                   "d_k = " + num(1.0 / std::sqrt(static_cast<double>(t_.d_k))) + ")");
    for (int j : detail_)
      line(pad_right(kn(j) + ":", w) + " " + product(num((*scores_)(row_, j)), num(t_.scale), s_) +
           " = " + num((*scaled_)(row_, j)));
  }
  if (!cell_ && rest_count() > 0)
    line("(the other " + std::to_string(rest_count()) + " keys are scaled the same way)");
}

}  // namespace attn::narration
