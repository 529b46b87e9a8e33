#include "lessons/question_secret.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace attn {

bool QuestionSecret::conceals(StageId s, int h, int i, int j) const {
  if (own_conceals(s, h, i, j)) return true;
  for (const QuestionSecret& l : later)
    if (l.conceals(s, h, i, j)) return true;
  return false;
}

bool QuestionSecret::conceals_stage(StageId s) const {
  if (active && ((stage && *stage == s) || (mask_row && hides_keys(s)))) return true;
  for (const QuestionSecret& l : later)
    if (l.conceals_stage(s)) return true;
  return false;
}

bool QuestionSecret::hides_working(int h, int i) const {
  if (active && narration) return true;
  for (const QuestionSecret& l : later)
    if (l.active && (l.stage || l.mask_row) && l.head == h && l.row == i) return true;
  return false;
}

bool QuestionSecret::hides_scale() const {
  if (active && scale) return true;
  for (const QuestionSecret& l : later)
    if (l.hides_scale()) return true;
  return false;
}

bool QuestionSecret::tells(const std::string& label) const {
  if (own_tells(label)) return true;
  for (const QuestionSecret& l : later)
    if (l.tells(label)) return true;
  return false;
}

bool QuestionSecret::own_conceals(StageId s, int h, int i, int j) const {
  if (mask_row) return active && hides_keys(s) && h == head && i == row;
  if (!active || !stage || *stage != s || h != head || i != row) return false;
  return col < 0 || j == col;
}

bool QuestionSecret::own_tells(const std::string& label) const {
  if (!active || values.empty()) return false;
  for (size_t k = 0; k < label.size();) {
    const bool minus = label[k] == '-' && k + 1 < label.size() &&
                       std::isdigit(static_cast<unsigned char>(label[k + 1]));
    if (!minus && !std::isdigit(static_cast<unsigned char>(label[k]))) {
      ++k;
      continue;
    }
    // A number starts here (not inside another, e.g. the "5" of "x5" counts, "1.5" is read whole).
    const size_t start = k;
    k += minus ? 1 : 0;
    while (k < label.size() && std::isdigit(static_cast<unsigned char>(label[k]))) ++k;
    int decimals = 0;
    if (k + 1 < label.size() && label[k] == '.' &&
        std::isdigit(static_cast<unsigned char>(label[k + 1]))) {
      ++k;
      while (k < label.size() && std::isdigit(static_cast<unsigned char>(label[k]))) {
        ++k;
        ++decimals;
      }
    }
    if (decimals < 2 || (start > 0 && label[start - 1] == '.')) continue;
    const std::string number = label.substr(start, k - start);
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      char text[64];
      std::snprintf(text, sizeof text, "%.*f", decimals, v);
      std::string written = text;
      if (written.rfind("-0.", 0) == 0 && written.find_first_not_of("-0.") == std::string::npos)
        written.erase(0, 1);  // −0.00 is written 0.00
      if (written == number) return true;
    }
  }
  return false;
}

QuestionSecret question_secret(const LessonQuestion& q, const AttentionTrace& t) {
  QuestionSecret s;
  const AnswerRef& a = q.answer;
  std::string error;
  switch (q.kind) {
    case QuestionKind::kStatement:
      return s;  // the choices are sentences: nothing on screen is the answer
    case QuestionKind::kNumber: {
      const std::optional<double> answer = number_answer(q, t, error);
      if (!answer) return s;
      s.active = true;
      s.number = answer;
      s.narration = true;
      if (!a.stage) {
        s.scale = a.property == "scale";
        s.kv_map = a.property == "kv_head";
        s.mask_row = a.property == "visible_keys";
        s.shape = a.property != "scale" && a.property != "kv_head" && !s.mask_row;
        s.head = a.head;
        s.row = a.row;
        if (s.scale) s.values = {*answer, 1.0 / *answer};  // the factor, and √d_k it divides by
        return s;
      }
      s.stage = a.stage;
      s.head = a.head;
      s.row = a.row;
      // A weight is told by the rest of its row (they sum to 1): the question hides the row.
      s.col = *a.stage == StageId::kWeights ? -1 : a.col;
      break;
    }
    case QuestionKind::kKey: {
      if (!key_answer(q, t, error)) return s;
      s.active = true;
      s.narration = true;
      s.stage = a.stage;
      s.head = a.head;
      s.row = a.row;
      s.col = -1;  // which key wins is told by the whole row
      break;
    }
  }
  // The numbers hidden: the cell, or the row's visible cells (a masked key's 0 tells nothing).
  const Matrix& m = t.head(*s.stage, s.head);
  const bool masked =
      hides_keys(*s.stage) && m.cols() == t.n_k && s.head < t.num_heads && t.has_reasons(s.head);
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    if (s.col >= 0 && j != s.col) continue;
    if (s.col < 0 && masked && t.hidden_of(s.head)(s.row, j)) continue;
    s.values.push_back(m(s.row, j));
  }
  return s;
}

namespace {

// Whether two secrets of one question hide the same thing with the same numbers.
bool same_secret(const QuestionSecret& a, const QuestionSecret& b) {
  if (a.active != b.active || a.stage != b.stage || a.head != b.head || a.row != b.row ||
      a.col != b.col || a.mask_row != b.mask_row || a.scale != b.scale ||
      a.number.has_value() != b.number.has_value() ||
      (a.number && std::abs(*a.number - *b.number) > 1e-9) || a.values.size() != b.values.size())
    return false;
  for (size_t k = 0; k < a.values.size(); ++k)
    if (!(std::abs(a.values[k] - b.values[k]) <= 1e-9 * std::max(1.0, std::abs(b.values[k]))))
      return false;
  return true;
}

}  // namespace

std::vector<QuestionSecret> own_secrets(const Lesson& lesson) {
  std::vector<QuestionSecret> out(lesson.steps.size());
  for (size_t j = 0; j < lesson.steps.size(); ++j)
    if (lesson.steps[j].question)
      out[j] = question_secret(*lesson.steps[j].question, lesson_step_trace(lesson.steps[j]));
  return out;
}

std::vector<QuestionSecret> later_secrets(const Lesson& lesson,
                                          const std::vector<QuestionSecret>& own, size_t index,
                                          const AttentionTrace& trace,
                                          const std::function<bool(size_t)>& open) {
  std::vector<QuestionSecret> out;
  for (size_t j = index + 1; j < lesson.steps.size() && j < own.size(); ++j) {
    const QuestionSecret& theirs = own[j];
    if (!theirs.active || !(theirs.stage || theirs.mask_row || theirs.scale)) continue;
    if (open && !open(j)) continue;
    QuestionSecret here = question_secret(*lesson.steps[j].question, trace);
    if (!same_secret(here, theirs)) continue;
    here.narration = false;  // the working of other rows stays (hides_working)
    here.shape = here.kv_map = false;
    out.push_back(std::move(here));
  }
  return out;
}

QuestionSecret step_secret(const Lesson& lesson, const std::vector<QuestionSecret>& own,
                           size_t index, const AttentionTrace& trace, bool own_revealed,
                           const std::function<bool(size_t)>& open) {
  QuestionSecret s;
  if (index < lesson.steps.size() && lesson.steps[index].question && !own_revealed)
    s = question_secret(*lesson.steps[index].question, trace);
  s.later = later_secrets(lesson, own, index, trace, open);
  return s;
}

}  // namespace attn
