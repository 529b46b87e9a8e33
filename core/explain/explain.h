// The narration of a query row: every stage's arithmetic written out with the actual numbers.
// The CLI's `explain` and the app's narration panel print the same text from this code.
#pragma once

#include <optional>
#include <string>

#include "attention/attention.h"

namespace attn {

struct ExplainRequest {
  int query = 0;                // query row i
  int head = 0;                 // query head h
  std::optional<int> key;       // one cell (i, j) only, when set; else the whole row
  std::optional<StageId> step;  // one stage only, when set; else every stage in order
  int precision = 4;            // decimals
  bool unicode = true;          // √, ×, −∞, ·, subscripts; false = plain ASCII
};

// Returns the narration, or "" and sets `error` (naming the field: "query: …") when out of range.
std::string explain(const AttentionTrace& trace, const ExplainRequest& request, std::string& error);

// The request's query row through stages 4 and 5 as FlashAttention computes them: keys in blocks
// of `block` (--online-softmax), the running maximum m and sum ℓ, the accumulator rescaled when m
// grows, one division at the end; its last line is the output line explain() prints. Whole rows
// only (no key or step). Returns "" and sets `error` as explain() does, or for a block below 1.
std::string explain_online_softmax(const AttentionTrace& trace, const ExplainRequest& request,
                                   int block, std::string& error);

}  // namespace attn
