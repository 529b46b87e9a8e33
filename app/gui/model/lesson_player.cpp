// The lesson player's state: opening a lesson, moving between steps, applying a step's view to
// the app state and checking answers against the app's trace.
#include "gui/model/lesson_player.h"

#include "io/scenario_json.h"
#include "io/shipped.h"

namespace attn {

bool LessonPlayer::open(const std::string& name_or_path) {
  std::string error;
  const std::optional<std::string> path = resolve_shipped(kLessons, name_or_path, error);
  std::optional<Lesson> l = path ? load_lesson_file(*path, error) : std::nullopt;
  if (!l) {
    error_ = error;
    return false;
  }
  open(std::move(*l));
  return true;
}

void LessonPlayer::open(Lesson lesson) {
  answers_.assign(lesson.steps.size(), {});
  own_secrets_ = own_secrets(lesson);
  lesson_ = std::move(lesson);
  step_ = 0;
  error_.clear();
}

void LessonPlayer::close() {
  lesson_.reset();
  answers_.clear();
  own_secrets_.clear();
  step_ = 0;
}

bool LessonPlayer::go_to(int index) {
  if (!lesson_ || index < 0 || index >= step_count()) return false;
  step_ = index;
  return true;
}

bool LessonPlayer::apply(AppState& st) {
  if (!lesson_) return false;
  const LessonStep& s = step();
  const std::string origin = !s.example.empty() ? s.example : lesson_->title;
  // Reloading the same scenario would clear what a student selected or edited for nothing.
  if (st.dirty() || st.origin() != origin ||
      scenario_to_json(st.scenario()) != scenario_to_json(s.scenario)) {
    if (!st.load_scenario(s.scenario, origin)) return false;
  }
  st.wait_for_trace();
  st.set_stage(s.stage);
  st.set_head(s.head);
  if (s.select_query < 0)
    st.clear_selection();
  else if (s.select_key < 0)
    st.select_row(s.select_query);
  else
    st.select_cell(s.select_query, s.select_key);
  return true;
}

void LessonPlayer::check(const AttentionTrace& trace, int precision) {
  if (!lesson_ || !step().question) return;
  const LessonQuestion& q = *step().question;
  StepAnswer& a = answer();
  if (q.kind == QuestionKind::kNumber) {
    std::string why;
    const std::optional<float> v = parse_user_number(a.typed, why);
    if (!v) {
      a.answered = false;
      a.verdict = {false, "Type a number (" + why + ")."};
      return;
    }
    a.verdict = check_number(q, trace, *v, precision);
  } else {
    if (a.picked < 0) {
      a.answered = false;
      a.verdict = {false, "Pick an answer first."};
      return;
    }
    a.verdict = check_choice(q, trace, a.picked);
  }
  a.answered = true;
}

void LessonPlayer::show_answer(const AttentionTrace& trace, int precision) {
  if (!lesson_ || !step().question) return;
  const LessonQuestion& q = *step().question;
  StepAnswer& a = answer();
  std::string error;
  const std::string text = answer_text(q, trace, precision, error);
  a.shown = true;
  a.verdict.correct = false;
  a.verdict.feedback = text.empty() ? "The answer cannot be read: " + error
                                    : "The answer: " + text + "." +
                                          (q.explanation.empty() ? "" : " " + q.explanation);
}

QuestionSecret LessonPlayer::secret(const AttentionTrace& trace) const {
  if (!lesson_) return {};
  return step_secret(*lesson_, own_secrets_, static_cast<size_t>(step_), trace, answer().revealed(),
                     [this](size_t j) { return !answers_[j].revealed(); });
}

QuestionSecret LessonPlayer::later_secret(const AttentionTrace& trace) const {
  if (!lesson_) return {};
  return step_secret(*lesson_, own_secrets_, static_cast<size_t>(step_), trace, true,
                     [this](size_t j) { return !answers_[j].revealed(); });
}

int LessonPlayer::correct_count() const {
  int n = 0;
  for (const StepAnswer& a : answers_) n += a.answered && a.verdict.correct ? 1 : 0;
  return n;
}

int LessonPlayer::question_count() const {
  int n = 0;
  if (lesson_)
    for (const LessonStep& s : lesson_->steps) n += s.question ? 1 : 0;
  return n;
}

}  // namespace attn
