// The lesson player's state (no ImGui, unit-tested headless): the open lesson, the current step,
// each step's answer, and putting a step's view on the AppState (scenario, stage, head,
// selection). panel_lesson.cpp draws it; answers are checked against the app's own trace.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gui/model/app_state.h"
#include "lessons/lesson.h"
#include "lessons/question_secret.h"

namespace attn {

struct StepAnswer {
  std::string typed;  // a number question's field
  int picked = -1;    // a key or statement question's choice
  bool answered = false;
  bool shown = false;               // "Show answer" was pressed
  bool scroll_to_feedback = false;  // the view brings the new feedback into sight once
  AnswerVerdict verdict;
  // The question no longer hides its answer: checked, or its answer shown.
  bool revealed() const { return answered || shown; }
};

class LessonPlayer {
 public:
  // Opens a lesson (a file or a built-in name); false with error() naming the file, step and
  // field. The first step is not applied yet: call apply().
  bool open(const std::string& name_or_path);
  void open(Lesson lesson);
  bool is_open() const { return lesson_.has_value(); }
  const Lesson& lesson() const { return *lesson_; }
  const std::string& error() const { return error_; }
  void close();

  int step_index() const { return step_; }
  int step_count() const { return lesson_ ? static_cast<int>(lesson_->steps.size()) : 0; }
  const LessonStep& step() const { return lesson_->steps[static_cast<size_t>(step_)]; }
  bool go_to(int index);  // false when out of range; apply() then shows it
  bool next() { return go_to(step_ + 1); }
  bool previous() { return go_to(step_ - 1); }

  // Puts the current step's view on the state: loads its scenario (unless the state already
  // shows exactly that scenario), then stage, head and selection. false with the state's message
  // when the scenario does not load.
  bool apply(AppState& state);

  StepAnswer& answer() { return answers_[static_cast<size_t>(step_)]; }
  const StepAnswer& answer() const { return answers_[static_cast<size_t>(step_)]; }
  // Checks the current step's question against `trace`: the typed number, or `picked` for a key
  // or statement question. A number that does not parse sets the verdict's feedback to why.
  void check(const AttentionTrace& trace, int precision = 4);
  // Shows the current step's answer without a guess: the verdict states it, with the working.
  void show_answer(const AttentionTrace& trace, int precision = 4);
  // What the current step hides on `trace` (the app's trace of the step): its question's answer
  // until it is checked or its answer shown, and the answers of later questions still open that
  // the step's figure holds (question_secret.h, later_secrets).
  QuestionSecret secret(const AttentionTrace& trace) const;
  // Only the later questions' part of secret(): what stays hidden once this step's is revealed.
  QuestionSecret later_secret(const AttentionTrace& trace) const;
  int correct_count() const;
  int question_count() const;

  std::string next_lesson;  // in the built-in course: the lesson after this one ("" = none)

 private:
  std::optional<Lesson> lesson_;
  std::vector<StepAnswer> answers_;
  std::vector<QuestionSecret> own_secrets_;  // each step's question's secret on its own trace
  int step_ = 0;
  std::string error_;
};

}  // namespace attn
