// The engine's entry points that need no backend: validate a problem, start a trace (metadata and
// the input steps), compute the attention stages on the CPU, and label them. Backends run the
// stages their own way (backends/compute.h puts the pieces together).
#pragma once

#include <string>

#include "attention/attention.h"

namespace attn {

// Checks shapes, head counts, mask sizes, scale and temperature, and that every value is finite
// (bias may hold -inf). Returns "" when valid, else a message naming the tensor and index.
std::string validate_problem(const AttentionProblem& p);

// A full trace keeps four (H, n_q, n_k) float stages and a byte of mask reasons per cell, 17
// bytes per cell. What builds one for a user's input (trace, export, the app) refuses problems
// above this many cells (docs/robustness.md): 2^26 is one head of 8192 × 8192, about 1.1 GB.
// Narrating one row (compute_trace_rows) and compute's outputs have no such limit.
constexpr long long kMaxTraceCells = 1LL << 26;
// "" when the full trace of `p` fits kMaxTraceCells, else a message naming its size and the
// limit.
std::string check_trace_size(const AttentionProblem& p);

// A trace holding the problem's metadata (shapes, scale, mask, numbered tokens) and the input
// steps q, k, v; a backend then appends the stages. The problem must be valid and whole, not a
// slice of rows (asserted).
AttentionTrace begin_trace(const AttentionProblem& p);

// The staged CPU computation (Eigen, head by head, every stage kept): appends scores, scaled,
// masked, weights and output to `trace`, and fills its hidden and empty_row.
void compute_stages_cpu(const AttentionProblem& p, AttentionTrace& trace);

// Sets the titles and formulas of the stages a backend appended (asserts each exists).
void label_stages(const AttentionProblem& p, AttentionTrace& trace);

// Numerically stable row softmax of `logits / temperature` ignoring cells where hidden != 0;
// a row with every cell hidden gets all-zero weights. Shared by every CPU path.
void masked_softmax_rows(const Matrix& logits, const ReasonMatrix& hidden, float temperature,
                         Matrix& weights, std::vector<bool>& empty_row);

}  // namespace attn
