// The entry points of the engine: validate a problem, and compute its full trace on a backend.
#pragma once

#include <string>

#include "attention/attention.h"
#include "backends/backend.h"

namespace attn {

// Checks shapes, head counts, mask sizes, scale and temperature, and that every value is finite
// (bias may hold -inf). Returns "" when valid, else a message naming the tensor and index.
std::string validate_problem(const AttentionProblem& p);

// Runs every stage on `backend` and returns the trace with steps q, k, v, scores, scaled, masked,
// weights, output. Tokens default to "0", "1", ... The problem must be valid (asserted).
AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend);

// Numerically stable row softmax of `logits / temperature` ignoring cells where hidden != 0;
// a row with every cell hidden gets all-zero weights. Shared by every CPU path.
void masked_softmax_rows(const Matrix& logits, const ReasonMatrix& hidden, float temperature,
                         Matrix& weights, std::vector<bool>& empty_row);

}  // namespace attn
