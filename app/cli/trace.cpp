// `attention-lab trace`: the whole trace of an example or scenario as JSON.
#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/score_flags.h"
#include "io/trace_json.h"

namespace attn::cli {

void register_trace(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("trace", "Write every stage of the computation as JSON");
  auto src = std::make_shared<ScenarioSource>();
  auto backend = std::make_shared<std::string>("cpu");
  auto out = std::make_shared<std::string>();
  auto device = std::make_shared<int>(0);
  add_scenario_options(*cmd, *src, true, true);
  auto score = std::make_shared<ScoreFlags>();
  add_score_flags(*cmd, *score);
  cmd->add_option("--backend", *backend, "cpu, opencl or auto")->capture_default_str();
  cmd->add_option("--device", *device, "OpenCL device index")->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--out", *out, "write to FILE instead of standard output")->check(non_empty());
  cmd->callback([&action, src, backend, out, device, score] {
    action = [src, backend, out, device, score] {
      OutputFiles files;
      const int index = out->empty() ? -1 : files.add("--out", *out);
      Scenario s = load_scenario_source(*src);
      apply_score_flags(*score, scenario_d_k(s), s.options);
      check_traceable(s);
      std::unique_ptr<Backend> b = make_backend_or_throw(*backend, *device);
      std::string text = trace_to_json(compute_scenario_trace(s, *b));
      if (index < 0) {
        std::cout << text;
        return kExitOk;
      }
      files.write(index, text);
      files.commit();
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
