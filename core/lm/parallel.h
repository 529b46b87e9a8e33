// Splitting work over the cores for the language-model code: contiguous chunks, one thread each,
// so every value is computed by the same code whatever the thread count. The threads are the
// one worker pool's (attention/parallel.h).
#pragma once

#include <Eigen/Core>
#include <algorithm>

#include "attention/parallel.h"

namespace attn::lm {

using attn::thread_count;

// Runs f(begin, end) over [0, n) in `threads` contiguous chunks of multiples of `align`.
template <typename F>
void split_range(Eigen::Index n, int threads, Eigen::Index align, const F& f) {
  const Eigen::Index per = ((n + threads - 1) / threads + align - 1) / align * align;
  if (threads <= 1 || per >= n) {
    f(Eigen::Index{0}, n);
    return;
  }
  const int chunks = static_cast<int>((n + per - 1) / per);
  run_workers(chunks, [&f, n, per](int c, const std::atomic<bool>&) {
    const Eigen::Index begin = per * c;
    f(begin, std::min(n, begin + per));
  });
}

}  // namespace attn::lm
