#include "lessons/lesson_leaks.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "attention/format.h"
#include "lessons/question_secret.h"

namespace attn {
namespace {

std::string step_name(const Lesson& lesson, size_t i) {
  return "step " + std::to_string(i + 1) + " (“" + lesson.steps[i].title + "”)";
}

// The words a step shows a student: its paragraphs and formula.
std::vector<std::string> words_of(const LessonStep& step) {
  std::vector<std::string> out = step.text;
  if (!step.formula.empty()) out.push_back(step.formula);
  return out;
}

// The tokens a text quotes: “x”, "x" or ‘x’.
std::set<std::string> quoted(const std::string& text) {
  std::set<std::string> out;
  const std::pair<std::string, std::string> quotes[] = {
      {"“", "”"}, {"\"", "\""}, {"‘", "’"}, {"'", "'"}};
  for (const auto& [open, close] : quotes) {
    for (size_t at = text.find(open); at != std::string::npos; at = text.find(open, at)) {
      const size_t from = at + open.size();
      const size_t end = text.find(close, from);
      if (end == std::string::npos) break;
      out.insert(text.substr(from, end - from));
      at = end + close.size();
    }
  }
  return out;
}

// Whether a choice gives a reason: a word or mark that introduces one.
bool justifies(const std::string& choice) {
  static const char* const kMarks[] = {" because ", " since ",     " so ",   " so that ",
                                       ": ",        " — ",         " – ",    " (",
                                       ", which ",  " therefore ", " hence "};
  const std::string padded = " " + choice + " ";
  for (const char* m : kMarks)
    if (padded.find(m) != std::string::npos) return true;
  return false;
}

// Whether `text` writes `digits` as a number of its own (not part of 12, 0.5 or x1).
bool writes_whole_number(const std::string& text, const std::string& digits) {
  auto part = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_';
  };
  for (size_t at = text.find(digits); at != std::string::npos; at = text.find(digits, at + 1)) {
    const size_t end = at + digits.size();
    const bool before = at > 0 && part(text[at - 1]);
    const bool after = end < text.size() &&
                       (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                        (text[end] == '.' && end + 1 < text.size() &&
                         std::isdigit(static_cast<unsigned char>(text[end + 1]))));
    if (!before && !after) return true;
  }
  return false;
}

void number_leaks(const Lesson& lesson, size_t j, const AttentionTrace& t,
                  std::vector<LessonLeak>& out) {
  const LessonQuestion& q = *lesson.steps[j].question;
  std::string error;
  const std::optional<double> answer = number_answer(q, t, error);
  if (!answer) return;
  // Written at two or more decimals (a count or a one-decimal figure is too common a word).
  QuestionSecret s;
  s.active = true;
  s.values = {*answer};
  // A count (keys a row sees, heads, sizes) is a whole number: written as one in the step's own
  // text or formula it is the answer (the prompt may name choices: "0 or 1").
  const bool count = !q.answer.property.empty() && q.answer.property != "scale" &&
                     std::abs(*answer - std::round(*answer)) < 1e-9;
  if (count) {
    const std::string digits = std::to_string(static_cast<long long>(std::llround(*answer)));
    for (const std::string& w : words_of(lesson.steps[j])) {
      if (!writes_whole_number(w, digits)) continue;
      out.push_back({LeakKind::kNumberInText, j, j,
                     step_name(lesson, j) + ": the answer " + digits +
                         " is written in the step's own words: “" + w + "”"});
      return;
    }
  }
  for (size_t i = 0; i <= j; ++i) {
    std::vector<std::string> words = words_of(lesson.steps[i]);
    if (i == j) words.push_back(q.prompt);
    for (const std::string& w : words) {
      if (!s.tells(w)) continue;
      out.push_back({LeakKind::kNumberInText, j, i,
                     step_name(lesson, j) + ": the answer " + format_fixed(*answer, 4, true) +
                         " is written in " +
                         (i == j ? "the step's own words" : step_name(lesson, i) + "'s words") +
                         ": “" + w + "”"});
      break;
    }
  }
}

void key_leaks(const Lesson& lesson, size_t j, const AttentionTrace& t,
               std::vector<LessonLeak>& out) {
  const LessonStep& step = lesson.steps[j];
  const LessonQuestion& q = *step.question;
  std::string error;
  const std::optional<int> best = key_answer(q, t, error);
  if (!best) return;
  const auto& keys = t.key_tokens;
  const int row = q.answer.row;
  if (*best < 0 || *best >= static_cast<int>(keys.size())) return;
  const std::string& winner = keys[static_cast<size_t>(*best)];
  // The query's own token is quoted to say which row is asked: it names no answer.
  const std::string self =
      row >= 0 && row < static_cast<int>(t.query_tokens.size()) ? t.query_tokens[row] : "";
  if (winner == self) return;
  std::set<std::string> candidates;
  const bool masked = q.answer.head < t.num_heads && t.has_reasons(q.answer.head);
  for (size_t k = 0; k < keys.size(); ++k)
    if (!masked || !t.hidden_of(q.answer.head)(row, static_cast<Eigen::Index>(k)))
      candidates.insert(keys[k]);
  for (const std::string& w : words_of(step)) {
    const std::set<std::string> named = quoted(w);
    if (!named.count(winner)) continue;
    bool others = false;
    for (const std::string& n : named) others |= n != winner && n != self && candidates.count(n);
    if (others) continue;
    out.push_back({LeakKind::kKeyNamed, j, j,
                   step_name(lesson, j) + ": its words name “" + winner +
                       "”, the answer, and no other key: “" + w + "”"});
    return;
  }
}

void choice_leaks(const Lesson& lesson, size_t j, std::vector<LessonLeak>& out) {
  const LessonQuestion& q = *lesson.steps[j].question;
  if (q.choices.size() < 3) return;
  int with_reason = 0;
  size_t which = 0;
  for (size_t c = 0; c < q.choices.size(); ++c)
    if (justifies(q.choices[c].text)) {
      ++with_reason;
      which = c;
    }
  if (with_reason != 1) return;
  out.push_back({LeakKind::kLoneJustification, j, j,
                 step_name(lesson, j) + ": choice " +
                     std::string(1, static_cast<char>('A' + which)) + " alone gives a reason (“" +
                     q.choices[which].text +
                     "”): a reason marks the choice the author thought through; give each choice "
                     "one, or none"});
}

}  // namespace

std::vector<LessonLeak> lesson_leaks(const Lesson& lesson) {
  std::vector<LessonLeak> out;
  for (size_t j = 0; j < lesson.steps.size(); ++j) {
    const LessonStep& step = lesson.steps[j];
    if (!step.question) continue;
    switch (step.question->kind) {
      case QuestionKind::kNumber:
        number_leaks(lesson, j, lesson_step_trace(step), out);
        break;
      case QuestionKind::kKey:
        key_leaks(lesson, j, lesson_step_trace(step), out);
        break;
      case QuestionKind::kStatement:
        choice_leaks(lesson, j, out);
        break;
    }
  }
  return out;
}

}  // namespace attn
