// Step lookup on AttentionTrace and AttentionProblem helpers.
#include <cassert>
#include <cmath>

#include "attention/attention.h"

namespace attn {

float AttentionProblem::effective_scale() const {
  if (options.scale) return *options.scale;
  return 1.0f / std::sqrt(static_cast<float>(input.d_k()));
}

const TraceStep* AttentionTrace::find(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

TraceStep* AttentionTrace::find(const std::string& id) {
  for (auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

const TraceStep& AttentionTrace::step(const std::string& id) const {
  const TraceStep* s = find(id);
  assert(s && "no such step in trace");
  return *s;
}

}  // namespace attn
