// Running a problem or a scenario on a backend into a full trace: the input steps and labels come
// from the engine (attention/engine.h), the stages from the backend.
#pragma once

#include "attention/scenario.h"
#include "backends/backend.h"

namespace attn {

// Runs every stage on `backend` and returns the trace with steps q, k, v, scores, scaled, masked,
// weights, output. Tokens default to "0", "1", ... The problem must be valid (asserted).
AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend);

// The scenario's trace: with projection, steps x (and x_kv), q, k, v, the attention stages, then
// concat, projected and head_contrib (attention/scenario.h). Tokens and name come from the
// scenario.
AttentionTrace compute_scenario_trace(const Scenario& s, Backend& backend);

}  // namespace attn
