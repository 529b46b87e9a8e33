// The app's model layer: every edit goes through apply(), which validates the whole scenario,
// keeps an undo snapshot and recomputes the trace, so the panels never see an invalid state.
// This file holds the edits and undo/redo; files, the trace and navigation have their own
// app_state_*.cpp files.
#include "gui/model/app_state.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <random>

#include "attention/format.h"

namespace attn {
namespace {

constexpr int kMaxDim = 512;
constexpr int kMaxHeads = 16;

Matrix* tensor_in(Scenario& s, Tensor t, int h) {
  auto pick = [h](HeadStack& st) -> Matrix* {
    return h >= 0 && h < static_cast<int>(st.size()) ? &st[h] : nullptr;
  };
  if (!s.use_projection) {
    switch (t) {
      case Tensor::kQ:
        return pick(s.qkv.q);
      case Tensor::kK:
        return pick(s.qkv.k);
      case Tensor::kV:
        return pick(s.qkv.v);
      default:
        return nullptr;
    }
  }
  ProjectionSpec& p = s.projection;
  switch (t) {
    case Tensor::kX:
      return h == 0 ? &p.x : nullptr;
    case Tensor::kXkv:
      return h == 0 && p.x_kv.size() ? &p.x_kv : nullptr;
    case Tensor::kWq:
      return pick(p.w_q);
    case Tensor::kWk:
      return pick(p.w_k);
    case Tensor::kWv:
      return pick(p.w_v);
    case Tensor::kWo:
      return h == 0 && p.w_o.size() ? &p.w_o : nullptr;
    default:
      return nullptr;
  }
}

// A copy of m with the given shape: the overlapping block kept, new cells set to `fill`.
Matrix resized(const Matrix& m, Eigen::Index rows, Eigen::Index cols, float fill = 0.0f) {
  Matrix r = Matrix::Constant(rows, cols, fill);
  const Eigen::Index rr = std::min(rows, m.rows()), cc = std::min(cols, m.cols());
  if (rr > 0 && cc > 0) r.topLeftCorner(rr, cc) = m.topLeftCorner(rr, cc);
  return r;
}

Matrix without_row(const Matrix& m, int i) {
  Matrix r(m.rows() - 1, m.cols());
  for (Eigen::Index a = 0, b = 0; a < m.rows(); ++a)
    if (a != i) r.row(b++) = m.row(a);
  return r;
}

Matrix without_col(const Matrix& m, int j) { return without_row(m.transpose(), j).transpose(); }

// Small readable numbers for new heads and randomised inputs: uniform in [-1, 1], 2 decimals.
Matrix random_values(Eigen::Index rows, Eigen::Index cols, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-100, 100);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(d(rng)) / 100.0f;
  return m;
}

void resize_heads(HeadStack& st, int heads, unsigned seed) {
  std::mt19937 rng(seed);
  const Matrix first = st.at(0);
  st.resize(heads, Matrix());
  for (auto& m : st)
    if (m.size() == 0) m = random_values(first.rows(), first.cols(), rng);
}

int n_queries(const Scenario& s) {
  return static_cast<int>(s.use_projection ? s.projection.x.rows() : s.qkv.q[0].rows());
}
int n_keys(const Scenario& s) {
  if (s.use_projection)
    return static_cast<int>(s.projection.x_kv.size() ? s.projection.x_kv.rows()
                                                     : s.projection.x.rows());
  return static_cast<int>(s.qkv.k[0].rows());
}

// After a token is added or removed, the per-cell masks and the positional masks follow.
void fit_masks(Scenario& s) {
  const int n_q = n_queries(s), n_k = n_keys(s);
  MaskSpec& m = s.options.mask;
  for (Matrix& c : m.custom) c = resized(c, n_q, n_k, 1.0f);
  for (Matrix& b : m.bias) b = resized(b, n_q, n_k, 0.0f);
  if (m.key_length) m.key_length = std::min(*m.key_length, n_k);
  const int limit = std::max(n_q, n_k);
  m.global.erase(
      std::remove_if(m.global.begin(), m.global.end(), [&](int g) { return g >= limit; }),
      m.global.end());
}

// The W_O width of a projection scenario, kept when d_v or H change.
void resize_w_o(ProjectionSpec& p, int old_heads, int old_dv, int heads, int dv) {
  if (p.w_o.size() == 0) return;
  Matrix w = Matrix::Zero(static_cast<Eigen::Index>(heads) * dv, p.w_o.cols());
  for (int h = 0; h < std::min(heads, old_heads); ++h)
    w.block(static_cast<Eigen::Index>(h) * dv, 0, std::min(dv, old_dv), w.cols()) =
        p.w_o.block(static_cast<Eigen::Index>(h) * old_dv, 0, std::min(dv, old_dv), w.cols());
  p.w_o = w;
}

}  // namespace

const char* tensor_name(Tensor t) {
  switch (t) {
    case Tensor::kQ:
      return "Q";
    case Tensor::kK:
      return "K";
    case Tensor::kV:
      return "V";
    case Tensor::kX:
      return "X";
    case Tensor::kXkv:
      return "X_kv";
    case Tensor::kWq:
      return "W_Q";
    case Tensor::kWk:
      return "W_K";
    case Tensor::kWv:
      return "W_V";
    case Tensor::kWo:
      return "W_O";
  }
  return "?";
}

std::optional<float> parse_user_number(const std::string& text, std::string& error) {
  std::string s = text;
  // Teachers paste "−0.5" with a Unicode minus from slides.
  for (size_t p; (p = s.find("\xE2\x88\x92")) != std::string::npos;) s.replace(p, 3, "-");
  const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  s = a == std::string::npos ? "" : s.substr(a, b - a + 1);
  if (s.empty()) {
    error = "empty: type a number such as 0.5";
    return std::nullopt;
  }
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') {
    error = "'" + text + "' is not a number";
    return std::nullopt;
  }
  if (std::isnan(x) || std::isinf(x)) {
    error = "'" + text + "' is not a finite number (NaN and infinities are not allowed)";
    return std::nullopt;
  }
  if (std::abs(x) > FLT_MAX) {
    error = "'" + text + "' is too large for a float";
    return std::nullopt;
  }
  return static_cast<float>(x);
}

AppState::AppState() = default;
AppState::~AppState() {
  // The engine's loops stop at their next block; pending_'s destructor then joins the worker.
  if (pending_control_) pending_control_->cancel = true;
}

// ---------------------------------------------------------------- edits

void AppState::reset_to_origin() { apply(origin_scenario_, "Reset to " + origin_); }

void AppState::randomise(unsigned seed) {
  Scenario s = scenario_;
  std::mt19937 rng(seed);
  auto fill = [&](Matrix& m) {
    if (m.size()) m = random_values(m.rows(), m.cols(), rng);
  };
  if (s.use_projection) {
    fill(s.projection.x);
    fill(s.projection.x_kv);
    for (auto* st : {&s.projection.w_q, &s.projection.w_k, &s.projection.w_v})
      for (Matrix& m : *st) fill(m);
    fill(s.projection.w_o);
  } else {
    for (auto* st : {&s.qkv.q, &s.qkv.k, &s.qkv.v})
      for (Matrix& m : *st) fill(m);
  }
  apply(std::move(s), "Randomised the inputs with seed " + std::to_string(seed));
}

bool AppState::apply(Scenario next, const std::string& what, const std::string& gesture,
                     EditedHeads heads) {
  fit_variants(next);
  if (std::string e = validate_scenario(next); !e.empty()) {
    set_message(what + " refused: " + e, true);
    return false;
  }
  edited_ = merge_edited_heads(edited_, heads);
  if (gesture.empty() || gesture != gesture_key_)
    history_.record(std::move(scenario_), next, std::move(heads));
  else
    history_.extend(scenario_, next, std::move(heads));
  gesture_key_ = gesture;
  scenario_ = std::move(next);
  became_dirty_or_clean();
  set_message(what, false);
  recompute();  // after the message: its failure or fallback is what shows
  return true;
}

Matrix* AppState::tensor(Tensor t, int head) { return tensor_in(scenario_, t, head); }
const Matrix* AppState::tensor(Tensor t, int head) const {
  return tensor_in(const_cast<Scenario&>(scenario_), t, head);
}

int AppState::tensor_heads(Tensor t) const {
  int h = 0;
  while (tensor(t, h)) ++h;
  return h;
}

namespace {
std::string cell_name(Tensor t, int head, int heads, int row, int col) {
  std::string s = tensor_name(t);
  if (heads > 1) s += " head " + std::to_string(head);
  return s + " [" + std::to_string(row) + ", " + std::to_string(col) + "]";
}
}  // namespace

bool AppState::set_value_text(Tensor t, int head, int row, int col, const std::string& text) {
  const Matrix* m = tensor(t, head);
  if (!m) {
    const int heads = tensor_heads(t);
    set_message(
        std::string(tensor_name(t)) +
            (heads == 0 ? scenario_.use_projection
                              ? " is derived here: projection mode edits X, X_kv and the W matrices"
                              : " is not an input here: this scenario edits Q, K and V directly"
                        : " has no head " + std::to_string(head) + " (it has " +
                              std::to_string(heads) + ")"),
        true);
    return false;
  }
  if (row < 0 || col < 0 || row >= m->rows() || col >= m->cols()) {
    set_message(std::string(tensor_name(t)) + " [" + std::to_string(row) + ", " +
                    std::to_string(col) + "] is outside its shape (" + std::to_string(m->rows()) +
                    " × " + std::to_string(m->cols()) + ")",
                true);
    return false;
  }
  std::string error;
  std::optional<float> v = parse_user_number(text, error);
  if (!v) {
    set_message(cell_name(t, head, tensor_heads(t), row, col) + ": " + error + "; kept " +
                    format_value((*m)(row, col)),
                true);
    return false;
  }
  end_gesture();
  return set_value(t, head, row, col, *v);
}

bool AppState::set_value(Tensor t, int head, int row, int col, float value, bool gesture) {
  const Matrix* m = tensor(t, head);
  if (!m || row < 0 || col < 0 || row >= m->rows() || col >= m->cols()) return false;
  const std::string name = cell_name(t, head, tensor_heads(t), row, col);
  if (!std::isfinite(value)) {
    set_message(name + ": not a finite number; kept " + format_value((*m)(row, col)), true);
    return false;
  }
  if ((*m)(row, col) == value) return true;
  Scenario s = scenario_;
  (*tensor_in(s, t, head))(row, col) = value;
  // A value of Q changes its query head; of K or V, every query head of that key/value head. In
  // projection mode a value feeds every head: the whole trace.
  EditedHeads heads;
  if (!s.use_projection && (t == Tensor::kQ || t == Tensor::kK || t == Tensor::kV)) {
    heads.emplace();
    for (int h = 0; h < s.qkv.num_heads(); ++h)
      if (t == Tensor::kQ ? h == head : s.qkv.kv_head_of(h) == head) heads->push_back(h);
  }
  return apply(std::move(s), name + " = " + format_value(value), gesture ? name : "",
               std::move(heads));
}

bool AppState::cross_attention() const {
  return !scenario_.key_tokens.empty() ||
         (scenario_.use_projection && scenario_.projection.x_kv.size() > 0);
}

bool AppState::rename_token(Side side, int index, const std::string& name) {
  Scenario s = scenario_;
  std::vector<std::string>& toks =
      side == Side::kKey && cross_attention() ? s.key_tokens : s.query_tokens;
  if (index < 0 || index >= static_cast<int>(toks.size())) return false;
  if (toks[index] == name) return true;
  if (name.empty()) {
    set_message("a token needs a name", true);
    return false;
  }
  toks[index] = name;
  return apply(std::move(s), "Renamed token " + std::to_string(index) + " to '" + name + "'");
}

bool AppState::add_token(Side side) {
  Scenario s = scenario_;
  const bool cross = cross_attention();
  const bool queries = side == Side::kQuery || !cross;
  const bool keys = side == Side::kKey || !cross;
  auto grow = [](Matrix& m) { m = resized(m, m.rows() + 1, m.cols()); };
  if (s.use_projection) {
    if (queries) grow(s.projection.x);
    if (keys && cross) grow(s.projection.x_kv);
  } else {
    if (queries)
      for (Matrix& m : s.qkv.q) grow(m);
    if (keys) {
      for (Matrix& m : s.qkv.k) grow(m);
      for (Matrix& m : s.qkv.v) grow(m);
    }
  }
  if (queries) s.query_tokens.push_back("t" + std::to_string(s.query_tokens.size()));
  if (keys && cross) s.key_tokens.push_back("k" + std::to_string(s.key_tokens.size()));
  fit_masks(s);
  return apply(std::move(s), queries && keys ? "Added a token"
                             : queries       ? "Added a query"
                                             : "Added a key");
}

bool AppState::remove_token(Side side, int index) {
  Scenario s = scenario_;
  const bool cross = cross_attention();
  const bool queries = side == Side::kQuery || !cross;
  const bool keys = side == Side::kKey || !cross;
  const int n = queries ? n_queries(s) : n_keys(s);
  if (index < 0 || index >= n) return false;
  if (n <= 1) {
    set_message("cannot remove the last token", true);
    return false;
  }
  if (s.use_projection) {
    if (queries) s.projection.x = without_row(s.projection.x, index);
    if (keys && cross) s.projection.x_kv = without_row(s.projection.x_kv, index);
  } else {
    if (queries)
      for (Matrix& m : s.qkv.q) m = without_row(m, index);
    if (keys) {
      for (Matrix& m : s.qkv.k) m = without_row(m, index);
      for (Matrix& m : s.qkv.v) m = without_row(m, index);
    }
  }
  std::vector<std::string>& toks = queries ? s.query_tokens : s.key_tokens;
  const std::string name = toks[index];
  toks.erase(toks.begin() + index);
  // The per-cell masks lose the same row or column.
  for (auto* st : {&s.options.mask.custom, &s.options.mask.bias})
    for (Matrix& m : *st) {
      if (queries) m = without_row(m, index);
      if (keys) m = without_col(m, index);
    }
  fit_masks(s);
  return apply(std::move(s), "Removed token '" + name + "'");
}

bool AppState::set_d_k(int d_k) {
  if (d_k < 1 || d_k > kMaxDim) {
    set_message("d_k must be between 1 and " + std::to_string(kMaxDim), true);
    return false;
  }
  Scenario s = scenario_;
  auto cols = [d_k](HeadStack& st) {
    for (Matrix& m : st) m = resized(m, m.rows(), d_k);
  };
  if (s.use_projection) {
    cols(s.projection.w_q);
    cols(s.projection.w_k);
  } else {
    cols(s.qkv.q);
    cols(s.qkv.k);
  }
  if (s.options.additive) {
    // The additive score's W_q and W_k read d_k columns too (new columns start at 0).
    AdditiveScore& a = *s.options.additive;
    a.w_q = resized(a.w_q, a.w_q.rows(), d_k);
    a.w_k = resized(a.w_k, a.w_k.rows(), d_k);
  }
  return apply(std::move(s), "d_k = " + std::to_string(d_k));
}

bool AppState::set_d_v(int d_v) {
  if (d_v < 1 || d_v > kMaxDim) {
    set_message("d_v must be between 1 and " + std::to_string(kMaxDim), true);
    return false;
  }
  Scenario s = scenario_;
  if (s.use_projection) {
    const int heads = static_cast<int>(s.projection.w_q.size());
    const int old_dv = static_cast<int>(s.projection.w_v[0].cols());
    for (Matrix& m : s.projection.w_v) m = resized(m, m.rows(), d_v);
    resize_w_o(s.projection, heads, old_dv, heads, d_v);
  } else {
    for (Matrix& m : s.qkv.v) m = resized(m, m.rows(), d_v);
  }
  return apply(std::move(s), "d_v = " + std::to_string(d_v));
}

bool AppState::set_d_model(int d_model) {
  if (!scenario_.use_projection) return false;
  if (d_model < 1 || d_model > kMaxDim) {
    set_message("d_model must be between 1 and " + std::to_string(kMaxDim), true);
    return false;
  }
  Scenario s = scenario_;
  ProjectionSpec& p = s.projection;
  p.x = resized(p.x, p.x.rows(), d_model);
  if (p.x_kv.size()) p.x_kv = resized(p.x_kv, p.x_kv.rows(), d_model);
  for (auto* st : {&p.w_q, &p.w_k, &p.w_v})
    for (Matrix& m : *st) m = resized(m, d_model, m.cols());
  return apply(std::move(s), "d_model = " + std::to_string(d_model));
}

bool AppState::set_heads(int heads, int kv_heads) {
  if (heads < 1 || heads > kMaxHeads || kv_heads < 1 || kv_heads > heads || heads % kv_heads) {
    set_message("heads: H must be 1.." + std::to_string(kMaxHeads) +
                    " and a multiple of the key/value heads H_kv (got H = " +
                    std::to_string(heads) + ", H_kv = " + std::to_string(kv_heads) + ")",
                true);
    return false;
  }
  Scenario s = scenario_;
  if (s.use_projection) {
    ProjectionSpec& p = s.projection;
    const int old_h = static_cast<int>(p.w_q.size()), d_v = static_cast<int>(p.w_v[0].cols());
    resize_heads(p.w_q, heads, 11);
    resize_heads(p.w_k, kv_heads, 23);
    resize_heads(p.w_v, kv_heads, 37);
    resize_w_o(p, old_h, d_v, heads, d_v);
  } else {
    resize_heads(s.qkv.q, heads, 11);
    resize_heads(s.qkv.k, kv_heads, 23);
    resize_heads(s.qkv.v, kv_heads, 37);
  }
  for (auto* st : {&s.options.mask.custom, &s.options.mask.bias})
    if (st->size() > 1)
      resize_heads(*st, heads, 0), std::fill(st->begin() + 1, st->end(), (*st)[0]);
  const char* kind = kv_heads == heads ? "MHA" : kv_heads == 1 ? "MQA" : "GQA";
  return apply(std::move(s), std::string(kind) + ": " + std::to_string(heads) + " query heads, " +
                                 std::to_string(kv_heads) + " key/value heads");
}

bool AppState::set_projection_mode(bool on) {
  if (on == scenario_.use_projection) return true;
  Scenario s = scenario_;
  if (!on) {
    AttentionProblem p = to_problem(scenario_);
    s.use_projection = false;
    s.qkv = p.input;
    s.projection = ProjectionSpec{};
    return apply(std::move(s), "Q, K, V are now edited directly");
  }
  // X = [Q heads | K heads | V heads] and each W selects its block, so every value is kept
  // exactly and the students see what a projection does before editing it.
  const AttentionInput& in = scenario_.qkv;
  const int H = in.num_heads(), G = in.num_kv_heads(), dk = in.d_k(), dv = in.d_v();
  const int d_model = H * dk + G * (dk + dv);
  const bool cross = cross_attention();
  ProjectionSpec p;
  p.x = Matrix::Zero(in.n_q(), d_model);
  Matrix xkv = Matrix::Zero(in.n_k(), d_model);
  Matrix& kv_target = cross ? xkv : p.x;
  int col = 0;
  for (int h = 0; h < H; ++h, col += dk) {
    p.x.middleCols(col, dk) = in.q[h];
    Matrix w = Matrix::Zero(d_model, dk);
    w.middleRows(col, dk).setIdentity();
    p.w_q.push_back(w);
  }
  for (int g = 0; g < G; ++g, col += dk) {
    kv_target.middleCols(col, dk) = in.k[g];
    Matrix w = Matrix::Zero(d_model, dk);
    w.middleRows(col, dk).setIdentity();
    p.w_k.push_back(w);
  }
  for (int g = 0; g < G; ++g, col += dv) {
    kv_target.middleCols(col, dv) = in.v[g];
    Matrix w = Matrix::Zero(d_model, dv);
    w.middleRows(col, dv).setIdentity();
    p.w_v.push_back(w);
  }
  if (cross) p.x_kv = xkv;
  p.w_o = Matrix::Identity(static_cast<Eigen::Index>(H) * dv, static_cast<Eigen::Index>(H) * dv);
  s.use_projection = true;
  s.projection = p;
  s.qkv = AttentionInput{};
  return apply(std::move(s), "Projection mode: Q = X·W_Q, K = X·W_K, V = X·W_V");
}

bool AppState::set_cross_attention(bool on) {
  if (on == cross_attention()) return true;
  Scenario s = scenario_;
  if (on) {
    for (const std::string& t : s.query_tokens) s.key_tokens.push_back(t + "'");
    if (s.use_projection) s.projection.x_kv = s.projection.x;
    fit_masks(s);
    return apply(std::move(s), "Cross-attention: keys and values come from their own tokens");
  }
  // Back to self-attention: the keys become the queries' tokens, so there must be as many.
  const int n_q = n_queries(s);
  s.key_tokens.clear();
  if (s.use_projection) {
    s.projection.x_kv = Matrix();
  } else {
    for (Matrix& m : s.qkv.k) m = resized(m, n_q, m.cols());
    for (Matrix& m : s.qkv.v) m = resized(m, n_q, m.cols());
  }
  fit_masks(s);
  return apply(std::move(s), "Self-attention: keys and values come from the query tokens");
}

bool AppState::set_causal(CausalAlign a) {
  Scenario s = scenario_;
  s.options.mask.causal = a;
  return apply(std::move(s), a == CausalAlign::kNone      ? "No causal mask"
                             : a == CausalAlign::kTopLeft ? "Causal mask (top-left)"
                                                          : "Causal mask (lower-right)");
}

bool AppState::set_key_length(std::optional<int> length) {
  Scenario s = scenario_;
  s.options.mask.key_length = length;
  return apply(
      std::move(s),
      length ? "Padding: keys from " + std::to_string(*length) + " on are hidden" : "No padding");
}

bool AppState::set_window(std::optional<int> window) {
  Scenario s = scenario_;
  s.options.mask.window = window;
  return apply(std::move(s), window ? "Sliding window of " + std::to_string(*window) : "No window");
}

bool AppState::set_global(std::vector<int> positions) {
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  Scenario s = scenario_;
  s.options.mask.global = positions;
  return apply(std::move(s), "Global positions updated");
}

bool AppState::toggle_global(int position) {
  std::vector<int> g = scenario_.options.mask.global;
  auto it = std::find(g.begin(), g.end(), position);
  if (it != g.end())
    g.erase(it);
  else
    g.push_back(position);
  return set_global(g);
}

bool AppState::toggle_custom_cell(int query, int key) {
  const int n_q = n_queries(scenario_), n_k = n_keys(scenario_);
  if (query < 0 || key < 0 || query >= n_q || key >= n_k) return false;
  Scenario s = scenario_;
  HeadStack& c = s.options.mask.custom;
  if (c.empty()) c.push_back(Matrix::Ones(n_q, n_k));
  Matrix& m = c.size() > 1 ? c[std::min<size_t>(head_, c.size() - 1)] : c[0];
  m(query, key) = m(query, key) != 0 ? 0.0f : 1.0f;
  return apply(std::move(s), std::string("Custom mask: key ") + std::to_string(key) +
                                 (m(query, key) != 0 ? " shown to" : " hidden from") + " query " +
                                 std::to_string(query));
}

bool AppState::clear_custom_mask() {
  if (scenario_.options.mask.custom.empty()) return true;
  Scenario s = scenario_;
  s.options.mask.custom.clear();
  return apply(std::move(s), "Custom mask cleared");
}

bool AppState::set_scale(std::optional<float> scale) {
  if (scale && (!std::isfinite(*scale) || *scale <= 0)) {
    set_message("scale must be a finite number > 0", true);
    return false;
  }
  Scenario s = scenario_;
  s.options.scale = scale;
  return apply(std::move(s), scale ? "Scale = " + format_value(*scale) : "Scale = 1/√d_k");
}

bool AppState::set_temperature(float t) {
  if (!std::isfinite(t) || t <= 0) {
    set_message("temperature must be a finite number > 0", true);
    return false;
  }
  Scenario s = scenario_;
  s.options.temperature = t;
  return apply(std::move(s), "Temperature = " + format_value(t));
}

bool AppState::undo() {
  EditedHeads heads;
  if (!history_.undo(scenario_, &heads)) return false;
  edited_ = merge_edited_heads(edited_, heads);
  gesture_key_.clear();
  became_dirty_or_clean();
  set_message("Undone", false);
  recompute();  // after the message: its failure or fallback is what shows
  return true;
}

bool AppState::redo() {
  EditedHeads heads;
  if (!history_.redo(scenario_, &heads)) return false;
  edited_ = merge_edited_heads(edited_, heads);
  gesture_key_.clear();
  became_dirty_or_clean();
  set_message("Redone", false);
  recompute();  // after the message: its failure or fallback is what shows
  return true;
}

void AppState::became_dirty_or_clean() {
  dirty_ = !history_.at_saved();
  if (dirty_) {
    recovery_written_ = false;
  } else if (!recovery_pending_) {
    // Undone back to the saved file: nothing left to recover, so the next start offers nothing.
    // (A recovery file from the last session still waits for its answer.)
    discard_recovery();
  }
}

void AppState::succeeded() {
  if (message_error_) set_message("", false);
}

void AppState::set_message(const std::string& m, bool error) {
  message_ = m;
  message_error_ = error;
  ++message_serial_;
}

}  // namespace attn
