// What a lesson question would give away on screen before it is answered: the cell, row or
// figures that hold its answer. Derived from the question's answer reference, never from its
// wording, so a lesson a teacher writes hides what it asks as the built-in ones do. The app hides
// it until the question is answered or its answer shown; class mode's picture hides it too.
#pragma once

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
  bool narration = false;  // the worked arithmetic of the selection
  bool scale = false;      // the scale's value (a "scale" question)
  bool shape = false;      // sizes and head counts (d_k, d_v, heads, kv_heads, n_q, n_k)
  bool kv_map = false;     // which key/value head a query head uses ("kv_head")
  // Which keys query `row` of `head` may see ("visible_keys"): the row is hidden on every stage
  // that shows the mask (its hatched cells would count the answer out).
  bool mask_row = false;

  bool conceals(StageId s, int h, int i, int j) const;
  // Anything of stage `s` hidden (panels blank what they derive from it: row sums, thumbnails).
  bool conceals_stage(StageId s) const {
    return active && ((stage && *stage == s) || (mask_row && hides_keys(s)));
  }
  // Whether `label` writes one of `values`: a number in it with two or more decimals that is
  // one of them rounded to that many decimals (one decimal is too coarse to tell an answer that
  // is checked to 0.005; the question's own "0.2×0.3" does not tell 0.27).
  bool tells(const std::string& label) const;
};

// What question `q` hides on `trace` (the step's trace as the app shows it). A question whose
// answer the trace no longer holds (an edit changed its shape) hides nothing.
QuestionSecret question_secret(const LessonQuestion& q, const AttentionTrace& trace);

}  // namespace attn
