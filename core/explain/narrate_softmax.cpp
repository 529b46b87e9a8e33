// Stage 4, the softmax: temperature, the subtracted maximum, each exponential, their sum and each
// weight, with a check that the weights sum to 1.
#include <algorithm>
#include <cmath>

#include "explain/narrator.h"

namespace attn::narration {

void Narrator::softmax() {
  const double T = t_.temperature;
  heading(4, "Softmax: turn the masked scores into weights that are positive and sum to 1");
  if (empty_row()) {
    line(std::string("Every key is hidden for this query ") + s_.arrow +
         " the weights are all 0 and the output is the zero");
    line("vector. The softmax of nothing is undefined (0/0), so the engine skips it: no NaN.");
    return;
  }
  std::vector<double> y(static_cast<size_t>(t_.n_k), 0.0);
  double m = -INFINITY;
  for (int j = 0; j < t_.n_k; ++j)
    if (!hidden(j)) {
      y[static_cast<size_t>(j)] = (*masked_)(row_, j) / T;
      m = std::max(m, y[static_cast<size_t>(j)]);
    }
  const size_t w = key_label_width();
  if (T != 1.0) {
    line("Temperature T = " + num(T) +
         ": divide every masked score by T first, x_j = masked_j / T.");
    line(
        "T > 1 flattens the weights toward uniform; T < 1 sharpens them toward the largest "
        "score.");
    for (int j : detail_)
      if (!hidden(j))
        line(pad_right("x_" + kn(j), w + 2) + " = " + num((*masked_)(row_, j)) + " " + s_.divide +
             " " + num(T) + " = " + num(y[static_cast<size_t>(j)]));
  }
  line("w_j = e_j / " + std::string(s_.sum) + ", where e_j = exp(x_j " + s_.minus +
       " m) and x_j is " + (T != 1.0 ? "masked_j / T." : "the masked score of key j."));
  line("m = max_j x_j = " + num(m) + " is subtracted first: every exp is then " + s_.le +
       " 1 and cannot overflow,");
  line("and the weights are unchanged because the common factor e^" + std::string(s_.minus) +
       "m cancels in e_j / " + s_.sum + ".");
  double sum = 0.0, sum_detail = 0.0;
  std::vector<double> e(static_cast<size_t>(t_.n_k), 0.0);
  for (int j = 0; j < t_.n_k; ++j)
    if (!hidden(j)) {
      e[static_cast<size_t>(j)] = std::exp(y[static_cast<size_t>(j)] - m);
      sum += e[static_cast<size_t>(j)];
      if (is_detail(j)) sum_detail += e[static_cast<size_t>(j)];
    }
  Segment terms;
  for (int j : detail_) {
    const size_t uj = static_cast<size_t>(j);
    std::string lhs = pad_right("e_" + kn(j), w + 2);
    if (hidden(j)) {
      line(lhs + " = exp(" + s_.neg_inf + ") = 0   (hidden)");
      continue;
    }
    std::string diff = join_sum({num(y[uj]), std::string(s_.minus) + num(m)}, s_);
    if (m < 0) diff = num(y[uj]) + " " + s_.minus + " (" + num(m) + ")";
    // The maximum's own difference can be float noise (1e-9); it is 0 to the reader.
    double arg = y[uj] - m;
    if (std::abs(arg) < 1e-6 * std::max(1.0, std::abs(m))) arg = 0.0;
    line(lhs + " = exp(" + diff + ") = exp(" + num(arg) + ") = " + num(e[uj]));
    terms.push_back(num(e[uj]));
  }
  if (cell_) {
    line(std::string(s_.sum) + " over the row's " + std::to_string(visible_count()) +
         " visible keys = " + num(sum));
  } else if (rest_visible() > 0) {
    terms.push_back("[" + std::to_string(rest_visible()) + " more keys: " + num(sum - sum_detail) +
                    "]");
    out_ << equation("   ", pad_right(s_.sum, w + 2), {terms, {num(sum)}}, s_);
  } else {
    std::vector<Segment> segs{terms};
    if (terms.size() > 1) segs.push_back({num(sum)});
    out_ << equation("   ", pad_right(s_.sum, w + 2), segs, s_);
  }
  Segment ws;
  for (int j : detail_) {
    const size_t uj = static_cast<size_t>(j);
    std::string lhs = pad_right("w_" + kn(j), w + 2);
    const double wt = (*softmax_weights_)(row_, j);
    if (!hidden(j)) ws.push_back(num(wt));
    if (hidden(j))
      line(lhs + " = 0   (hidden)");
    else
      line(lhs + " = " + num(e[uj]) + " / " + num(sum) + " = " + num(wt));
  }
  if (cell_) return;
  double total = 0.0, rest = 0.0;
  for (int j = 0; j < t_.n_k; ++j) {
    total += (*softmax_weights_)(row_, j);
    if (!is_detail(j)) rest += (*softmax_weights_)(row_, j);
  }
  if (rest_visible() > 0)
    ws.push_back("[" + std::to_string(rest_visible()) + " more keys: " + num(rest) + "]");
  out_ << equation("   ", "Check: " + std::string(s_.sum) + " w", {ws, {num(total)}}, s_);
}

}  // namespace attn::narration
