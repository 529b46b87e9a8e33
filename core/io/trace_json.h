// The trace as JSON (cli.md `trace`): steps with per-head matrices, −∞ written as null.
#pragma once

#include <string>

#include "attention/attention.h"

namespace attn {

std::string trace_to_json(const AttentionTrace& trace);

// The shortest decimal text that reads back as the same float (e.g. 0.31f -> "0.31").
double float_for_json(float x);

}  // namespace attn
