// A lesson's questions as worksheet items (render/worksheet.h): each question with the scenario
// it is asked on, its options and its answer read from its step's own trace — what
// `worksheet --lesson` and the app's File → Worksheet print for an open lesson.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "lessons/lesson.h"
#include "lessons/question_secret.h"
#include "render/worksheet.h"

namespace attn {

// The sheet's questions point into `traces` (one per question, computed here): keep it alive
// and unchanged while the sheet is used. None, with `error` naming the file and the step, when a
// question's answer cannot be read or the lesson asks no question.
std::optional<LessonSheet> lesson_sheet(const Lesson& lesson, std::vector<AttentionTrace>& traces,
                                        int precision, std::string& error);

// The picture of a lesson step as class mode serves it to students: the step's stage and head on
// `trace` (the step's trace as the app shows it; the figure points into it), or its model's figure
// (a translation's alignment, a language model's head), with what `hide` hides blank (the step's
// question's secret and the later questions', question_secret.h). Not drawn() when the step shows
// only its inputs, or (with `error` naming the model) when its model cannot be run.
SheetFigure lesson_step_figure(const LessonStep& step, const AttentionTrace& trace,
                               const QuestionSecret& hide, std::string& error);

// Words that tell a reader to work the app ("click", "press", "slider", "thumbnail", "View →",
// …): a lesson's text says them to a student at the screen; on paper they mean nothing.
inline constexpr const char* kAppWords[] = {"click",
                                            "press",
                                            "slider",
                                            "drag",
                                            "hover",
                                            "button",
                                            "thumbnail",
                                            "menu",
                                            "View →",
                                            "File →",
                                            "tab",
                                            "window shows",
                                            "window compares",
                                            "window's",
                                            "seq2seq window",
                                            "language-model window",
                                            "head view",
                                            "model view",
                                            "select",
                                            "choose",
                                            "switch",
                                            "on the left",
                                            "the strip",
                                            "in the app",
                                            "on screen"};
// Whether `text` says one of kAppWords (whole words, any case).
bool tells_to_work_the_app(const std::string& text);
// `text` for paper: parentheses and then sentences that tell to work the app are left out, and
// "the heatmap" becomes "the figure". "" when nothing is left.
std::string paper_wording(const std::string& text);

// A lesson sheet that owns its traces (the app hands it to a worker thread).
struct OwnedLessonSheet {
  std::vector<AttentionTrace> traces;
  LessonSheet sheet;
};

}  // namespace attn
