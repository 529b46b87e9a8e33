// Recomputing only the heads an edit changed (see head_patch.h).
#include "backends/head_patch.h"

#include <cassert>

#include "attention/row_slice.h"
#include "backends/compute.h"

namespace attn {
namespace {

// The input steps hold one matrix per key/value head; every other stage one per query head.
bool per_kv_head(StageId id) { return id == StageId::kK || id == StageId::kV; }

bool same_shape(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols();
}

// Whether `one` (a one-head trace) fits query head h of `trace`: the same stages, stored or
// derived alike, with matrices of the same shapes.
bool fits(const AttentionTrace& trace, int h, const AttentionTrace& one) {
  if (h < 0 || h >= trace.num_heads || one.num_heads != 1 || one.steps.size() != trace.steps.size())
    return false;
  if (one.first_row != trace.first_row || one.n_q != trace.n_q || one.n_k != trace.n_k)
    return false;
  const size_t hs = static_cast<size_t>(h);
  const size_t g = static_cast<size_t>(trace.kv_head_of[hs]);
  for (const TraceStep& s : trace.steps) {
    const TraceStep* o = one.find(s.id);
    if (!o || o->derived != s.derived) return false;
    if (s.derived != DerivedStage::kStored) continue;
    const size_t at = per_kv_head(s.id) ? g : hs;
    if (o->heads.size() != 1 || at >= s.heads.size() || !same_shape(o->heads[0], s.heads[at]))
      return false;
  }
  if (!trace.hidden.empty() && (trace.hidden.size() <= hs || one.hidden.size() != 1)) return false;
  if (!trace.empty_row.empty() && (trace.empty_row.size() <= hs || one.empty_row.size() != 1))
    return false;
  return true;
}

}  // namespace

bool patchable(const AttentionOptions& o) { return !o.variants.any() && !o.additive; }

bool patchable(const AttentionProblem& p) {
  return patchable(p.options) && p.first_query_row == 0 && p.total_query_rows == 0;
}

HeadPatch compute_head_patch(const AttentionProblem& p, const std::vector<int>& heads,
                             Backend& backend) {
  assert(patchable(p));
  HeadPatch patch;
  patch.heads = heads;
  patch.traces.reserve(heads.size());
  for (int h : heads) patch.traces.push_back(compute_trace(select_head(p, h), backend));
  return patch;
}

bool apply_head_patch(AttentionTrace& trace, HeadPatch& patch) {
  if (patch.heads.size() != patch.traces.size()) return false;
  for (size_t i = 0; i < patch.heads.size(); ++i)
    if (!fits(trace, patch.heads[i], patch.traces[i])) return false;
  for (size_t i = 0; i < patch.heads.size(); ++i) {
    const size_t h = static_cast<size_t>(patch.heads[i]);
    const size_t g = static_cast<size_t>(trace.kv_head_of[h]);
    AttentionTrace& one = patch.traces[i];
    for (TraceStep& s : trace.steps) {
      if (s.derived != DerivedStage::kStored) continue;
      // A key/value head shared by several patched query heads is the same matrix in each.
      s.heads[per_kv_head(s.id) ? g : h] = std::move(one.find(s.id)->heads[0]);
    }
    if (!trace.hidden.empty()) trace.hidden[h] = std::move(one.hidden[0]);
    if (!trace.empty_row.empty()) trace.empty_row[h] = std::move(one.empty_row[0]);
  }
  // Derived heads were computed from the old Q and K.
  trace.derived_cache.clear();
  return true;
}

}  // namespace attn
