// Running a problem or a scenario on a backend into a full trace: the input steps and labels come
// from the engine (attention/engine.h), the stages from the backend.
#pragma once

#include <functional>
#include <stdexcept>

#include "attention/scenario.h"
#include "backends/backend.h"

namespace attn {

// Runs every stage on `backend` and returns the trace with steps q, k, v, scores, scaled, masked,
// weights, output. Tokens default to "0", "1", ... The problem must be valid (asserted).
AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend);

// The trace of query rows [first, last) only, at the cost of those rows: the metadata, tokens,
// input steps (q, k, v) and masks of the whole problem, and the stages of the rows, with
// trace.first_row = first (attention/row_slice.h keeps every query's position). What `explain`
// needs to narrate one query of a long sequence. Falls back to the CPU when `backend` cannot run
// a slice. Requires 0 <= first < last <= n_q.
AttentionTrace compute_trace_rows(const AttentionProblem& p, Backend& backend, int first, int last);

// The weights and output of every query row, computed one head at a time in blocks of at most
// `block_rows` query rows and handed to sink(head, first_row, weights, output) in (head, row)
// order, so the (n_q, n_k) weights of a long sequence are never all in memory at once (what
// `compute --weights` streams to its file). Runs on `backend` when it can run a slice of rows,
// else on the CPU.
using RowBlockSink =
    std::function<void(int head, int first_row, const Matrix& weights, const Matrix& output)>;
void compute_weights_by_rows(const AttentionProblem& p, Backend& backend, int block_rows,
                             const RowBlockSink& sink);

// What compute_scenario_trace throws for a scenario that validate_scenario refuses (its message).
struct InvalidScenario : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The scenario's trace: with projection, steps x (and x_kv), q, k, v, the attention stages, then
// concat, projected and head_contrib (attention/scenario.h). Tokens and name come from the
// scenario. Throws InvalidScenario when validate_scenario(s) is not empty.
AttentionTrace compute_scenario_trace(const Scenario& s, Backend& backend);
// compute_scenario_trace for query rows [first, last) (see compute_trace_rows); the projection's
// x and x_kv steps are whole, concat, projected and head_contrib hold the rows.
AttentionTrace compute_scenario_trace_rows(const Scenario& s, Backend& backend, int first,
                                           int last);

}  // namespace attn
