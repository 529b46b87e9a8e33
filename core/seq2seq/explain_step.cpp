// Writes out one attention step with its numbers (see explain_step.h).
#include "seq2seq/explain_step.h"

#include <cassert>
#include <cmath>

#include "attention/format.h"

namespace attn::s2s {

namespace {

struct Writer {
  int terms, decimals;
  std::string num(double x) const { return format_fixed(x, decimals); }
  // "(a, b, c, d, … 64 numbers)"
  std::string vec(const Mat<float>& v) const {
    std::string s = "(";
    const int n = static_cast<int>(v.size());
    for (int k = 0; k < std::min(n, terms); ++k) s += (k ? ", " : "") + num(v.data()[k]);
    if (n > terms) s += ", … " + std::to_string(n) + " numbers";
    return s + ")";
  }
  // "(a0)(b0) + (a1)(b1) + … (64 terms) = sum"
  std::string dot(const Mat<float>& a, const Mat<float>& b) const {
    std::string s;
    const int n = static_cast<int>(a.size());
    double sum = 0;
    for (int k = 0; k < n; ++k) {
      sum += static_cast<double>(a.data()[k]) * b.data()[k];
      if (k < terms)
        s += (k ? " + " : "") + std::string("(") + num(a.data()[k]) + ")(" + num(b.data()[k]) + ")";
    }
    if (n > terms) s += " + … (" + std::to_string(n) + " terms)";
    return s + " = " + num(sum);
  }
};

}  // namespace

std::vector<std::string> explain_attention_step(const Model& m, const ForwardCache<float>& fc,
                                                int t, int j, int terms, int decimals) {
  assert(t >= 0 && t < static_cast<int>(fc.steps.size()) && j >= 0 && j < fc.src_len);
  const StepCache<float>& st = fc.steps[static_cast<size_t>(t)];
  const Score sc = m.config.score;
  const Writer w{terms, decimals};
  std::vector<std::string> out;
  const std::string ch = m.in_vocab.label(fc.src[0][static_cast<size_t>(j)]);
  out.push_back("step " + std::to_string(t) + ", input position " + std::to_string(j) + " ('" + ch +
                "'), score " + score_name(sc) + ": " + score_formula(sc));
  if (sc == Score::kNone) {
    out.push_back("no attention: the context is the last encoder state h_T = " + w.vec(fc.h_last) +
                  " at every step");
    return out;
  }
  const Mat<float> h = fc.hs[static_cast<size_t>(j)].row(0);
  const Mat<float> q = st.query.row(0);
  const std::string qn = sc == Score::kBahdanau ? "s_{i-1}" : "s_t";
  out.push_back(qn + " = " + w.vec(q));
  out.push_back("h_j = [forward; backward] = " + w.vec(h));
  switch (sc) {
    case Score::kDot:
      out.push_back("e_tj = s_t . h_j = " + w.dot(q, h));
      break;
    case Score::kGeneral:
    case Score::kLocalP:
    case Score::kLocalM: {
      const Mat<float> k = st.key.row(0);
      out.push_back("s_t^T W_g = " + w.vec(k));
      out.push_back("e_tj = (s_t^T W_g) . h_j = " + w.dot(k, h));
      break;
    }
    default: {
      const Mat<float> a = st.qw.row(0), b = fc.hu[static_cast<size_t>(j)].row(0);
      const Mat<float> th = st.tanh_j[static_cast<size_t>(j)].row(0);
      out.push_back("W_a " + qn + " = " + w.vec(a));
      out.push_back("U_a h_j = " + w.vec(b));
      out.push_back("tanh(W_a " + qn + " + U_a h_j) = " + w.vec(th));
      out.push_back("e_tj = v_a . tanh(…) = " + w.dot(m.params.att_v, th));
    }
  }
  if (sc == Score::kLocalP)
    out.push_back("p_t = S sigmoid(v_p^T tanh(W_p s_t)) = " + std::to_string(fc.lens[0]) +
                  " x sigmoid(" + w.num(st.pos_u(0, 0)) + ") = " + w.num(st.pos(0, 0)));
  if (sc == Score::kLocalM) out.push_back("p_t = min(t, S - 1) = " + w.num(st.pos(0, 0)));
  if (st.valid(0, j) == 0.0f) {
    out.push_back("|j - p_t| = " + w.num(std::abs(j - st.pos(0, 0))) +
                  " > D = " + std::to_string(m.config.window) +
                  ": outside the window, so e_tj is -inf and a_tj = 0");
    return out;
  }
  double mx = -1e300, z = 0;
  int visible = 0;
  for (int k = 0; k < fc.src_len; ++k)
    if (st.valid(0, k) != 0.0f) mx = std::max(mx, static_cast<double>(st.e(0, k)));
  for (int k = 0; k < fc.src_len; ++k)
    if (st.valid(0, k) != 0.0f) {
      z += std::exp(st.e(0, k) - mx);
      ++visible;
    }
  out.push_back("softmax over the " + std::to_string(visible) +
                " visible positions: exp(e_tj - max) / sum = exp(" + w.num(st.e(0, j)) + " - " +
                w.num(mx) + ") / " + w.num(z) + " = " + w.num(st.a(0, j)));
  if (sc == Score::kLocalP) {
    const double sigma = m.config.window / 2.0;
    out.push_back("Gaussian: exp(-(j - p_t)^2 / (2 sigma^2)), sigma = D/2 = " + w.num(sigma) +
                  ": " + w.num(st.gauss(0, j)) + "; a_tj = " + w.num(st.a(0, j)) + " x " +
                  w.num(st.gauss(0, j)) + " = " + w.num(st.alpha(0, j)));
  } else {
    out.push_back("a_tj = " + w.num(st.alpha(0, j)));
  }
  out.push_back("this position adds a_tj h_j = " + w.vec(st.alpha(0, j) * h) +
                " to c_t = " + w.vec(st.c.row(0)));
  return out;
}

}  // namespace attn::s2s
