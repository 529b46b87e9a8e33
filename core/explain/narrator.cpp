// The Narrator's shared state and helpers: token labels, rows as text, which keys are hidden and
// which keys are narrated in full; every stage file uses them.
#include "explain/narrator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attn::narration {

std::string first_code_points(const std::string& s, size_t n) {
  size_t count = 0, k = 0;
  for (; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80 && count++ == n) break;
  return s.substr(0, k);
}

std::string range_text(int lo, int hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

std::string keys_text(int lo, int hi) {
  if (hi < lo) return "no key";
  return (lo == hi ? "key " : "keys ") + range_text(lo, hi);
}

Narrator::Narrator(const AttentionTrace& t, const ExplainRequest& r)
    : t_(t),
      r_(r),
      s_(symbols(r.unicode)),
      p_(std::clamp(r.precision, 0, 10)),
      i_(r.query),
      row_(r.query - t.first_row),
      h_(r.head),
      g_(t.kv_head_of.empty() ? 0 : t.kv_head_of[static_cast<size_t>(r.head)]),
      cell_(r.key.has_value()) {
  q_ = &t.step(StageId::kQ).heads[static_cast<size_t>(h_)];
  // With Linformer the scores and the weighted sum read the projected keys and values.
  const TraceStep* k_proj = t.find(StageId::kKProj);
  const TraceStep* v_proj = t.find(StageId::kVProj);
  k_ = &(k_proj ? *k_proj : t.step(StageId::kK)).heads[static_cast<size_t>(g_)];
  v_ = &(v_proj ? *v_proj : t.step(StageId::kV)).heads[static_cast<size_t>(g_)];
  scores_ = &t.head(StageId::kScores, h_);
  scaled_ = &t.head(StageId::kScaled, h_);
  masked_ = &t.head(StageId::kMasked, h_);
  weights_ = &t.head(StageId::kWeights, h_);
  output_ = &t.head(StageId::kOutput, h_);
  before_conv_ = t.find(StageId::kPreConv) ? &t.head(StageId::kPreConv, h_) : masked_;
  softmax_weights_ = t.find(StageId::kPreMix) ? &t.head(StageId::kPreMix, h_) : weights_;
  choose_detail_keys();
}

// A token as a subscript: the token itself when it is short and unique, else "tok#j".
std::string Narrator::label(const std::vector<std::string>& tokens, int idx) const {
  const std::string& raw = tokens[static_cast<size_t>(idx)];
  std::string s = tok(raw);
  std::replace(s.begin(), s.end(), ' ', '_');
  bool unique = std::count(tokens.begin(), tokens.end(), raw) == 1;
  if (!s.empty() && unique && display_width(s) <= 12) return s;
  return first_code_points(s, 8) + "#" + std::to_string(idx);
}

std::string Narrator::quoted_query() const {
  return "\"" + tok(t_.query_tokens[static_cast<size_t>(i_)]) + "\"";
}

std::string Narrator::row_text(const Matrix& m, int row) const {
  std::vector<std::string> e;
  for (Eigen::Index c = 0; c < m.cols(); ++c) e.push_back(num(m(row, c)));
  return vector_text(e, s_);
}

bool Narrator::hidden(int j) const {
  if (t_.has_reasons(h_)) return t_.hidden_of(h_)(row_, j) != 0;
  return std::isinf((*masked_)(row_, j));  // a backend without reasons: −∞ means hidden
}

uint8_t Narrator::reason(int j) const {
  if (t_.has_reasons(h_)) return t_.hidden_of(h_)(row_, j);
  return hidden(j) ? kHiddenBias : kVisible;
}

bool Narrator::empty_row() const {
  if (static_cast<size_t>(h_) < t_.empty_row.size() &&
      static_cast<size_t>(row_) < t_.empty_row[static_cast<size_t>(h_)].size())
    return t_.empty_row[static_cast<size_t>(h_)][static_cast<size_t>(row_)];
  for (int j = 0; j < t_.n_k; ++j)
    if (!hidden(j)) return false;
  return true;
}

int Narrator::visible_count() const {
  int n = 0;
  for (int j = 0; j < t_.n_k; ++j) n += hidden(j) ? 0 : 1;
  return n;
}

// Rows with more than kMaxDetailKeys keys narrate the visible keys with the largest weights.
void Narrator::choose_detail_keys() {
  if (cell_) {
    detail_ = {*r_.key};
    return;
  }
  std::vector<int> idx(static_cast<size_t>(t_.n_k));
  std::iota(idx.begin(), idx.end(), 0);
  if (t_.n_k > kMaxDetailKeys) {
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
      if (hidden(a) != hidden(b)) return !hidden(a);
      return (*weights_)(row_, a) > (*weights_)(row_, b);
    });
    idx.resize(kMaxDetailKeys);
    std::sort(idx.begin(), idx.end());
  }
  detail_ = idx;
}

bool Narrator::is_detail(int j) const {
  return std::find(detail_.begin(), detail_.end(), j) != detail_.end();
}

int Narrator::rest_visible() const {
  int n = 0;
  for (int j = 0; j < t_.n_k; ++j) n += !hidden(j) && !is_detail(j) ? 1 : 0;
  return n;
}

size_t Narrator::key_label_width() const {
  size_t w = 0;
  for (int j : detail_) w = std::max(w, display_width(kn(j)));
  return w;
}

void Narrator::heading(int number, const std::string& text) {
  heading(std::to_string(number), text);
}

void Narrator::heading(const std::string& number, const std::string& text) {
  out_ << "\n" << number << ". " << text << "\n";
}

}  // namespace attn::narration
