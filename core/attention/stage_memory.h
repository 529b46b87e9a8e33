// Memory for the engine's large stages: sized without touching it, so the blocks that fill a
// stage fault its pages in on every core, and on huge pages where the system offers them (a
// 4096-token head is 64 MB: 16,000 page faults of 4 KB, or 32 of 2 MB).
#pragma once

#include "attention/attention.h"

namespace attn {

// m becomes (rows, cols) with unspecified contents that the caller overwrites in full.
void resize_for_writing(Matrix& m, Eigen::Index rows, Eigen::Index cols);
void resize_for_writing(ReasonMatrix& m, Eigen::Index rows, Eigen::Index cols);

}  // namespace attn
