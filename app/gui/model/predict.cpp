// Predict, then reveal: the questions, what they hide, and how a guess is judged (see predict.h).
#include "gui/model/predict.h"

#include <algorithm>
#include <cmath>

#include "attention/format.h"
#include "gui/model/app_state.h"

namespace attn {
namespace {

// What one cell of a query × key stage is called in a question: "the weight", "the score".
const char* cell_noun(StageId s) {
  switch (s) {
    case StageId::kScores:
      return "score";
    case StageId::kScaled:
      return "scaled score";
    case StageId::kPreConv:
      return "masked score (before the convolution)";
    case StageId::kMasked:
      return "masked score";
    case StageId::kPreMix:
      return "weight (before head mixing)";
    default:
      return "weight";
  }
}

std::string num(double x, int decimals) { return format_fixed(x, decimals, true); }

// "0.06 below" / "0.06 above", with the share of the answer when that means something.
std::string distance(double guess, double answer, int decimals) {
  const double d = guess - answer;
  std::string s = num(std::fabs(d), decimals) + (d < 0 ? " below" : " above") + " the answer";
  if (std::fabs(answer) > 1e-9) {
    const double pct = 100.0 * std::fabs(d) / std::fabs(answer);
    if (pct < 1000) s += " (" + num(pct, pct < 10 ? 1 : 0) + "% of it)";
  }
  return s;
}

std::string quoted(const std::vector<std::string>& tokens, int i) {
  return "\"" + (i >= 0 && i < static_cast<int>(tokens.size()) ? tokens[i] : std::to_string(i)) +
         "\"";
}

std::string ordinal(int n) {
  const int t = n % 100;
  const char* suffix = (t >= 11 && t <= 13) ? "th"
                       : n % 10 == 1        ? "st"
                       : n % 10 == 2        ? "nd"
                       : n % 10 == 3        ? "rd"
                                            : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

Verdict judge_value(double guess, double answer, int decimals, double spread) {
  Verdict v;
  decimals = std::clamp(decimals, 0, 8);
  const std::string a = num(answer, decimals), g = num(guess, decimals);
  if (std::isinf(answer) || std::isinf(guess)) {
    if (std::isinf(answer) && std::isinf(guess) && (answer < 0) == (guess < 0)) {
      v.grade = Verdict::Grade::kExact;
      v.headline = "Exactly right";
      v.detail = "The mask hides this key, so its score is " + a + " and its weight will be 0.";
    } else if (std::isinf(answer)) {
      v.headline = "Not quite";
      v.detail = "The mask hides this key: its score is set to " + a + ", not " + g +
                 ", so its weight will be exactly 0.";
    } else {
      v.headline = "Not quite";
      v.detail = "This key is visible: the answer is " + a + ", not " + g + ".";
    }
    return v;
  }
  const double err = std::fabs(guess - answer);
  const double shown = 0.5 * std::pow(10.0, -decimals);
  if (err <= shown * (1 + 1e-9) || g == a) {
    v.grade = Verdict::Grade::kExact;
    v.headline = "Exactly right";
    v.detail = "The answer is " + a + (g == a ? "." : ", and your " + g + " rounds to it.");
    return v;
  }
  const double size = std::max({std::fabs(spread), std::fabs(answer), 1e-9});
  if (err <= 0.1 * size) {
    v.grade = Verdict::Grade::kClose;
    v.headline = "Close";
  } else {
    v.grade = Verdict::Grade::kOff;
    v.headline = "Not quite";
  }
  v.detail =
      "The answer is " + a + "; your " + g + " is " + distance(guess, answer, decimals) + ".";
  return v;
}

Verdict judge_pick(int guess, const std::vector<double>& values,
                   const std::vector<std::string>& labels, const std::vector<bool>& hidden,
                   const std::string& what, int decimals) {
  Verdict v;
  const int n = static_cast<int>(values.size());
  auto is_hidden = [&](int j) { return j < static_cast<int>(hidden.size()) && hidden[j]; };
  auto name = [&](int j) { return quoted(labels, j); };
  int best = -1;
  for (int j = 0; j < n; ++j)
    if (!is_hidden(j) && std::isfinite(values[j]) && (best < 0 || values[j] > values[best]))
      best = j;
  if (best < 0) {
    v.headline = "Nothing to pick";
    v.detail = "Every key is hidden for this query.";
    return v;
  }
  const double top = values[best];
  const std::string winner =
      name(best) + " gets the largest " + what + ", " + num(top, decimals) + ".";
  if (guess < 0 || guess >= n) {
    v.headline = "The answer";
    v.detail = winner;
    return v;
  }
  if (is_hidden(guess)) {
    v.headline = "Not quite";
    v.detail = name(guess) + " is hidden by the mask: it gets no " + what + " at all. " + winner;
    return v;
  }
  // Ties (two keys with the same value) accept either.
  const double tie = 1e-6 * std::max(1.0, std::fabs(top));
  if (values[guess] >= top - tie) {
    v.grade = Verdict::Grade::kExact;
    v.headline = "Right";
    v.detail = winner;
    return v;
  }
  int rank = 1, visible = 0;
  for (int j = 0; j < n; ++j)
    if (!is_hidden(j) && std::isfinite(values[j])) {
      ++visible;
      if (values[j] > values[guess] + tie) ++rank;
    }
  v.grade = rank == 2 ? Verdict::Grade::kClose : Verdict::Grade::kOff;
  v.headline = rank == 2 ? "Close" : "Not quite";
  v.detail = winner + " Your " + name(guess) + " gets " + num(values[guess], decimals) + ", the " +
             ordinal(rank) + " largest of " + std::to_string(visible) + ".";
  return v;
}

std::optional<double> parse_guess(const std::string& raw, std::string& error) {
  std::string text = raw;
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  for (const char* inf : {"-inf", "−inf", "−∞", "-∞", "-infinity", "−infinity"})
    if (text == inf) return -INFINITY;
  std::optional<float> v = parse_user_number(text, error);
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

bool stage_supports(StageId stage, PredictKind kind) {
  if (is_input(stage)) return false;
  if (kind == PredictKind::kPick) return is_query_key(stage);
  return true;
}

const Matrix* Prediction::matrix(const AttentionTrace& t) const {
  const TraceStep* s = t.find(q_.stage);
  if (!s || s->num_heads() == 0) return nullptr;
  return &t.head(*s, std::clamp(q_.head, 0, s->num_heads() - 1));
}

bool Prediction::start(const AttentionTrace& t, StageId stage, int head, int sel_row, int sel_col,
                       PredictKind kind, PredictScope scope, std::string& why) {
  active_ = revealed_ = has_guess_ = false;
  guess_col_ = -1;
  verdict_ = {};
  if (!stage_supports(stage, kind)) {
    why = is_input(stage)
              ? "The inputs are given, not computed: step to the scores to predict them."
              : "Picking the largest works on the scores, masked scores and weights.";
    return false;
  }
  const TraceStep* s = t.find(stage);
  if (!s || s->num_heads() == 0 || t.head(*s, 0).size() == 0) {
    why = "This stage has no numbers yet.";
    return false;
  }
  q_ = {};
  q_.stage = stage;
  q_.head = std::clamp(head, 0, s->num_heads() - 1);
  q_.kind = kind;
  q_.scope = kind == PredictKind::kPick ? std::max(scope, PredictScope::kRow) : scope;
  const Matrix& m = t.head(*s, q_.head);
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  q_.row = sel_row >= 0 && sel_row < rows ? sel_row : rows - 1;
  const bool attention = is_query_key(stage);
  const ReasonMatrix* hid =
      attention && head < t.num_heads && t.has_reasons(head) ? &t.hidden_of(head) : nullptr;
  auto visible = [&](int j) {
    return !hid || hid->rows() <= q_.row || j >= hid->cols() || (*hid)(q_.row, j) == 0;
  };
  if (kind == PredictKind::kPick) {
    bool any = false;
    for (int j = 0; j < cols; ++j) any |= visible(j) || !hides_keys(stage);
    if (!any) {
      why = "Every key is hidden for this query: there is nothing to pick.";
      return false;
    }
    q_.col = -1;
  } else if (sel_col >= 0 && sel_col < cols) {
    q_.col = sel_col;
  } else {
    q_.col = 0;
    if (attention)  // a visible key is the better question; the first one that is
      for (int j = 0; j < cols; ++j)
        if (visible(j)) {
          q_.col = j;
          break;
        }
  }
  active_ = true;
  return true;
}

std::string Prediction::prompt(const AttentionTrace& t) const {
  if (!active_) return "";
  const std::string q = quoted(t.query_tokens, q_.row);
  if (q_.kind == PredictKind::kPick) {
    if (q_.stage == StageId::kWeights) return "Which key will " + q + " give the most weight?";
    return "Which key gets the highest " + std::string(cell_noun(q_.stage)) + " from " + q + "?";
  }
  const std::string k = quoted(t.key_tokens, q_.col);
  const std::string c = std::to_string(q_.col);
  switch (q_.stage) {
    case StageId::kScores:
      return "What is the score of " + q + " against " + k + ", q·k?";
    case StageId::kWeights:
      return "What weight does " + q + " give to " + k + "?";
    case StageId::kOutput:
      return "What is component " + c + " of the output of " + q + "?";
    case StageId::kConcat:
      return "What is column " + c + " of the concatenated heads for " + q + "?";
    case StageId::kProjected:
      return "What is component " + c + " of the projected output of " + q + "?";
    default:
      break;
  }
  if (is_query_key(q_.stage)) {
    std::string p =
        "What is the " + std::string(cell_noun(q_.stage)) + " of " + q + " against " + k + "?";
    if (q_.stage == StageId::kPreMix) p += " (0 if the mask hides it)";
    if (q_.stage == StageId::kPreConv || q_.stage == StageId::kMasked)
      p += " (−∞ if the mask hides it)";
    return p;
  }
  return "What is " + std::string(stage_name(q_.stage)) + "[" + std::to_string(q_.row) + ", " + c +
         "]?";
}

bool Prediction::conceals(StageId stage, int head, int i, int j) const {
  if (!active_ || revealed_ || stage != q_.stage) return false;
  switch (q_.scope) {
    case PredictScope::kStage:
      return true;
    case PredictScope::kRow:
      return head == q_.head && i == q_.row;
    case PredictScope::kCell:
      return head == q_.head && i == q_.row && j == q_.col;
  }
  return false;
}

bool Prediction::conceals_stage(StageId stage) const {
  return active_ && !revealed_ && stage == q_.stage;
}

bool Prediction::guess_text(const std::string& text, std::string& error) {
  std::optional<double> v = parse_guess(text, error);
  if (!v) return false;
  guess_value_ = *v;
  has_guess_ = true;
  return true;
}

void Prediction::guess_pick(int col) {
  guess_col_ = col;
  has_guess_ = true;
}

double Prediction::answer(const AttentionTrace& t) const {
  const Matrix* m = matrix(t);
  if (!m || q_.row >= m->rows()) return 0;
  if (q_.kind == PredictKind::kValue) return q_.col < m->cols() ? (*m)(q_.row, q_.col) : 0;
  double best = -INFINITY;
  for (Eigen::Index j = 0; j < m->cols(); ++j) best = std::max(best, double((*m)(q_.row, j)));
  return best;
}

const Verdict& Prediction::reveal(const AttentionTrace& t, int decimals) {
  revealed_ = true;
  const Matrix* m = matrix(t);
  verdict_ = {};
  if (!m || q_.row >= m->rows()) return verdict_;
  if (q_.kind == PredictKind::kValue) {
    const double a = q_.col < m->cols() ? (*m)(q_.row, q_.col) : 0;
    double spread = 0;
    for (Eigen::Index k = 0; k < m->size(); ++k)
      if (std::isfinite(m->data()[k])) spread = std::max(spread, std::fabs(double(m->data()[k])));
    if (has_guess_) {
      verdict_ = judge_value(guess_value_, a, decimals, spread);
    } else {
      verdict_.headline = "The answer";
      verdict_.detail = "It is " + num(a, decimals) + ".";
    }
    return verdict_;
  }
  std::vector<double> values;
  std::vector<bool> hidden;
  const ReasonMatrix* hid = hides_keys(q_.stage) && q_.head < t.num_heads && t.has_reasons(q_.head)
                                ? &t.hidden_of(q_.head)
                                : nullptr;
  for (Eigen::Index j = 0; j < m->cols(); ++j) {
    values.push_back((*m)(q_.row, j));
    hidden.push_back(hid && q_.row < hid->rows() && j < hid->cols() && (*hid)(q_.row, j) != 0);
  }
  const std::string what =
      q_.stage == StageId::kWeights || q_.stage == StageId::kPreMix ? "weight" : "score";
  verdict_ = judge_pick(has_guess_ ? guess_col_ : -1, values, t.key_tokens, hidden, what, decimals);
  return verdict_;
}

}  // namespace attn
