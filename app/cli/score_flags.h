// The score-function flags (--score dot|additive with --additive-wq/-wk/-v) shared by trace,
// explain, export and compute: Bahdanau's additive score vᵀ tanh(W_q q + W_k k) in place of the
// scaled dot product.
#pragma once

#include <string>

#include "attention/attention.h"
#include "attention/scenario.h"

namespace CLI {
class App;
}

namespace attn::cli {

struct ScoreFlags {
  std::string score;      // "", "dot" or "additive"
  std::string wq, wk, v;  // .npy files: (d_a, d_k), (d_a, d_k), (1, d_a)
};

void add_score_flags(CLI::App& cmd, ScoreFlags& flags);

// Applies the flags to `options` for queries and keys of width d_k: --score additive reads the
// three files, --score dot drops a scenario's additive score, no --score keeps what the scenario
// says. Throws CliError (exit 2) naming the flag and file on a missing file, a wrong shape or a
// non-finite value, or --additive-* without --score additive.
void apply_score_flags(const ScoreFlags& flags, int d_k, AttentionOptions& options);

// The width of the scenario's queries and keys (projected when it has projections).
int scenario_d_k(const Scenario& s);

}  // namespace attn::cli
