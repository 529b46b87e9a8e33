// Recomputing only the heads an edit changed. At 4096 tokens one head's weights are 64 MB, and an
// edit of one value of Q changes one query head (of K or V, the query heads of one key/value
// group). The app computes those heads on a worker while the old trace stays on screen, then
// moves them into it: one head's memory more during the edit instead of a second whole trace, and
// one head's work instead of all of them.
#pragma once

#include <vector>

#include "attention/attention.h"
#include "backends/backend.h"

namespace attn {

// Query heads of a problem, each computed as a one-head problem (attention/row_slice.h's
// select_head, whose stages equal that head's stages of the whole problem).
struct HeadPatch {
  std::vector<int> heads;              // query heads, ascending
  std::vector<AttentionTrace> traces;  // traces[i]: head heads[i] as a one-head trace
};

// Whether a trace of `p` can be patched head by head: plain attention, whose heads are computed
// independently (not the variants, which mix rows and heads, nor the additive score).
bool patchable(const AttentionProblem& p);
// The same for a problem with these options, whole (not a slice of rows).
bool patchable(const AttentionOptions& o);

// Computes query heads `heads` (ascending, each < H) of `p`. `p` must be patchable. Runs under
// the caller's WorkScope like any trace (cancellable).
HeadPatch compute_head_patch(const AttentionProblem& p, const std::vector<int>& heads,
                             Backend& backend);

// Moves the patch's heads into `trace`, a trace of a problem that differed from the patch's only
// in those heads' Q, K and V values: afterwards `trace` equals the patched problem's trace, bit
// for bit. False, with `trace` unchanged, when the stages or shapes do not match.
bool apply_head_patch(AttentionTrace& trace, HeadPatch& patch);

}  // namespace attn
