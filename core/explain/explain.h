// The narration of a query row: every stage's arithmetic written out with the actual numbers.
// The CLI's `explain` and the app's narration panel print the same text from this code.
#pragma once

#include <optional>
#include <string>

#include "attention/attention.h"

namespace attn {

struct ExplainRequest {
  int query = 0;           // query row i
  int head = 0;            // query head h
  std::optional<int> key;  // one cell (i, j) only, when set; else the whole row
  std::string step;        // one stage only ("scores", "scaled", "masked", "weights", "output",
                           // or a projection step), when set; else every stage in order
  int precision = 4;       // decimals
  bool unicode = true;     // √, ×, −∞, ·, subscripts; false = plain ASCII
};

// Returns the narration, or "" and sets `error` (naming --query/--head/--key) when out of range.
std::string explain(const AttentionTrace& trace, const ExplainRequest& request, std::string& error);

}  // namespace attn
