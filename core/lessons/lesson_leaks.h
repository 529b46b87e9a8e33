// What a lesson's own words give away: the rules `lessons --check` applies to every lesson (the
// figures are kept honest by question_secret.h, which hides an answer on its step and on the
// lesson's earlier steps). A leak is reported, not refused: a teacher's draft still opens.
#pragma once

#include <string>
#include <vector>

#include "lessons/lesson.h"

namespace attn {

enum class LeakKind {
  kNumberInText,      // a number question's answer written in its step's words (or an earlier
                      // step's): text, formula or prompt, at 2 to 4 decimals
  kKeyNamed,          // a key question's answer named in its step's words as the only key
  kLoneJustification  // one choice alone carries a reason ("because", "so", ":", "—", "(")
};

struct LessonLeak {
  LeakKind kind;
  size_t step = 0;      // the step whose question leaks (0-based)
  size_t where = 0;     // the step whose words tell it (== step, or an earlier one)
  std::string message;  // "step 4 (“Score (fear, is)”): its text writes the answer 0.54"
};

std::vector<LessonLeak> lesson_leaks(const Lesson& lesson);

}  // namespace attn
