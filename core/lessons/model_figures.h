// The figure of a lesson step about a model rather than a scenario, for its worksheet: a seq2seq
// model's alignment of the example sentence (the plot the class saw), or a language model's head
// on the step's text (its attention weights). The exporter draws both as labelled matrices.
#pragma once

#include <optional>
#include <string>

#include "lessons/lesson.h"
#include "render/labelled_matrix.h"

namespace attn {

// Nothing, with no error, when the step shows a scenario's stage; nothing with `error` naming
// the model when it cannot be loaded or run.
std::optional<LabelledMatrix> model_step_figure(const LessonStep& step, std::string& error);

}  // namespace attn
