// `attention-lab worksheet`: a printable handout (PDF) to work attention out by hand for a small
// scenario, and optionally its answer key with every intermediate number; with --seed, fresh
// hand-friendly numbers so every student gets their own.
#include "render/worksheet.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/scenario.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "explain/explain.h"

namespace attn::cli {

namespace {

struct WorksheetArgs {
  ScenarioSource src;
  std::string lesson;
  std::optional<uint64_t> seed;
  int head = 0;
  int precision = 4;
  std::string paper = "a4";
  std::string out, answers;
};

void require_pdf(const std::string& path, const std::string& flag) {
  if (image_format_of(path) != ImageFormat::kPdf)
    throw CliError{kExitUsage,
                   flag + ": a worksheet is a PDF; use a name ending in .pdf (got '" + path + "')"};
  check_output_file(path, flag);
}

}  // namespace

void register_worksheet(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "worksheet", "Write a printable worksheet (PDF) to work attention out by hand, and its key");
  auto a = std::make_shared<WorksheetArgs>();
  add_scenario_options(*cmd, a->src);
  cmd->add_option("--lesson", a->lesson, "a lesson file (not available yet)");
  cmd->add_option("--seed", a->seed,
                  "fresh one-decimal Q, K and V from this seed (same shapes and masks)");
  cmd->add_option("--head", a->head, "query head to work by hand (default 0)");
  cmd->add_option("--precision", a->precision, "decimals in the answer key (1..6, default 4)")
      ->check(CLI::Range(1, 6));
  cmd->add_option("--paper", a->paper, "a4 (default) or letter");
  cmd->add_option("--out", a->out, "the handout, FILE.pdf")->required();
  cmd->add_option("--answers", a->answers, "the answer key, FILE.pdf");
  cmd->callback([&action, a] {
    action = [a] {
      if (!a->lesson.empty())
        throw CliError{kExitUsage,
                       "--lesson: lessons are not available yet in this version; use --example "
                       "NAME or --scenario FILE"};
      WorksheetOptions o;
      o.head = a->head;
      o.precision = a->precision;
      const std::optional<Paper> paper = paper_of(a->paper);
      if (!paper || *paper == Paper::kSlide)
        throw CliError{kExitUsage,
                       "--paper: unknown paper '" + a->paper + "'; expected a4 or letter"};
      o.paper = *paper;
      require_pdf(a->out, "--out");
      if (!a->answers.empty()) {
        require_pdf(a->answers, "--answers");
        if (a->answers == a->out)
          throw CliError{kExitUsage, "--answers: must not be the same file as --out"};
      }
      Scenario s = load_scenario_source(a->src);
      if (a->seed) {
        s = with_random_inputs(s, *a->seed);
        o.variant = "seed " + std::to_string(*a->seed);
      }
      std::unique_ptr<Backend> backend = make_backend_or_throw("cpu");
      const AttentionTrace trace = compute_scenario_trace(s, *backend);
      std::string error = check_worksheet(trace, o);
      if (!error.empty()) throw CliError{kExitUsage, error};
      write_image_or_throw(a->out, "--out", [&](ImageFormat, std::string& bytes, std::string& e) {
        return render_worksheet(trace, o, bytes, e);
      });
      std::cout << "wrote " << a->out << "\n";
      if (!a->answers.empty()) {
        const NarrateQuery narrate = [&](int query, std::string& e) {
          ExplainRequest r;
          r.query = query;
          r.head = o.head;
          r.precision = o.precision;
          return explain(trace, r, e);
        };
        write_image_or_throw(a->answers, "--answers",
                             [&](ImageFormat, std::string& bytes, std::string& e) {
                               return render_answer_key(trace, o, narrate, bytes, e);
                             });
        std::cout << "wrote " << a->answers << "\n";
      }
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
