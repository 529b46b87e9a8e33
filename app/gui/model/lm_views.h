// What the language-model window's tabs derive from a forward pass (the Circuit tab's score
// split, the Block tab's path, the Rollout tab's rows), and `RunDerived`, which computes such a
// value on a worker and keeps it until the run or the question changes. LmSession owns one per
// tab; the panels only read what it hands them. No ImGui.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lm/block_path.h"
#include "lm/circuit.h"
#include "train/background_job.h"

namespace attn {

struct LmRun;

// The Circuit tab: for query token `query`, the previous-token head `prev` and the induction head
// `ind` (each l · NH + h), the two keys the induction head weighs most and each one's score split
// into the parts that wrote it (lm/circuit.h), and the tokens most likely to follow the query.
struct CircuitView {
  int query = -1, prev = -1, ind = -1;
  int winner = -1, runner_up = -1;
  std::vector<lm::ScorePart> winner_parts, runner_parts;
  std::vector<std::pair<int, double>> next;
};
CircuitView circuit_view(const LmRun& run, int query, int prev, int ind);

// The Block tab's path of token `position` through block `layer`, head `head`, at `temperature`
// (lm/block_path.h, with the values, keys and tokens the tab shows).
lm::BlockPath block_view(const LmRun& run, int layer, int head, int position, double temperature);

// A value derived from one run for one question (Key), computed off the UI thread. get() returns
// the value when it is the one asked for; else it starts computing that one and returns the last
// value of the same run meanwhile (so a tab does not flicker while its question changes), or null
// when there is none (the tab says it is computing). poll() picks the new value up.
template <typename Key, typename Value>
class RunDerived {
 public:
  using Work = std::function<Value()>;

  const Value* get(uint64_t serial, const Key& key, Work work) {
    const std::pair<uint64_t, Key> asked{serial, key};
    if (value_ && have_ == asked) return &*value_;
    // One at a time: a question asked while another computes starts when that one is in. One
    // that failed is not asked again (its error is on screen) until the run or question changes.
    if (!job_.running() && failed_ != asked) {
      computing_ = asked;
      job_.start([work = std::move(work)](JobControl&) { return work(); });
    }
    return value_ && have_->first == serial ? &*value_ : nullptr;
  }
  // True when a value arrived or a computation failed: one that threw leaves the last value and
  // sets `failure` to why.
  bool poll(std::string& failure) {
    auto r = job_.poll();
    if (!r) return false;
    if (r->ok()) {
      value_ = std::move(*r->value);
      have_ = computing_;
    } else {
      failure = r->error;
      failed_ = computing_;
    }
    return true;
  }
  bool busy() const { return job_.running(); }
  // The last value computed, whatever it was asked for (null before the first).
  const Value* last() const { return value_ ? &*value_ : nullptr; }
  void wait() { job_.wait(); }

 private:
  BackgroundJob<Value> job_;
  std::optional<std::pair<uint64_t, Key>> have_, computing_, failed_;
  std::optional<Value> value_;
};

}  // namespace attn
