// A lesson's questions as worksheet items (render/worksheet.h): each question with the scenario
// it is asked on, its options and its answer read from its step's own trace — what
// `worksheet --lesson` and the app's File → Worksheet print for an open lesson.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "lessons/lesson.h"
#include "render/worksheet.h"

namespace attn {

// The sheet's questions point into `traces` (one per question, computed here): keep it alive
// and unchanged while the sheet is used. None, with `error` naming the file and the step, when a
// question's answer cannot be read or the lesson asks no question.
std::optional<LessonSheet> lesson_sheet(const Lesson& lesson, std::vector<AttentionTrace>& traces,
                                        int precision, std::string& error);

// A lesson sheet that owns its traces (the app hands it to a worker thread).
struct OwnedLessonSheet {
  std::vector<AttentionTrace> traces;
  LessonSheet sheet;
};

}  // namespace attn
