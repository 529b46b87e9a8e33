// Row-major Eigen types templated on the scalar, so the seq2seq models run in float for training
// and in double for the finite-difference gradient checks.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace attn::s2s {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Deterministic, platform-independent random numbers (SplitMix64): std::uniform_*_distribution
// differ between standard libraries, and shipped models must be reproducible everywhere.
struct Rng {
  uint64_t state;
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform integer in [0, n).
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
  // Uniform double in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

}  // namespace attn::s2s
