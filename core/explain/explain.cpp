// The narration of one query row (or one cell): every stage of attention written out with the
// trace's own numbers, the way a student works it by hand. It never recomputes attention; the
// only arithmetic here spells out terms (products, exponentials, sums) for the reader.
#include "explain/explain.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "attention/mask.h"
#include "explain/explain_text.h"

namespace attn {
namespace {

using namespace explain_text;

constexpr int kMaxDetailKeys = 12;  // longer rows narrate the 12 keys with the largest weights
constexpr int kMaxDims = 8;         // wider dot products show the first 3 and last 2 terms
constexpr int kMaxComponents = 6;   // wider outputs narrate the first 4 and last 2 components

// Stages in narration order; a --step id maps onto one of them.
enum Stage { kProjection, kScores, kScaled, kMasked, kWeights, kOutput, kOutProjection, kInputs };

std::string first_code_points(const std::string& s, size_t n) {
  size_t count = 0, k = 0;
  for (; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80 && count++ == n) break;
  return s.substr(0, k);
}

std::string range_text(int lo, int hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

class Narrator {
 public:
  Narrator(const AttentionTrace& t, const ExplainRequest& r)
      : t_(t),
        r_(r),
        s_(symbols(r.unicode)),
        p_(std::clamp(r.precision, 0, 10)),
        i_(r.query),
        h_(r.head),
        g_(t.kv_head_of.empty() ? 0 : t.kv_head_of[static_cast<size_t>(r.head)]),
        cell_(r.key.has_value()) {
    q_ = &t.step("q").heads[static_cast<size_t>(h_)];
    k_ = &t.step("k").heads[static_cast<size_t>(g_)];
    v_ = &t.step("v").heads[static_cast<size_t>(g_)];
    scores_ = &t.step("scores").heads[static_cast<size_t>(h_)];
    scaled_ = &t.step("scaled").heads[static_cast<size_t>(h_)];
    masked_ = &t.step("masked").heads[static_cast<size_t>(h_)];
    weights_ = &t.step("weights").heads[static_cast<size_t>(h_)];
    output_ = &t.step("output").heads[static_cast<size_t>(h_)];
    choose_detail_keys();
  }

  std::string run(const std::vector<Stage>& stages) {
    header(stages.size() > 2);
    for (Stage st : stages) {
      switch (st) {
        case kInputs:
          inputs();
          break;
        case kProjection:
          projection();
          break;
        case kScores:
          scores();
          break;
        case kScaled:
          scaling();
          break;
        case kMasked:
          mask();
          break;
        case kWeights:
          softmax();
          break;
        case kOutput:
          weighted_sum();
          break;
        case kOutProjection:
          output_projection();
          break;
      }
    }
    return out_.str();
  }

 private:
  // ---- numbers and names -------------------------------------------------------------------

  std::string num(double x) const { return compact(x, p_, r_.unicode); }
  std::string tok(const std::string& s) const { return r_.unicode ? s : ascii_only(s); }

  // A token as a subscript: the token itself when it is short and unique, else "tok#j".
  std::string label(const std::vector<std::string>& tokens, int idx) const {
    const std::string& raw = tokens[static_cast<size_t>(idx)];
    std::string s = tok(raw);
    std::replace(s.begin(), s.end(), ' ', '_');
    bool unique = std::count(tokens.begin(), tokens.end(), raw) == 1;
    if (!s.empty() && unique && display_width(s) <= 12) return s;
    return first_code_points(s, 8) + "#" + std::to_string(idx);
  }
  std::string qn() const { return label(t_.query_tokens, i_); }
  std::string kn(int j) const { return label(t_.key_tokens, j); }
  std::string quoted_query() const {
    return "\"" + tok(t_.query_tokens[static_cast<size_t>(i_)]) + "\"";
  }

  std::string row_text(const Matrix& m, int row) const {
    std::vector<std::string> e;
    for (Eigen::Index c = 0; c < m.cols(); ++c) e.push_back(num(m(row, c)));
    return vector_text(e, s_);
  }

  bool hidden(int j) const {
    if (static_cast<size_t>(h_) < t_.hidden.size() && t_.hidden[static_cast<size_t>(h_)].size())
      return t_.hidden[static_cast<size_t>(h_)](i_, j) != 0;
    return std::isinf((*masked_)(i_, j));  // a backend without reasons: −∞ means hidden
  }
  uint8_t reason(int j) const {
    if (static_cast<size_t>(h_) < t_.hidden.size() && t_.hidden[static_cast<size_t>(h_)].size())
      return t_.hidden[static_cast<size_t>(h_)](i_, j);
    return hidden(j) ? kHiddenBias : kVisible;
  }
  bool empty_row() const {
    if (static_cast<size_t>(h_) < t_.empty_row.size() &&
        static_cast<size_t>(i_) < t_.empty_row[static_cast<size_t>(h_)].size())
      return t_.empty_row[static_cast<size_t>(h_)][static_cast<size_t>(i_)];
    for (int j = 0; j < t_.n_k; ++j)
      if (!hidden(j)) return false;
    return true;
  }
  int visible_count() const {
    int n = 0;
    for (int j = 0; j < t_.n_k; ++j) n += hidden(j) ? 0 : 1;
    return n;
  }

  // Rows with more than kMaxDetailKeys keys narrate the visible keys with the largest weights.
  void choose_detail_keys() {
    if (cell_) {
      detail_ = {*r_.key};
      return;
    }
    std::vector<int> idx(static_cast<size_t>(t_.n_k));
    std::iota(idx.begin(), idx.end(), 0);
    if (t_.n_k > kMaxDetailKeys) {
      std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
        if (hidden(a) != hidden(b)) return !hidden(a);
        return (*weights_)(i_, a) > (*weights_)(i_, b);
      });
      idx.resize(kMaxDetailKeys);
      std::sort(idx.begin(), idx.end());
    }
    detail_ = idx;
  }
  bool is_detail(int j) const {
    return std::find(detail_.begin(), detail_.end(), j) != detail_.end();
  }
  // Queries and keys are different sequences (an encoder–decoder's cross-attention).
  bool cross() const { return t_.query_tokens != t_.key_tokens; }
  int rest_count() const { return t_.n_k - static_cast<int>(detail_.size()); }
  int rest_visible() const {
    int n = 0;
    for (int j = 0; j < t_.n_k; ++j) n += !hidden(j) && !is_detail(j) ? 1 : 0;
    return n;
  }
  size_t key_label_width() const {
    size_t w = 0;
    for (int j : detail_) w = std::max(w, display_width(kn(j)));
    return w;
  }

  void heading(int number, const std::string& text) {
    out_ << "\n" << number << ". " << text << "\n";
  }
  void line(const std::string& text) { out_ << "   " << text << "\n"; }

  // ---- header and inputs -------------------------------------------------------------------

  void header(bool full) {
    out_ << "Attention for query " << i_ << " " << quoted_query();
    if (cell_)
      out_ << " and key " << *r_.key << " \"" << tok(t_.key_tokens[static_cast<size_t>(*r_.key)])
           << "\"";
    if (!t_.name.empty()) out_ << " " << s_.dash << " " << tok(t_.name);
    out_ << "\n";
    const int H = t_.num_heads, Hkv = t_.num_kv_heads;
    if (H == 1) {
      out_ << "  One attention head.\n";
    } else {
      out_ << "  Head " << h_ << " of " << H << " reads key/value head " << g_;
      if (Hkv == H)
        out_ << " (multi-head: each query head has its own K/V head).\n";
      else if (Hkv == 1)
        out_ << " (MQA: all " << H << " query heads share the one K/V head).\n";
      else
        out_ << " (GQA: " << H / Hkv << " query heads share each K/V head).\n";
    }
    if (!full) return;
    if (cross())
      out_ << "  Cross-attention: " << t_.n_q << " query tokens attend to the " << t_.n_k
           << " key/value tokens of another sequence.\n";
    std::string hq = H > 1 ? "H=" + std::to_string(H) + ", " : "";
    std::string hkv = H > 1 ? "H_kv=" + std::to_string(Hkv) + ", " : "";
    out_ << "  Shapes: Q (" << hq << "n_q=" << t_.n_q << ", d_k=" << t_.d_k << ")   K (" << hkv
         << "n_k=" << t_.n_k << ", d_k=" << t_.d_k << ")   V (" << hkv << "n_k=" << t_.n_k
         << ", d_v=" << t_.d_v << ")\n";
    out_ << "  Numbers are rounded to " << p_ << " decimal" << (p_ == 1 ? "" : "s")
         << "; every sum and product uses the unrounded values.\n";
  }

  // The query row and the key/value rows as a small table.
  void key_value_table(bool with_query) {
    if (with_query)
      line("q_" + qn() + " = " + row_text(*q_, i_) + "   (row " + std::to_string(i_) + " of Q" +
           (t_.num_heads > 1 ? " for head " + std::to_string(h_) : "") + ")");
    std::vector<std::string> js, names, ks, vs;
    for (int j : detail_) {
      js.push_back(std::to_string(j));
      names.push_back(tok(t_.key_tokens[static_cast<size_t>(j)]));
      ks.push_back(row_text(*k_, j));
      vs.push_back(row_text(*v_, j));
    }
    size_t wj = 1, wn = 3, wk = 3, wv = 3;
    for (size_t r = 0; r < js.size(); ++r) {
      wj = std::max(wj, display_width(js[r]));
      wn = std::max(wn, std::min<size_t>(display_width(names[r]), 16));
      wk = std::max(wk, display_width(ks[r]));
      wv = std::max(wv, display_width(vs[r]));
    }
    line("  " + pad_left("j", wj) + "  " + pad_right("key", wn) + "  " + pad_right("k_j", wk) +
         "  v_j");
    for (size_t r = 0; r < js.size(); ++r)
      line("  " + pad_left(js[r], wj) + "  " + pad_right(names[r], wn) + "  " +
           pad_right(ks[r], wk) + "  " + vs[r]);
    if (!cell_ && rest_count() > 0)
      line("  " + std::string(s_.ellipsis) + " and " + std::to_string(rest_count()) +
           " more keys (the 12 shown are the visible keys with the largest weights)");
  }

  void inputs() {
    out_ << (cell_ ? "\nInputs: the query row and this key's k and v rows"
                   : "\nInputs: the query row and every key and value row")
         << (t_.num_kv_heads > 1 ? " (K and V of key/value head " + std::to_string(g_) + ")" : "")
         << "\n";
    key_value_table(true);
  }

  // ---- 0. projection -----------------------------------------------------------------------

  void projection() {
    const TraceStep* x = t_.find("x");
    if (!x) {
      inputs();
      return;
    }
    heading(0, "Projection: learned weight matrices turn token embeddings into q, k and v");
    const Matrix& X = x->heads[0];
    const std::string d_model = std::to_string(X.cols());
    line("x_" + qn() + " = " + row_text(X, i_) + "   (row " + std::to_string(i_) +
         " of X, d_model = " + d_model + ")");
    line("q_" + qn() + " = x_" + qn() + " " + s_.dot + " W_Q^(" + std::to_string(h_) +
         ") = " + row_text(*q_, i_) + "   (W_Q is " + d_model + " " + s_.times + " " +
         std::to_string(t_.d_k) + ": d_model " + s_.times + " d_k)");
    const TraceStep* x_kv = t_.find("x_kv");
    const std::string src = x_kv ? "x_kv_j" : "x_j";
    if (x_kv)
      line("Keys and values come from the other sequence X_kv (cross-attention), key token j:");
    else
      line("Keys and values come from the same tokens (self-attention), token j:");
    line("  k_j = " + src + " " + s_.dot + " W_K^(" + std::to_string(g_) + ") and v_j = " + src +
         " " + s_.dot + " W_V^(" + std::to_string(g_) + ")   (key/value head " +
         std::to_string(g_) + "; W_V is " + d_model + " " + s_.times + " " +
         std::to_string(t_.d_v) + ")");
    if (cell_) {
      const Matrix& XK = x_kv ? x_kv->heads[0] : X;
      line(src.substr(0, src.size() - 1) + kn(*r_.key) + " = " + row_text(XK, *r_.key));
    }
    key_value_table(false);
  }

  // ---- 1. scores ---------------------------------------------------------------------------

  // q·k_j written term by term: "0.2×0.1 + … = 0.02 + … = 0.54" (wide vectors abbreviated).
  std::vector<Segment> dot_segments(int j) const {
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
    segs.push_back({num((*scores_)(i_, j))});
    return segs;
  }

  void scores() {
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
          lo = std::min<double>(lo, (*scores_)(i_, j));
          hi = std::max<double>(hi, (*scores_)(i_, j));
        }
      line("The other " + std::to_string(rest_count()) +
           " keys are computed the same way; their scores run from " + num(lo) + " to " + num(hi) +
           ".");
    }
  }

  // ---- 2. scaling --------------------------------------------------------------------------

  void scaling() {
    const size_t w = key_label_width() + 1;
    if (!t_.scale_overridden) {
      const double root = std::sqrt(static_cast<double>(t_.d_k));
      heading(2, std::string("Scaling: divide by ") + s_.sqrt + "d_k = " + s_.sqrt +
                     std::to_string(t_.d_k) + " = " + num(root) + " (the same as " + s_.times +
                     " " + num(t_.scale) + ")");
      line("Why: a dot product of d_k terms spreads out like " + std::string(s_.sqrt) +
           "d_k. Dividing keeps the scores in a range");
      line("where the softmax stays soft instead of putting almost all weight on one key.");
      for (int j : detail_)
        line(pad_right(kn(j) + ":", w) + " " + num((*scores_)(i_, j)) + " " + s_.divide + " " +
             num(root) + " = " + num((*scaled_)(i_, j)));
    } else {
      heading(2, std::string("Scaling: multiply by the chosen scale s = ") + num(t_.scale) +
                     " (instead of 1/" + s_.sqrt +
                     "d_k = " + num(1.0 / std::sqrt(static_cast<double>(t_.d_k))) + ")");
      for (int j : detail_)
        line(pad_right(kn(j) + ":", w) + " " + product(num((*scores_)(i_, j)), num(t_.scale), s_) +
             " = " + num((*scaled_)(i_, j)));
    }
    if (!cell_ && rest_count() > 0)
      line("(the other " + std::to_string(rest_count()) + " keys are scaled the same way)");
  }

  // ---- 3. mask -----------------------------------------------------------------------------

  std::string reason_text(uint8_t bits, int j) const {
    MaskGeometry geo(t_.mask, t_.n_q, t_.n_k);
    std::string s = describe_reason(bits, t_.mask, geo.position(i_), j);
    return r_.unicode ? unicode_reason(s) : s;
  }

  // The rules that are active, in words, with this query's position filled in.
  void mask_rules() {
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
      if (m.causal == CausalAlign::kNone)
        line("Query " + std::to_string(i_) + " sits at position p = " + pos + ".");
      if (m.causal != CausalAlign::kNone)
        line("Sliding window W = " + std::to_string(W) + " (with causal): keys p " + s_.minus +
             " W " + s_.le + " j " + s_.le + " p are visible, i.e. keys " +
             range_text(std::max(0, p - W), std::min(p, t_.n_k - 1)) + ".");
      else
        line("Sliding window W = " + std::to_string(W) + ": key j is visible only when |p " +
             s_.minus + " j| " + s_.le + " " + std::to_string(W) + ", i.e. keys " +
             range_text(std::max(0, p - W), std::min(p + W, t_.n_k - 1)) + ".");
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
      line("Padding: key length L = " + std::to_string(*m.key_length) + ", so keys j " + s_.ge +
           " " + std::to_string(*m.key_length) + " are padding, hidden from every query.");
    if (!m.custom.empty())
      line("Custom mask: 1 = may attend, 0 = hidden (row " + std::to_string(i_) +
           (m.custom.size() > 1 ? " of head " + std::to_string(h_) + "'s mask)."
                                : " of the mask)."));
    if (!m.bias.empty())
      line(std::string("Bias: added to the scaled score (masked = scaled + bias); a bias of ") +
           s_.neg_inf + " hides the key.");
  }

  // Visible only because of a global position: outside the window, yet not hidden by it.
  bool relaxed_by_global(int j) const {
    const MaskSpec& m = t_.mask;
    if (!m.window || m.global.empty() || hidden(j)) return false;
    MaskGeometry geo(m, t_.n_q, t_.n_k);
    const int p = geo.position(i_), W = *m.window;
    bool inside = m.causal != CausalAlign::kNone ? (j >= p - W && j <= p) : std::abs(p - j) <= W;
    return !inside;
  }

  std::string masked_value_text(int j) const {
    const Matrix* bias = mask_for_head(t_.mask.bias, h_);
    const double sc = (*scaled_)(i_, j), mk = (*masked_)(i_, j);
    if (hidden(j)) return s_.neg_inf;
    if (!bias) return num(mk);
    const double b = (*bias)(i_, j);
    return join_sum({num(sc), num(b)}, s_) + " = " + num(mk);
  }

  void mask_key_line(int j, size_t w) {
    const bool hid = hidden(j);
    std::string text = pad_right(kn(j), w) + "  " + pad_right(hid ? "hidden" : "visible", 7) +
                       "  " + masked_value_text(j);
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
  void mask_groups() {
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

  void mask() {
    const MaskSpec& m = t_.mask;
    if (m.empty()) {
      heading(3, "Mask: none " + std::string(s_.dash) + " every key is visible to " +
                     quoted_query() +
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

  // ---- 4. softmax --------------------------------------------------------------------------

  std::string x_name(int j) const { return "x_" + kn(j); }

  void softmax() {
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
        y[static_cast<size_t>(j)] = (*masked_)(i_, j) / T;
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
          line(pad_right("x_" + kn(j), w + 2) + " = " + num((*masked_)(i_, j)) + " " + s_.divide +
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
      terms.push_back("[" + std::to_string(rest_visible()) +
                      " more keys: " + num(sum - sum_detail) + "]");
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
      const double wt = (*weights_)(i_, j);
      if (!hidden(j)) ws.push_back(num(wt));
      if (hidden(j))
        line(lhs + " = 0   (hidden)");
      else
        line(lhs + " = " + num(e[uj]) + " / " + num(sum) + " = " + num(wt));
    }
    if (cell_) return;
    double total = 0.0, rest = 0.0;
    for (int j = 0; j < t_.n_k; ++j) {
      total += (*weights_)(i_, j);
      if (!is_detail(j)) rest += (*weights_)(i_, j);
    }
    if (rest_visible() > 0)
      ws.push_back("[" + std::to_string(rest_visible()) + " more keys: " + num(rest) + "]");
    out_ << equation("   ", "Check: " + std::string(s_.sum) + " w", {ws, {num(total)}}, s_);
  }

  // ---- 5. weighted sum ---------------------------------------------------------------------

  void weighted_sum() {
    const int dv = t_.d_v;
    if (cell_) {
      const int j = *r_.key;
      heading(5, "Contribution of key \"" + tok(t_.key_tokens[static_cast<size_t>(j)]) +
                     "\" to the output: w_" + kn(j) + " " + s_.times + " v_" + kn(j));
      std::vector<std::string> parts;
      for (int c = 0; c < dv; ++c) parts.push_back(num((*weights_)(i_, j) * (*v_)(j, c)));
      line("w_" + kn(j) + " " + s_.times + " v_" + kn(j) + " = " + num((*weights_)(i_, j)) + " " +
           s_.times + " " + row_text(*v_, j) + " = " + vector_text(parts, s_));
      line("The output adds this to the other keys' shares: output_" + qn() + " = " +
           row_text(*output_, i_));
      return;
    }
    heading(5, std::string("Weighted sum: output = ") + s_.sum + "_j w_j " + s_.times +
                   " v_j, one component at a time");
    if (empty_row()) {
      line("Every weight is 0, so output_" + qn() + " = " + row_text(*output_, i_) +
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
        const double wt = (*weights_)(i_, j), v = (*v_)(j, c);
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
      segs.push_back({num((*output_)(i_, c))});
      out_ << equation("   ", "out[" + std::to_string(c) + "]", segs, s_);
    }
    line("output_" + qn() + " = " + row_text(*output_, i_) + "   (the attention output for " +
         quoted_query() + ")");
    blend();
  }

  // "a blend of 46.1% v_Fear + 53.9% v_is": what the weighted sum means, for short rows.
  void blend() {
    std::vector<std::string> parts;
    for (int j = 0; j < t_.n_k; ++j)
      if (!hidden(j) && (*weights_)(i_, j) > 0)
        parts.push_back(compact(100.0 * (*weights_)(i_, j), 1, r_.unicode) + "% v_" + kn(j));
    if (parts.empty() || parts.size() > 4) return;
    out_ << equation("   ", "As a blend of the values: output_" + qn(), {parts}, s_);
  }

  // ---- 6. output projection ----------------------------------------------------------------

  void output_projection() {
    const TraceStep* concat = t_.find("concat");
    if (!concat) return;
    const Matrix& C = concat->heads[0];
    const int H = t_.num_heads, dv = t_.d_v;
    const TraceStep* projected = t_.find("projected");
    heading(6, projected ? "Output projection: concatenate every head's output, then mix with W_O"
                         : "Concatenate every head's output");
    std::string bars;
    if (H <= 4 && dv <= 4) {
      for (int hh = 0; hh < H; ++hh)
        for (int c = 0; c < dv; ++c)
          bars += std::string(c == 0 ? (hh == 0 ? "[" : " | ") : ", ") + num(C(i_, hh * dv + c));
      bars += "]";
    } else {
      bars = row_text(C, i_);
    }
    std::string parts = "O_0";
    for (int hh = 1; hh < H; ++hh)
      if (H <= 4 || hh == H - 1)
        parts += " | " + (H > 4 && hh == H - 1 ? std::string(s_.ellipsis) + " | " : "") + "O_" +
                 std::to_string(hh);
    line("concat_" + qn() + " = [" + parts + "] = " + bars + "   (H " + s_.times +
         " d_v = " + std::to_string(H) + " " + s_.times + " " + std::to_string(dv) + ")");
    if (!projected) {
      line("This scenario has no W_O: the concatenation is the result.");
      return;
    }
    const Matrix& P = projected->heads[0];
    line("projected_" + qn() + " = concat_" + qn() + " " + s_.dot +
         " W_O + b_O = " + row_text(P, i_) + "   (W_O is " + std::to_string(H * dv) + " " +
         s_.times + " " + std::to_string(P.cols()) + ")");
    const TraceStep* contrib = t_.find("head_contrib");
    if (!contrib) return;
    line("The same result head by head: rows h" + std::string(s_.times) + "d_v.." + "(h+1)" +
         s_.times + "d_v" + s_.minus + "1 of W_O act on head h only.");
    Matrix sum = Matrix::Zero(1, P.cols());
    for (int hh = 0; hh < H; ++hh) {
      const Matrix& Ch = contrib->heads[static_cast<size_t>(hh)];
      sum += Ch.row(i_);
      line("  head " + std::to_string(hh) + ": O_" + std::to_string(hh) + " " + s_.dot +
           " W_O[rows " + range_text(hh * dv, hh * dv + dv - 1) + "] = " + row_text(Ch, i_) +
           (hh == h_ ? "   " + std::string(s_.arrow) + " this head" : ""));
    }
    Matrix b = P.row(i_) - sum;
    line("  b_O = " + row_text(b, 0) + "   (projected " + s_.minus + " the heads' sum)");
  }

  const AttentionTrace& t_;
  const ExplainRequest& r_;
  const Symbols& s_;
  const int p_, i_, h_, g_;
  const bool cell_;
  const Matrix *q_, *k_, *v_, *scores_, *scaled_, *masked_, *weights_, *output_;
  std::vector<int> detail_;  // keys narrated in full
  std::ostringstream out_;
};

// The stages a --step id asks for, or an empty list and an error.
std::vector<Stage> stages_for(const AttentionTrace& t, const std::string& step,
                              std::string& error) {
  const bool projection = t.find("x") != nullptr;
  std::vector<Stage> all;
  all.push_back(projection ? kProjection : kInputs);
  for (Stage s : {kScores, kScaled, kMasked, kWeights, kOutput}) all.push_back(s);
  if (t.find("concat")) all.push_back(kOutProjection);
  if (step.empty()) return all;
  if (!t.find(step)) {
    std::string ids;
    for (const TraceStep& s : t.steps) ids += (ids.empty() ? "" : ", ") + s.id;
    error = "--step: no step '" + step + "' in this trace; expected one of " + ids;
    return {};
  }
  if (step == "x" || step == "x_kv" || step == "q" || step == "k" || step == "v")
    return {projection ? kProjection : kInputs};
  if (step == "scores") return {kScores};
  if (step == "scaled") return {kScaled};
  if (step == "masked") return {kMasked};
  if (step == "weights") return {kWeights};
  if (step == "output") return {kOutput};
  return {kOutProjection};
}

std::string range_error(const char* flag, int value, int count, const std::string& what) {
  return std::string(flag) + ": " + std::to_string(value) + " is out of range; this scenario has " +
         std::to_string(count) + " " + what + " (valid: 0.." + std::to_string(count - 1) + ")";
}

}  // namespace

std::string explain(const AttentionTrace& trace, const ExplainRequest& request,
                    std::string& error) {
  error.clear();
  if (request.query < 0 || request.query >= trace.n_q) {
    error = range_error("--query", request.query, trace.n_q, "query rows");
    return "";
  }
  if (request.head < 0 || request.head >= trace.num_heads) {
    error = range_error("--head", request.head, trace.num_heads, "heads");
    return "";
  }
  if (request.key && (*request.key < 0 || *request.key >= trace.n_k)) {
    error = range_error("--key", *request.key, trace.n_k, "keys");
    return "";
  }
  for (const char* id : {"q", "k", "v", "scores", "scaled", "masked", "weights", "output"})
    if (!trace.find(id)) {
      error = std::string("the trace has no '") + id + "' step to explain";
      return "";
    }
  std::vector<Stage> stages = stages_for(trace, request.step, error);
  if (stages.empty()) return "";
  return Narrator(trace, request).run(stages);
}

}  // namespace attn
