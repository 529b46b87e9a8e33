// Undo and redo as differences between neighbouring states (see scenario_history.h).
#include "gui/model/scenario_history.h"

#include <algorithm>
#include <cstring>

namespace attn {
namespace {

// Every matrix of a scenario, in a fixed order: Q, K, V per head, then the projection's X, X_kv,
// W_Q, W_K, W_V per head and W_O. Two scenarios of the same shape list the same slots.
template <typename S, typename M>
std::vector<M*> matrix_slots(S& s) {
  std::vector<M*> out;
  for (auto* stack : {&s.qkv.q, &s.qkv.k, &s.qkv.v})
    for (auto& m : *stack) out.push_back(&m);
  out.push_back(&s.projection.x);
  out.push_back(&s.projection.x_kv);
  for (auto* stack : {&s.projection.w_q, &s.projection.w_k, &s.projection.w_v})
    for (auto& m : *stack) out.push_back(&m);
  out.push_back(&s.projection.w_o);
  return out;
}

std::vector<Matrix*> slots(Scenario& s) { return matrix_slots<Scenario, Matrix>(s); }
std::vector<const Matrix*> slots(const Scenario& s) {
  return matrix_slots<const Scenario, const Matrix>(s);
}

// The same shape and the same bits (so an undo gives back −0 and 0 as they were).
bool same(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 ||
          std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(float)) == 0);
}

Matrix take(Matrix& m) {
  Matrix out = std::move(m);
  m.resize(0, 0);
  return out;
}

}  // namespace

size_t ScenarioHistory::Step::bytes() const {
  size_t b = 0;
  for (const auto& [i, m] : changed) b += static_cast<size_t>(m.size()) * sizeof(float);
  return b;
}

ScenarioHistory::Step ScenarioHistory::diff(Scenario&& from, const Scenario& to) {
  Step s;
  const std::vector<Matrix*> f = slots(from);
  const std::vector<const Matrix*> t = slots(to);
  s.slots = f.size();
  for (size_t i = 0; i < f.size(); ++i) {
    if (i >= t.size() || !same(*f[i], *t[i])) s.changed.emplace_back(i, take(*f[i]));
    f[i]->resize(0, 0);
  }
  s.rest = std::move(from);
  return s;
}

EditedHeads merge_edited_heads(const EditedHeads& a, const EditedHeads& b) {
  if (!a || !b) return std::nullopt;
  std::vector<int> both = *a;
  both.insert(both.end(), b->begin(), b->end());
  std::sort(both.begin(), both.end());
  both.erase(std::unique(both.begin(), both.end()), both.end());
  return both;
}

void ScenarioHistory::swap_with(Step& s, Scenario& current) {
  Scenario restored = std::move(s.rest);
  const std::vector<Matrix*> r = slots(restored);
  const std::vector<Matrix*> c = slots(current);
  Step back;
  back.slots = c.size();
  back.heads = std::move(s.heads);  // going back changes the same heads
  std::vector<bool> stored(r.size(), false);
  for (auto& [i, m] : s.changed) {
    if (i >= r.size()) continue;
    stored[i] = true;
    if (i < c.size()) back.changed.emplace_back(i, take(*c[i]));
    *r[i] = std::move(m);
  }
  // A matrix the step did not keep is the same in both states (and exists in both).
  for (size_t i = 0; i < r.size(); ++i)
    if (!stored[i] && i < c.size()) *r[i] = take(*c[i]);
  for (size_t i = r.size(); i < c.size(); ++i) back.changed.emplace_back(i, take(*c[i]));
  back.rest = std::move(current);
  current = std::move(restored);
  s = std::move(back);
}

void ScenarioHistory::record(Scenario&& before, const Scenario& after, EditedHeads heads) {
  // The saved state one undo further back, or lost with the redo steps.
  if (saved_offset_ && *saved_offset_ >= 0)
    ++*saved_offset_;
  else
    saved_offset_.reset();
  redo_.clear();
  undo_.push_back(diff(std::move(before), after));
  undo_.back().heads = std::move(heads);
  trim();
}

void ScenarioHistory::extend(const Scenario& before, const Scenario& after, EditedHeads heads) {
  if (undo_.empty()) {
    Scenario copy = before;
    record(std::move(copy), after, std::move(heads));
    return;
  }
  // The state this change leaves was the saved one (then nothing leads back to it), or the saved
  // state was among the redo steps.
  if (saved_offset_ && *saved_offset_ <= 0) saved_offset_.reset();
  redo_.clear();
  // The newest step holds the gesture's starting state; a matrix it does not keep is still the
  // same as in `before`, so if this change alters it, `before`'s version is the starting one.
  Step& s = undo_.back();
  s.heads = merge_edited_heads(s.heads, heads);
  std::vector<bool> stored(s.slots, false);
  for (const auto& [i, m] : s.changed)
    if (i < stored.size()) stored[i] = true;
  const std::vector<const Matrix*> b = slots(before);
  const std::vector<const Matrix*> a = slots(after);
  for (size_t i = 0; i < s.slots && i < b.size(); ++i)
    if (!stored[i] && (i >= a.size() || !same(*b[i], *a[i]))) s.changed.emplace_back(i, *b[i]);
  trim();
}

bool ScenarioHistory::move_newest(std::vector<Step>& from, std::vector<Step>& to, Scenario& current,
                                  EditedHeads* heads) {
  if (from.empty()) return false;
  Step s = std::move(from.back());
  from.pop_back();
  if (heads) *heads = s.heads;
  swap_with(s, current);
  to.push_back(std::move(s));
  return true;
}

bool ScenarioHistory::undo(Scenario& current, EditedHeads* heads) {
  if (!move_newest(undo_, redo_, current, heads)) return false;
  if (saved_offset_) --*saved_offset_;
  return true;
}

bool ScenarioHistory::redo(Scenario& current, EditedHeads* heads) {
  if (!move_newest(redo_, undo_, current, heads)) return false;
  if (saved_offset_) ++*saved_offset_;
  return true;
}

void ScenarioHistory::clear() {
  undo_.clear();
  redo_.clear();
  if (!at_saved()) saved_offset_.reset();  // the way back to it is gone
}

size_t ScenarioHistory::bytes() const {
  size_t b = 0;
  for (const auto* list : {&undo_, &redo_})
    for (const Step& s : *list) b += s.bytes();
  return b;
}

void ScenarioHistory::trim() {
  size_t total = 0;
  for (const Step& s : undo_) total += s.bytes();
  size_t drop = 0;
  while (undo_.size() - drop > 1 && (undo_.size() - drop > kMaxSteps || total > kMaxBytes)) {
    total -= undo_[drop].bytes();
    ++drop;
  }
  undo_.erase(undo_.begin(), undo_.begin() + static_cast<std::ptrdiff_t>(drop));
  // The saved state was before the oldest step kept.
  if (saved_offset_ && *saved_offset_ > static_cast<long>(undo_.size())) saved_offset_.reset();
}

}  // namespace attn
