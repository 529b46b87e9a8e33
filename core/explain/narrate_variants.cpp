// The variants' stages (cli.md, "Variants beyond masks"): Linformer's projected keys, the
// key–query convolution of Multi-Token Attention and its head mixing, each with the arithmetic
// of one cell in the trace's own numbers.
#include <algorithm>
#include <cmath>

#include "attention/multi_token.h"
#include "explain/narrator.h"

namespace attn::narration {

int Narrator::focus_key() const {
  if (cell_) return *r_.key;
  int best = -1;
  for (int j = 0; j < t_.n_k; ++j)
    if (!hidden(j) && (best < 0 || (*weights_)(row_, j) > (*weights_)(row_, best))) best = j;
  return std::max(best, 0);
}

void Narrator::linformer() {
  const LinformerSpec& l = t_.variants.linformer;
  const Matrix& E = l.e_of(g_);
  const Matrix& K = t_.step(StageId::kK).heads[static_cast<size_t>(g_)];
  const int n = static_cast<int>(K.rows()), k = l.k();
  heading(0, "Linformer: the " + std::to_string(n) +
                 " keys and values are projected to k = " + std::to_string(k) + " virtual keys");
  line(std::string("K̃ = E") + s_.dot + "K and Ṽ = F" + s_.dot +
       "V, with E and F of shape (k, n_k) = (" + std::to_string(k) + ", " + std::to_string(n) +
       "): virtual key j mixes every key,");
  line(std::string("k̃_j = ") + s_.sum + "_m E[j, m]" + s_.dot +
       "k_m. The query then compares itself with " + std::to_string(k) + " rows instead of " +
       std::to_string(n) + ":");
  line(std::to_string(t_.n_q) + " " + s_.times + " " + std::to_string(k) + " = " +
       std::to_string(t_.n_q * k) + " scores instead of " + std::to_string(t_.n_q) + " " +
       s_.times + " " + std::to_string(n) + " = " + std::to_string(t_.n_q * n) + " (O(n" + s_.dot +
       "k) instead of O(n²)).");
  const int j = focus_key();
  const std::vector<std::string>& names =
      t_.input_key_tokens.size() == static_cast<size_t>(n) ? t_.input_key_tokens : t_.key_tokens;
  Segment terms, values;
  double middle = 0;
  for (int m = 0; m < n; ++m) {
    const bool shown = n <= kMaxDims || m < 3 || m >= n - 2;
    if (!shown) {
      middle += double(E(j, m)) * K(m, 0);
      if (m == 3) {
        terms.push_back(std::string(s_.ellipsis) + " " + std::to_string(n - 5) + " more terms " +
                        s_.ellipsis);
        values.push_back("");
      }
      continue;
    }
    const std::string name =
        m < static_cast<int>(names.size()) ? label(names, m) : std::to_string(m);
    terms.push_back(product(num(E(j, m)), num(K(m, 0)), s_) + " (" + name + ")");
    values.push_back(num(double(E(j, m)) * K(m, 0)));
  }
  if (n > kMaxDims) values[3] = "[" + std::to_string(n - 5) + " more: " + num(middle) + "]";
  const Matrix& kp = t_.step(StageId::kKProj).heads[static_cast<size_t>(g_)];
  out_ << equation(
      "   ", kn(j) + "[0] = " + s_.sum + "_m E[" + std::to_string(j) + ", m]" + s_.times + "k_m[0]",
      {terms, values, {num(kp(j, 0))}}, s_);
  line(kn(j) + " = " + row_text(kp, j) + "   (every component the same way; Ṽ likewise with F)");
}

void Narrator::convolution() {
  const Matrix& th = t_.variants.multi_token.kernel_of(h_);
  const int c_q = static_cast<int>(th.rows()), c_k = static_cast<int>(th.cols());
  heading("3b",
          "Key–query convolution (Multi-Token Attention): neighbouring scores shape each one");
  line("θ is " + std::to_string(c_q) + " " + s_.times + " " + std::to_string(c_k) +
       ": C[i, j] = " + s_.sum + "_a " + s_.sum + "_b θ[a, b]" + s_.dot + "S[i" + s_.minus +
       "a, j" + s_.minus + "b+" + std::to_string(c_k / 2) + "],");
  line(std::string(c_q == 1 ? "so each query uses its own row only"
                            : "so query i also sees the " + std::to_string(c_q - 1) + " quer" +
                                  (c_q == 2 ? "y" : "ies") + " before it") +
       ", and the keys around j (centred on j) add their scores to j's.");
  line("Hidden cells and cells outside the matrix count as 0; after the sum hidden cells are " +
       std::string(s_.neg_inf) + " again.");
  const int j = focus_key();
  Segment terms, values;
  double total = 0;
  for (int a = 0; a < c_q; ++a)
    for (int b = 0; b < c_k; ++b) {
      const int si = conv_source_row(i_, a) - t_.first_row, sj = conv_source_col(j, b, c_k);
      double s = 0;
      std::string where = "outside";
      if (si >= 0 && si < before_conv_->rows() && sj >= 0 && sj < t_.n_k) {
        const double x = (*before_conv_)(si, sj);
        s = std::isfinite(x) ? x : 0.0;
        where = std::isfinite(x)
                    ? "S[" + std::to_string(si + t_.first_row) + ", " + std::to_string(sj) + "]"
                    : "hidden";
      }
      if (where == "outside") continue;
      terms.push_back(product(num(th(a, b)), num(s), s_) + " (" + where + ")");
      values.push_back(num(double(th(a, b)) * s));
      total += double(th(a, b)) * s;
    }
  if (terms.empty()) {
    terms.push_back("0");
    values.push_back("0");
  }
  out_ << equation("   ", "C[" + std::to_string(i_) + ", " + kn(j) + "]",
                   {terms, values, {num((*masked_)(row_, j))}}, s_);
  (void)total;
  const size_t w = key_label_width();
  line("Before " + std::string(s_.arrow) + " after, for the keys narrated here:");
  for (int jj : detail_)
    line("   " + pad_right(kn(jj), w) + "  " +
         (hidden(jj) ? std::string(s_.neg_inf) : num((*before_conv_)(row_, jj))) + " " + s_.arrow +
         " " + (hidden(jj) ? std::string(s_.neg_inf) : num((*masked_)(row_, jj))));
}

void Narrator::head_mixing() {
  const MultiTokenSpec& mt = t_.variants.multi_token;
  const int c = mt.mix_group_size(), g = h_ / c, a = h_ % c;
  const Matrix& M = mt.head_mix[static_cast<size_t>(g)];
  heading("4b", "Head mixing (Multi-Token Attention): head " + std::to_string(h_) +
                    " takes a blend of the weights of heads " + std::to_string(g * c) + ".." +
                    std::to_string(g * c + c - 1));
  line("w_j(head " + std::to_string(h_) + ") = " + s_.sum + "_b M[" + std::to_string(g) + ", " +
       std::to_string(a) + ", b]" + s_.dot + "w_j(head " + std::to_string(g * c) +
       "+b), with each "
       "head's softmax weights from step 4.");
  const int j = focus_key();
  Segment terms, values;
  for (int b = 0; b < c; ++b) {
    const double w = t_.head(StageId::kPreMix, g * c + b)(row_, j);
    terms.push_back(product(num(M(a, b)), num(w), s_) + " (head " + std::to_string(g * c + b) +
                    ")");
    values.push_back(num(double(M(a, b)) * w));
  }
  out_ << equation("   ", "w_" + kn(j) + "(mixed)", {terms, values, {num((*weights_)(row_, j))}},
                   s_);
  double sum = 0;
  for (int jj = 0; jj < t_.n_k; ++jj) sum += (*weights_)(row_, jj);
  line("The mixed row sums to " + num(sum) + " (" + s_.sum + "_b M[" + std::to_string(g) + ", " +
       std::to_string(a) + ", b] when every head's row sums to 1);");
  line("the output is computed from these mixed weights.");
}

}  // namespace attn::narration
