// Splitting work over the cores for the language-model code: contiguous chunks, one thread each,
// so every value is computed by the same code whatever the thread count.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <thread>
#include <vector>

#include "train/shards.h"

namespace attn::lm {

using train::thread_count;

// Runs f(begin, end) over [0, n) in `threads` contiguous chunks of multiples of `align`.
template <typename F>
void split_range(Eigen::Index n, int threads, Eigen::Index align, const F& f) {
  const Eigen::Index per = ((n + threads - 1) / threads + align - 1) / align * align;
  if (threads <= 1 || per >= n) {
    f(Eigen::Index{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  for (Eigen::Index begin = per; begin < n; begin += per)
    pool.emplace_back([&f, begin, end = std::min(n, begin + per)] { f(begin, end); });
  f(Eigen::Index{0}, per);
  for (auto& t : pool) t.join();
}

}  // namespace attn::lm
