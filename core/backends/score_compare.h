// The efficiency claim of Vaswani et al., 2017 (§3.2.1) measured (the dot product is faster
// because it is one matrix product): the scores stage of one head timed as the dot product Q·Kᵀ
// and as Bahdanau's additive score vᵀ tanh(W_q q + W_k k), with d_a = d as usually set and with
// d_a chosen so both count the same floating-point operations. Used by `bench --compare-scores`
// and the app's score-function window.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

namespace attn {

struct ScoreCompareCase {
  int n = 0, d = 0;  // n_q = n_k = n; d_k = d
};

struct ScoreTiming {
  ScoreCompareCase c;
  int d_a = 0;        // = d
  int d_a_equal = 0;  // the d_a whose counted FLOPs equal the dot product's (at least 1)
  double dot_seconds = 0, additive_seconds = 0, equal_seconds = 0;  // medians
  // Counted operations: the dot product 2·n²·d; the additive score 4·n·d·d_a for W_q q and W_k k,
  // then 3·n²·d_a (add, multiply by v, accumulate) plus n²·d_a tanh counted as one each.
  double dot_flops = 0, additive_flops = 0, equal_flops = 0;
};

// The grid `bench --compare-scores` and the app measure: n = 64…1024 at d = 64, then
// d = 16…256 at n = 256.
std::vector<ScoreCompareCase> default_score_cases();

// d_a with the additive score's counted FLOPs closest to the dot product's for this case.
int equal_flops_d_a(int n, int d);

// Times one case: one warm-up, then the median of `runs` calls each, on random N(0, 1) inputs
// drawn from `seed`, on the calling thread. Returns early with zeros when `cancel` becomes true.
ScoreTiming time_score_functions(const ScoreCompareCase& c, int runs, uint32_t seed,
                                 const std::atomic<bool>* cancel = nullptr);

}  // namespace attn
