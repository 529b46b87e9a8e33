// Parts of a problem as problems of their own, so a part costs what it holds: explain narrates
// query I from the trace of rows [I, I + 1), not from every stage of every row, and
// compute --weights streams one head and a block of rows at a time.
#pragma once

#include "attention/attention.h"

namespace attn {

// Query rows [first, last) of `p`: the rows of Q and of the custom mask and bias, with K, V and
// the other options kept, and first_query_row / total_query_rows set so every mask sees each
// query at its position in the whole problem (causal top-left and lower-right, window, global
// positions). The stages of the slice equal rows [first, last) of the stages of `p`. A slice of a
// slice is a slice of the whole. Requires 0 <= first < last <= n_q.
AttentionProblem slice_query_rows(const AttentionProblem& p, int first, int last);

// Query head h of `p` with the key/value head it reads, as a one-head problem (its custom mask
// and bias are head h's). Its stages equal head h's stages of `p`.
AttentionProblem select_head(const AttentionProblem& p, int h);

}  // namespace attn
