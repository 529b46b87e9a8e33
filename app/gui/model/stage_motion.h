// What moves on screen, as plain data the heatmap widget draws: a stage change animating what the
// stage does (scores sliding into softmax weights, masked cells turning to −∞, the weighted rows
// of V adding up), and the cells an edit changed, highlighted for a moment. No ImGui here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

// One frame of a stage change, for the matrix shown in the `to` stage. Each cell is drawn as the
// colour of `from` (on from_scale) blended into the colour of `to` (on the final scale) by its
// row's progress; `hatch` blends a cell into the masked hatch. Numbers show `value`.
struct AnimatedFrame {
  Matrix from, to, value;           // (rows, cols) of the `to` stage
  std::vector<float> row_progress;  // 0..1 per row
  std::vector<float> hatch;         // per cell (row-major), 0..1; empty = none
  bool from_on_own_scale = false;   // `from` has its own colour scale (scores before softmax)
  bool from_is_background = false;  // cells grow out of the panel's background
  std::string caption;              // what is happening, in words
};

// Whether moving from stage `from` to `to` has an animation (one step forward), and how long it
// lasts in seconds (the rows of a softmax or a weighted sum take a little longer).
bool stage_change_animates(StageId from, StageId to);
double stage_change_seconds(StageId from, StageId to);

// Builds frame `p` (0..1) of the change from stage `from` to the next stage `to` for query head
// `head`. False when that change has no animation (a step back, a jump, the inputs).
bool animate_stage(const AttentionTrace& t, StageId from, StageId to, int head, float p,
                   AnimatedFrame& out);

// A stage change in progress: which stages, since when and for how long.
struct StageTransition {
  StageId from = StageId::kInputs, to = StageId::kInputs;
  double start = -1, duration = 0.8;  // seconds
  float hold = -1;                    // >= 0: held at this progress (scripted screenshots)
  bool active(double now) const { return hold >= 0 || (start >= 0 && now - start < duration); }
  // Eased (smoothstep) progress 0..1.
  float progress(double now) const;
};

// The cells an edit changed: remembers the trace before the latest edit (for traces up to
// kMaxCells cells) and fades a highlight on every cell whose value moved.
class ChangeTracker {
 public:
  static constexpr size_t kMaxCells = 256 * 256;
  static constexpr double kSeconds = 1.6;
  // Call once per frame. `edited` says the new trace came from an edit of the same scenario (not
  // from opening another one).
  void update(const AttentionTrace& t, uint64_t serial, bool edited, double now);
  // 1 right after the edit, fading to 0; 0 for cells whose value did not change.
  float strength(StageId step, int index, int i, int j, double now) const;
  bool active(double now) const { return start_ >= 0 && now - start_ < kSeconds; }
  // How many cells of (step, index) changed in the latest edit.
  int changed_cells(StageId step, int index) const;

 private:
  bool changed(const TraceStep& a, const TraceStep& b, int index, int i, int j) const;
  AttentionTrace before_, current_;
  uint64_t serial_ = 0;
  bool have_current_ = false;
  double start_ = -1;
};

}  // namespace attn
