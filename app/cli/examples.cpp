// `attention-lab examples`: one line per built-in example, NAME<TAB>description.
#include "io/examples.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/scenario.h"
#include "cli/cli.h"

namespace attn::cli {

void register_examples(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("examples", "List the built-in examples");
  cmd->callback([&action] {
    action = [] {
      for (const ExampleInfo& e : list_examples())
        std::cout << e.name << '\t' << e.description << '\n';
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
