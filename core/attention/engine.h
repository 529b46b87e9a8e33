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

// A full CPU trace stores one (H, n_q, n_k) float stage, the weights, 4 bytes per cell (scores,
// scaled, masked and the mask reasons are derived when asked, a head at a time). What builds one
// for a user's input (trace, export, the app) refuses problems above this many cells
// (docs/robustness.md): 2^26 is one head of 8192 × 8192, about 0.27 GB.
// Narrating one row (compute_trace_rows) and compute's outputs have no such limit.
constexpr long long kMaxTraceCells = 1LL << 26;
// "" when the full trace of `p` fits kMaxTraceCells, else a message naming its size and the
// limit.
std::string check_trace_size(const AttentionProblem& p);

// A trace holding the problem's metadata (shapes, scale, mask, numbered tokens) and the input
// steps q, k, v; a backend then appends the stages. The problem must be valid and whole, not a
// slice of rows (asserted).
AttentionTrace begin_trace(const AttentionProblem& p);

// The staged CPU computation (Eigen products on blocks of query rows spread over every core,
// masks filled by ranges, vectorised softmax rows; every stage kept): appends scores, scaled,
// masked, weights and output to `trace`, and fills its hidden and empty_row.
void compute_stages_cpu(const AttentionProblem& p, AttentionTrace& trace);

// The weights and output of every head without the other stages (what compute --weights
// writes): the same blocks and operations as compute_stages_cpu, so the same numbers, at a
// quarter of its memory traffic. Fills one (n_q, n_k) and one (n_q, d_v) matrix per query head
// (resized in place, so a caller can reuse them) and, per head and query, whether every key is
// hidden.
void compute_weights_cpu(const AttentionProblem& p, HeadStack& weights, HeadStack& output,
                         std::vector<std::vector<bool>>& empty_row);

// Sets the titles and formulas of the stages a backend appended (asserts each exists).
void label_stages(const AttentionProblem& p, AttentionTrace& trace);

// Numerically stable row softmax of `logits / temperature` ignoring cells where hidden != 0;
// a row with every cell hidden gets all-zero weights. Shared by every CPU path.
void masked_softmax_rows(const Matrix& logits, const ReasonMatrix& hidden, float temperature,
                         Matrix& weights, std::vector<bool>& empty_row);

}  // namespace attn
