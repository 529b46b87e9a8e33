// Step lookup on AttentionTrace, the stages it derives on demand, and AttentionProblem helpers.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "attention/attention.h"
#include "attention/mask.h"
#include "attention/stage_memory.h"

namespace attn {

float AttentionProblem::effective_scale() const {
  if (options.scale) return *options.scale;
  if (options.additive) return 1.0f;
  return 1.0f / std::sqrt(static_cast<float>(input.d_k()));
}

const TraceStep* AttentionTrace::find(StageId id) const {
  for (const auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

TraceStep* AttentionTrace::find(StageId id) {
  for (auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

void DerivedCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  scores_ = {};
  scaled_ = {};
  masked_ = {};
  hidden_.clear();
}

const ReasonMatrix& AttentionTrace::hidden_locked(int h) const {
  const size_t hs = static_cast<size_t>(h);
  if (hs < hidden.size() && hidden[hs].size() > 0) return hidden[hs];
  auto& cache = derived_cache.hidden_;
  if (cache.size() < static_cast<size_t>(num_heads)) cache.resize(static_cast<size_t>(num_heads));
  assert(hs < cache.size());
  if (!cache[hs]) {
    // The rows the stages hold: all n_q, or a few from first_row on (compute_trace_rows).
    const TraceStep* weights = find(StageId::kWeights);
    const Eigen::Index rows =
        weights && hs < weights->heads.size() ? weights->heads[hs].rows() : n_q;
    auto r = std::make_unique<ReasonMatrix>();
    resize_for_writing(*r, rows, n_k);
    fill_reason_rows(mask, MaskGeometry(mask, n_q, n_k), h, first_row, first_row, *r);
    cache[hs] = std::move(r);
  }
  return *cache[hs];
}

const ReasonMatrix& AttentionTrace::hidden_of(int h) const {
  std::lock_guard<std::mutex> lock(derived_cache.mutex_);
  return hidden_locked(h);
}

bool AttentionTrace::has_reasons(int h) const {
  if (h >= 0 && static_cast<size_t>(h) < hidden.size() && hidden[static_cast<size_t>(h)].size())
    return true;
  // No mask hides anything: nothing to build (readers then treat −∞ cells as hidden, and there
  // are none), and a long unmasked sequence keeps no byte per cell.
  if (mask.empty()) return false;
  // begin_trace records the masks: the reasons follow from them for any head.
  return h >= 0 && h < num_heads;
}

const Matrix& AttentionTrace::head(const TraceStep& s, int h) const {
  if (s.derived == DerivedStage::kStored) return s.heads[static_cast<size_t>(h)];
  const TraceStep& scores_step = step(StageId::kScores);
  std::lock_guard<std::mutex> lock(derived_cache.mutex_);
  DerivedCache::Slot& slot = s.derived == DerivedStage::kScores   ? derived_cache.scores_
                             : s.derived == DerivedStage::kScaled ? derived_cache.scaled_
                                                                  : derived_cache.masked_;
  if (slot.head == h) return slot.m;
  // The engine's own operations (attention/staged.cpp), so the numbers are the same bits: the
  // products in its blocks of query rows, then × scale, + bias, −∞.
  slot.head = -1;
  const Eigen::Index rows = step(StageId::kWeights).heads[static_cast<size_t>(h)].rows();
  resize_for_writing(slot.m, rows, n_k);
  if (scores_step.derived == DerivedStage::kStored) {
    slot.m = scores_step.heads[static_cast<size_t>(h)];
  } else {
    const Matrix& Q = step(StageId::kQ).heads[static_cast<size_t>(h)];
    const Matrix& K =
        step(StageId::kK).heads[static_cast<size_t>(kv_head_of[static_cast<size_t>(h)])];
    for (Eigen::Index i0 = 0; i0 < rows; i0 += kStageBlockRows) {
      const Eigen::Index r = std::min<Eigen::Index>(kStageBlockRows, rows - i0);
      // A block of Q rows of its own, as the engine multiplies (its alignment can change the
      // product's last bit).
      const Matrix Qb = Q.middleRows(first_row + i0, r);
      slot.m.middleRows(i0, r).noalias() = Qb * K.transpose();
    }
  }
  if (s.derived != DerivedStage::kScores) slot.m *= scale;
  // Without a mask nothing is hidden: no reasons to build (a byte per cell, 16 MB a head at 4096
  // tokens) and no cell to set to −∞.
  if (s.derived == DerivedStage::kMasked && has_reasons(h)) {
    if (const Matrix* bias = mask_for_head(mask.bias, h))
      slot.m += bias->middleRows(first_row, rows);
    const ReasonMatrix& r = hidden_locked(h);
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    for (Eigen::Index k = 0; k < slot.m.size(); ++k)
      if (r.data()[k]) slot.m.data()[k] = kNegInf;
  }
  slot.head = h;
  return slot.m;
}

const TraceStep& AttentionTrace::step(StageId id) const {
  const TraceStep* s = find(id);
  assert(s && "no such step in trace");
  return *s;
}

}  // namespace attn
