// Splitting a batch over threads, as every trainer does: contiguous shards of rows, one thread
// each, so a gradient summed in shard order depends on the thread count only, never on timing.
#pragma once

#include <algorithm>
#include <thread>
#include <vector>

namespace attn::train {

// `requested` threads, or every core for 0.
inline int thread_count(int requested) {
  return requested > 0 ? requested
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The number of shards run_shards splits `rows` into: `threads`, at least 1 and at most `rows`.
inline int shard_count(int rows, int threads) { return std::max(1, std::min(threads, rows)); }

// Runs fn(shard, first_row, end_row) on shard_count(rows, threads) contiguous shards of `rows`
// (shard k holds rows [rows·k/n, rows·(k+1)/n)), one thread each; the calling thread runs shard 0.
template <typename F>
void run_shards(int rows, int threads, const F& fn) {
  const int n = shard_count(rows, threads);
  if (n == 1) {
    fn(0, 0, rows);
    return;
  }
  std::vector<std::thread> pool;
  for (int k = 1; k < n; ++k)
    pool.emplace_back([&fn, k, rows, n] { fn(k, rows * k / n, rows * (k + 1) / n); });
  fn(0, 0, rows / n);
  for (auto& t : pool) t.join();
}

}  // namespace attn::train
