// The fused outputs-only attention path (tiled online softmax, flash-attention style) shared by
// the CPU backend, the OpenCL backend's fallbacks and the benchmark.
#pragma once

#include <utility>
#include <vector>

#include "attention/attention.h"

namespace attn {

// Tile sizes of the CPU fused path: a block of queries against a block of keys at a time.
struct FusedCpuConfig {
  int block_q = 128;
  int block_k = 256;
  int threads = 0;  // 0 = every hardware thread
};

// Output only, one (n_q, d_v) matrix per query head, computed without ever holding an (n_q, n_k)
// matrix: per block of queries, a running max and sum per row over blocks of keys, the
// accumulator rescaled when the max grows, one division at the end. Blocks of keys that the causal,
// window or padding masks hide from every query of the block are skipped. Same semantics as the
// staged path (cli.md), including all-zero rows where every key is hidden.
HeadStack fused_attention_cpu(const AttentionProblem& p, const FusedCpuConfig& config = {});

// For every query i, the half-open range of keys outside which it sees nothing because of the
// structural masks (MaskGeometry::key_range), and whether that range is exactly its visible set
// (true unless a window is relaxed by global positions, or a custom mask or bias applies).
struct KeyRanges {
  std::vector<std::pair<int, int>> rows;
  bool exact = true;
};
KeyRanges key_ranges(const AttentionProblem& p);

// Number of (query, key) pairs a query head attends to structurally (summed over rows of
// key_ranges), for counting the FLOPs of causal and windowed problems.
long long visible_pairs(const AttentionProblem& p);

}  // namespace attn
