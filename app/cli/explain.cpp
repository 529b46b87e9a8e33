// `attention-lab explain`: prints the narration of one query row (or one cell, or one stage) with
// every stage's arithmetic, read from the CPU trace of the chosen scenario.
#include "explain/explain.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "attention/format.h"
#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "cli/score_flags.h"

namespace attn::cli {

namespace {

struct ExplainOptions {
  ScenarioSource source;
  int query = -1;
  int head = 0;
  int precision = 4;
  bool ascii = false;
  std::optional<int> key;
  std::string step;
  std::optional<int> online_block;  // --online-softmax B
  ScoreFlags score;
};

}  // namespace

void register_explain(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "explain", "Print every stage's arithmetic for one query row, with the actual numbers");
  auto opts = std::make_shared<ExplainOptions>();
  add_scenario_options(*cmd, opts->source);
  add_score_flags(*cmd, opts->score);
  cmd->add_option("--query", opts->query, "query row I to explain (0-based)")->required();
  cmd->add_option("--head", opts->head, "query head H (default 0); with --model, the model's head");
  cmd->add_option("--precision", opts->precision, "decimals to print (0..10, default 4)")
      ->check(CLI::Range(0, 10));
  cmd->add_flag("--ascii", opts->ascii, "plain ASCII (sqrt, x, -inf) instead of Unicode symbols");
  cmd->add_option("--key", opts->key, "explain only the cell (I, J) for key J");
  cmd->add_option("--step", opts->step,
                  "explain only this stage: scores, scaled, masked, weights, output, or a "
                  "projection step (x, q, k, v, concat, projected, head_contrib)");
  cmd->add_option("--online-softmax", opts->online_block,
                  "write the softmax and weighted sum as FlashAttention computes them: keys in "
                  "blocks of B, running max and sum, one division at the end");
  cmd->callback([&action, opts] {
    action = [opts] {
      // With --model, --head picks the model's head; its scenario has that one head.
      ScenarioSource source = opts->source;
      source.head = opts->head;
      Scenario scenario = load_scenario_source(source);
      apply_score_flags(opts->score, scenario_d_k(scenario), scenario.options);
      std::unique_ptr<Backend> backend = make_backend_or_throw("cpu");
      // Only the asked row's stages are computed, so one query of a long sequence costs one row
      // (n_k cells per stage), not n_q × n_k. An out-of-range row is named by explain() below.
      const int n_q = static_cast<int>(scenario.use_projection ? scenario.projection.x.rows()
                                                               : scenario.qkv.n_q());
      const int row = std::clamp(opts->query, 0, n_q - 1);
      AttentionTrace trace = compute_scenario_trace_rows(scenario, *backend, row, row + 1);
      ExplainRequest request;
      request.query = opts->query;
      request.head = source.model.empty() ? opts->head : 0;
      request.key = opts->key;
      if (!opts->step.empty()) request.step = stage_in_trace_or_throw(opts->step, trace);
      request.precision = opts->precision;
      request.unicode = !opts->ascii;
      std::string error;
      std::string text = opts->online_block
                             ? explain_online_softmax(trace, request, *opts->online_block, error)
                             : explain(trace, request, error);
      if (!error.empty())
        throw CliError{kExitUsage, name_fields(error, {{"query", "--query"},
                                                       {"head", "--head"},
                                                       {"key", "--key"},
                                                       {"step", "--step"},
                                                       {"online_softmax", "--online-softmax"}})};
      std::cout << text;
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
