// A lesson's questions as worksheet items (see lesson_sheet.h).
#include "lessons/lesson_sheet.h"

#include "attention/format.h"
#include "render/heatmap_view.h"

namespace attn {
namespace {

// Which scenario a question is asked on, in words: the example or file, and the settings that
// change its numbers.
std::string setup_of(const LessonStep& step, const AttentionTrace& t) {
  std::string s = !step.example.empty()         ? "Example “" + step.example + "”"
                  : !step.scenario_file.empty() ? "Scenario " + step.scenario_file
                                                : "Scenario “" + step.scenario.name + "”";
  const std::string mask = mask_summary(t.mask);
  if (!mask.empty()) s += " · " + mask;
  if (t.scale_overridden) s += " · scale " + format_fixed(t.scale, 4, true);
  if (t.temperature != 1.0f) s += " · temperature T = " + format_value(t.temperature);
  if (t.num_heads > 1) s += " · head " + std::to_string(step.head);
  return s;
}

}  // namespace

std::optional<LessonSheet> lesson_sheet(const Lesson& lesson, std::vector<AttentionTrace>& traces,
                                        int precision, std::string& error) {
  LessonSheet sheet;
  sheet.title = lesson.title;
  sheet.summary = lesson.summary;
  traces.clear();
  traces.reserve(lesson.steps.size());  // the questions point into it: it must not reallocate
  std::string last_setup;
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    if (!step.question) continue;
    traces.push_back(lesson_step_trace(step));
    const AttentionTrace& t = traces.back();
    const LessonQuestion& q = *step.question;
    SheetQuestion sq;
    sq.step_title = step.title;
    sq.context = step.text;
    sq.formula = step.formula;
    sq.setup = setup_of(step, t);
    sq.head = step.head;
    // The tables again only when the numbers differ from the previous question's.
    if (sq.setup != last_setup) sq.tables = &t;
    last_setup = sq.setup;
    sq.prompt = q.prompt;
    sq.options = question_options(q, t);
    sq.answer = answer_text(q, t, precision, error);
    if (!error.empty()) {
      error = lesson.path + ": step " + std::to_string(i + 1) + ": " + error;
      return std::nullopt;
    }
    sq.explanation = q.explanation;
    sheet.questions.push_back(std::move(sq));
  }
  if (sheet.questions.empty()) {
    error = lesson.path + " asks no questions";
    return std::nullopt;
  }
  return sheet;
}

}  // namespace attn
