// `attention-lab experiment sqrt-dk`: the numbers of the "Why √d_k" experiment — the variance of
// q·k and of q·k/√d_k for random q, k from N(0, 1), and what a softmax row over such scores does
// with and without the division (its largest weight and the norm of its Jacobian).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "explain/scaling_experiment.h"

namespace attn::cli {

void register_experiment(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("experiment", "Run one of the app's numerical experiments");
  cmd->require_subcommand(1);
  auto* sq = cmd->add_subcommand(
      "sqrt-dk", "Why divide by sqrt(d_k): variance of q·k, one-hot softmax, vanishing gradient");
  auto r = std::make_shared<ScalingRequest>();
  sq->add_option("--seed", r->seed, "random seed (default 1)");
  sq->add_option("--samples", r->samples, "q·k pairs per d_k (default 4000)")
      ->check(CLI::Range(2, 1000000));
  sq->add_option("--rows", r->rows, "softmax rows per d_k (default 200)")
      ->check(CLI::Range(1, 100000));
  sq->add_option("--keys", r->keys, "keys per softmax row (default 8)")->check(CLI::Range(2, 4096));
  sq->callback([&action, r] {
    action = [r] {
      const std::vector<ScalingRow> rows = run_scaling_experiment(*r);
      std::printf(
          "q, k from N(0, 1); %d pairs per d_k; softmax rows of %d keys, %d rows per d_k; seed "
          "%u\n\n",
          r->samples, r->keys, r->rows, r->seed);
      // printf pads bytes, not characters: the headers with · √ ‖ are spelled out.
      std::printf("             variance           largest weight      ‖J‖ of the softmax\n");
      std::printf("   d_k        q·k   q·k/√d_k        q·k   q·k/√d_k        q·k   q·k/√d_k\n");
      for (const ScalingRow& x : rows)
        std::printf("%6d %10.2f %10.3f   %8.3f %10.3f   %8.4f %10.4f\n", x.d_k, x.var_dot,
                    x.var_scaled, x.max_weight_dot, x.max_weight_scaled, x.jacobian_dot,
                    x.jacobian_scaled);
      std::printf(
          "\nWithout the division the variance grows like d_k, the largest weight of a row tends\n"
          "to 1 (one-hot) and the Jacobian of the softmax tends to 0: almost no gradient reaches\n"
          "the scores. Divided by √d_k the variance stays near 1 and the softmax stays soft.\n");
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
