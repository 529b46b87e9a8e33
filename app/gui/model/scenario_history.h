// The app's undo and redo: each step keeps only what it changed. A scenario of 4096 tokens and
// 4 heads holds 4 MB of Q, K and V, and an edit of one value changes one 4096 × 16 matrix of it
// (256 KB); keeping whole scenarios, 500 steps of undo could have held 2 GB. A step keeps the
// scenario's small fields whole (tokens, options, names) and, of its matrices (Q, K, V per head,
// and the projection's X, W_Q, W_K, W_V, W_O), only those that differ from the next state.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "attention/scenario.h"

namespace attn {

// The query heads an edit changed, when it changed nothing but values of Q, K or V (each head
// whose Q changed, every head of a key/value group whose K or V changed); nullopt when it may
// have changed anything, so the whole trace is recomputed.
using EditedHeads = std::optional<std::vector<int>>;
// Both edits' heads: the union, or nullopt when either is.
EditedHeads merge_edited_heads(const EditedHeads& a, const EditedHeads& b);

class ScenarioHistory {
 public:
  // Steps kept at most, and bytes of matrices kept at most (the oldest steps go first; the
  // newest is kept whatever its size). 16 MB: the last 64 one-value edits of a 4096-token,
  // 4-head scenario, or 5 edits that changed all of it, within the app's 600 MB there; thousands
  // of steps (up to the 500) of a classroom-sized one.
  static constexpr size_t kMaxSteps = 500;
  static constexpr size_t kMaxBytes = size_t{16} << 20;

  // `before` is about to become `after` (an edit): remembers how to go back, and forgets the
  // steps that could be redone. `before` is consumed. `heads`: what the edit changed, given back
  // by undo and redo (which change the same matrices).
  void record(Scenario&& before, const Scenario& after, EditedHeads heads = std::nullopt);
  // One more change of the same gesture (a drag, a slider): `before` is about to become `after`,
  // and undoing the newest step still returns to where the gesture started. Records a step when
  // there is none.
  void extend(const Scenario& before, const Scenario& after, EditedHeads heads = std::nullopt);
  // `current` becomes the state before the newest step (undo) or after the newest undone step
  // (redo), and `heads` (when given) what that step changed; false when there is none.
  bool undo(Scenario& current, EditedHeads* heads = nullptr);
  bool redo(Scenario& current, EditedHeads* heads = nullptr);
  void clear();

  // The saved state (a file as opened or saved): mark_saved() says the current state is it;
  // at_saved() whether undo and redo have come back to it, so "unsaved" can clear. An edit made
  // after undoing past it, or its step trimmed away, leaves it unreachable: never at_saved()
  // again until the next mark_saved(). forget_saved(): no state is saved (recovered edits).
  void mark_saved() { saved_offset_ = 0; }
  void forget_saved() { saved_offset_.reset(); }
  bool at_saved() const { return saved_offset_ == 0; }

  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  size_t undo_depth() const { return undo_.size(); }
  // Bytes of matrices the steps keep (undo and redo).
  size_t bytes() const;

 private:
  // A state, as the difference from the state next to it in the history: its small fields whole
  // (its matrices emptied, the vectors that hold them kept at their sizes) and the matrices that
  // differ, by their index in matrix_slots order.
  struct Step {
    Scenario rest;
    size_t slots = 0;  // how many matrices the state has
    std::vector<std::pair<size_t, Matrix>> changed;
    EditedHeads heads;  // the query heads the step changes (nullopt: maybe anything)
    size_t bytes() const;
  };
  static Step diff(Scenario&& from, const Scenario& to);
  // Restores the state `s` describes from `current` (the state next to it), and turns `s` into
  // the step back to `current`.
  static void swap_with(Step& s, Scenario& current);
  // Restores the newest step of `from` into `current` and keeps the way back in `to`.
  static bool move_newest(std::vector<Step>& from, std::vector<Step>& to, Scenario& current,
                          EditedHeads* heads);
  void trim();

  std::vector<Step> undo_, redo_;
  // How many undos (positive) or redos (negative) lead from the current state back to the saved
  // one; none when it cannot be reached.
  std::optional<long> saved_offset_ = 0;
};

}  // namespace attn
