// A problem or a scenario run on a backend: the engine starts the trace, the backend appends the
// stages, the engine labels them; a scenario adds its tokens and projection steps.
#include "backends/compute.h"

#include <cassert>

#include "attention/engine.h"

namespace attn {

AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend) {
  AttentionTrace t = begin_trace(p);
  t.backend = backend.name();
  backend.run_stages(p, t);
  label_stages(p, t);
  return t;
}

AttentionTrace compute_scenario_trace(const Scenario& s, Backend& backend) {
  assert(validate_scenario(s).empty());
  AttentionTrace t = compute_trace(to_problem(s), backend);
  add_scenario_steps(s, t);
  return t;
}

}  // namespace attn
