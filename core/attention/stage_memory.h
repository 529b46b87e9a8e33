// Memory for the engine's large stages: sized without touching it, so the blocks that fill a
// stage fault its pages in on every core, and on huge pages where the system offers them (a
// 4096-token head is 64 MB: 16,000 page faults of 4 KB, or 32 of 2 MB).
#pragma once

#include "attention/attention.h"

namespace attn {

// Query rows per block of the staged engine (attention/staged.cpp): a block of every stage stays
// in cache between the stages, and a 1024-token head still splits into enough blocks to keep
// both cores busy. AttentionTrace::head multiplies Q·Kᵀ again in the same blocks, so a derived
// stage has the same bits as the one the engine used.
constexpr int kStageBlockRows = 32;

// m becomes (rows, cols) with unspecified contents that the caller overwrites in full.
void resize_for_writing(Matrix& m, Eigen::Index rows, Eigen::Index cols);
void resize_for_writing(ReasonMatrix& m, Eigen::Index rows, Eigen::Index cols);

}  // namespace attn
