// Attention sinks on a real run: the head that parks the most weight on the first token, its
// numbers, and the explanation they make (Xiao et al. 2023) — for the app's Roles tab and `lm
// heads`.
#pragma once

#include <string>
#include <vector>

#include "lm/head_trace.h"

namespace attn::lm {

// The head with the highest sink score (HeadScores::first) on sequence 0, and what its weights on
// the first token are made of. Fractions in [0, 1]; -1 where no query qualifies.
struct SinkExample {
  int layer = -1, head = -1;
  double first = 0;    // its sink score: mean weight on token 0 over the queries t ≥ 1
  double uniform = 0;  // the same mean for weights spread evenly over the keys each query sees
  // The queries t ≥ 1 whose token has not appeared before (nothing to copy yet), and those whose
  // token has (induction_targets): the mean weight each group puts on token 0.
  double nothing_to_copy = -1, something_to_copy = -1;
  int nothing_queries = 0, something_queries = 0;
  int peak_query = -1;  // the query t ≥ 1 that puts the most weight on token 0
  double peak = 0;
  // Its induction score (-1 when nothing repeats), and whether no head's is higher: the head
  // that copies where it can is the one that parks where it cannot.
  double induction = -1;
  bool best_induction = false;
};

// The strongest sink among `scores` (head_scores of the same run); layer −1 when T < 2.
SinkExample strongest_sink(const Config& c, const Activations& a,
                           const std::vector<HeadScores>& scores);

// A paragraph explaining the sink with its numbers; `tokens` are the run's display tokens.
std::string sink_explanation(const SinkExample& s, const std::vector<std::string>& tokens);

}  // namespace attn::lm
