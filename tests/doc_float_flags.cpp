// Every floating-point flag of every subcommand refuses nan, inf and -inf with the flag's name
// (docs/robustness.md, "Finite floats"), found by walking the whole command line as configure_app
// builds it: a flag added later is covered without being listed here. Linked with the app (the
// `gui` subcommand), so it runs with the docs suites; the CLI robustness tests run the binary on
// the flags the issue named.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace attn {
namespace {

struct FloatFlag {
  std::vector<std::string> path;  // subcommands
  std::string flag;               // --name
};

void collect_float_flags(CLI::App& app, std::vector<std::string> path,
                         std::vector<FloatFlag>& out) {
  for (const CLI::Option* o : app.get_options()) {
    // CLI11 names a float or double option's type "FLOAT" (before any validator's description).
    if (o->get_type_name().rfind("FLOAT", 0) != 0 || o->get_lnames().empty()) continue;
    out.push_back({path, "--" + o->get_lnames().front()});
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    std::vector<std::string> p = path;
    p.push_back(sub->get_name());
    collect_float_flags(*sub, p, out);
  }
}

TEST(FloatFlags, EveryFloatFlagOfEverySubcommandRefusesNanAndInfinity) {
  std::vector<FloatFlag> flags;
  {
    CLI::App app;
    cli::Action action;
    cli::configure_app(app, action);
    collect_float_flags(app, {}, flags);
  }
  // The flags the robustness battery found accepting nan are among them.
  for (const char* must : {"--weight-decay", "--init-std", "--min-lr", "--lr", "--temperature"}) {
    bool found = false;
    for (const FloatFlag& f : flags) found = found || f.flag == must;
    EXPECT_TRUE(found) << must;
  }
  ASSERT_GE(flags.size(), 10u);
  for (const FloatFlag& f : flags)
    for (const char* bad : {"nan", "inf", "-inf", "NaN", "1e999"}) {
      CLI::App app;
      cli::Action action;
      cli::configure_app(app, action);
      std::vector<std::string> args = f.path;
      args.push_back(f.flag);
      args.push_back(bad);
      std::string line;
      for (const std::string& a : args) line += a + " ";
      // CLI11 parses from the back.
      std::vector<std::string> reversed(args.rbegin(), args.rend());
      try {
        app.parse(reversed);
        ADD_FAILURE() << line << ": accepted";
      } catch (const CLI::ValidationError& e) {
        EXPECT_NE(std::string(e.what()).find(f.flag), std::string::npos) << line << e.what();
      } catch (const CLI::ConversionError& e) {  // "1e999" is out of range for a float
        EXPECT_NE(std::string(e.what()).find(f.flag), std::string::npos) << line << e.what();
      } catch (const CLI::ParseError& e) {
        ADD_FAILURE() << line << ": " << e.get_name() << ": " << e.what();
      }
    }
}

}  // namespace
}  // namespace attn
