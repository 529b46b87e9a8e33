// What a lesson question would give away on screen before it is answered: the cell, row or
// figures that hold its answer. Derived from the question's answer reference, never from its
// wording, so a lesson a teacher writes hides what it asks as the built-in ones do. The app hides
// it until the question is answered or its answer shown; class mode's picture hides it too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/stage.h"
#include "lessons/lesson.h"

namespace attn {

struct QuestionSecret {
  bool active = false;           // false: the question hides nothing (a statement question)
  std::optional<StageId> stage;  // the stage whose cells hold the answer (none: a property)
  int head = 0;                  // that stage's matrix
  int row = -1, col = -1;        // the cell; col −1: the whole row (a key question, a weight)
  // The hidden numbers: a label that writes one of them (at any precision it is shown) tells
  // the answer, and is hidden too.
  std::vector<double> values;
  std::optional<double> number;  // a number question's answer (a count, the scale, a cell)
  bool narration = false;        // the worked arithmetic of the selection
  bool scale = false;            // the scale's value (a "scale" question)
  bool shape = false;            // sizes and head counts (d_k, d_v, heads, kv_heads, n_q, n_k)
  bool kv_map = false;           // which key/value head a query head uses ("kv_head")
  // Which keys query `row` of `head` may see ("visible_keys"): the row is hidden on every stage
  // that shows the mask (its hatched cells would count the answer out).
  bool mask_row = false;
  // What the lesson's later questions would give away on this figure, while they are unanswered
  // (later_secrets below): a step must not show the answer a later step asks for. Each is a
  // cell, a row, a mask row or the scale, with its numbers.
  std::vector<QuestionSecret> later;

  // Anything hidden at all: this question's secret or a later one's.
  bool hides_anything() const { return active || !later.empty(); }
  bool conceals(StageId s, int h, int i, int j) const;
  // Anything of stage `s` hidden (panels blank what they derive from it: row sums, thumbnails).
  bool conceals_stage(StageId s) const;
  // Whether the worked arithmetic of query row `i` of head `h` would tell an answer: this
  // question's (any working does) or a later one's about that row.
  bool hides_working(int h, int i) const;
  // Whether the scale's value is hidden (a "scale" question, this one or a later one).
  bool hides_scale() const;
  // Whether `label` writes one of `values` (or a later secret's): a number in it with two or more
  // decimals that is one of them rounded to that many decimals (one decimal is too coarse to tell
  // an answer that is checked to 0.005; the question's own "0.2×0.3" does not tell 0.27).
  bool tells(const std::string& label) const;

 private:
  bool own_conceals(StageId s, int h, int i, int j) const;
  bool own_tells(const std::string& label) const;
};

// What question `q` hides on `trace` (the step's trace as the app shows it). A question whose
// answer the trace no longer holds (an edit changed its shape) hides nothing.
QuestionSecret question_secret(const LessonQuestion& q, const AttentionTrace& trace);

// Each step's question's secret on the step's own trace (inactive for a step that asks nothing):
// what later_secrets compares an earlier step's figure with.
std::vector<QuestionSecret> own_secrets(const Lesson& lesson);

// What the questions after step `index` would give away on `trace` (step `index`'s figure as it
// is shown): for each later step j whose question is still `open(j)`, its secret, when `trace`
// holds the same answer with the same numbers as step j's own trace — a cell or row of a stage,
// the keys a row may see, or the scale. An edit that changed those numbers, or another example,
// hides nothing. Shapes and head counts are not hidden on earlier steps: they are the example
// the lesson is about.
std::vector<QuestionSecret> later_secrets(const Lesson& lesson,
                                          const std::vector<QuestionSecret>& own, size_t index,
                                          const AttentionTrace& trace,
                                          const std::function<bool(size_t)>& open);

// Step `index`'s secret on `trace`: its own question's (unless `own_revealed`) with the later
// questions' that are still open.
QuestionSecret step_secret(const Lesson& lesson, const std::vector<QuestionSecret>& own,
                           size_t index, const AttentionTrace& trace, bool own_revealed,
                           const std::function<bool(size_t)>& open);

}  // namespace attn
