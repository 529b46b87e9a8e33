// `attention-lab worksheet`: a printable handout (PDF) to work attention out by hand for a small
// scenario, and optionally its answer key with every intermediate number; with --seed, fresh
// hand-friendly numbers so every student gets their own.
#include "render/worksheet.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/format.h"
#include "attention/scenario.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "explain/explain.h"
#include "io/shipped.h"
#include "lessons/lesson.h"
#include "lessons/lesson_sheet.h"
#include "render/heatmap_view.h"

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
}

}  // namespace

Lesson load_lesson_or_throw(const std::string& name_or_path, const std::string& flag) {
  std::string error;
  const std::optional<std::string> path = resolve_shipped(kLessons, name_or_path, error);
  if (!path) throw CliError{kExitUsage, flag + ": " + error};
  std::optional<Lesson> lesson = load_lesson_file(*path, error);
  if (!lesson) throw CliError{kExitUsage, error};
  return *lesson;
}

void register_worksheet(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "worksheet", "Write a printable worksheet (PDF) to work attention out by hand, and its key");
  auto a = std::make_shared<WorksheetArgs>();
  add_scenario_options(*cmd, a->src);
  cmd->add_option("--lesson", a->lesson,
                  "a lesson file or built-in lesson name ('lessons'): its questions, with the "
                  "answers in the key");
  cmd->add_option("--seed", a->seed,
                  "fresh one-decimal Q, K and V from this seed (same shapes and masks)")
      ->check(unsigned_integer());
  cmd->add_option("--head", a->head, "query head to work by hand (default 0)");
  cmd->add_option("--precision", a->precision, "decimals in the answer key (1..6, default 4)")
      ->check(CLI::Range(1, 6));
  cmd->add_option("--paper", a->paper, "a4 (default) or letter");
  cmd->add_option("--out", a->out, "the handout, FILE.pdf")->required();
  cmd->add_option("--answers", a->answers, "the answer key, FILE.pdf");
  cmd->callback([&action, a] {
    action = [a] {
      const bool scenario_given =
          !a->src.example.empty() || !a->src.scenario_file.empty() || !a->src.model.empty();
      if (!a->lesson.empty() && scenario_given)
        throw CliError{kExitUsage, "--lesson: give either --lesson or --example/--scenario"};
      if (!a->lesson.empty() && a->seed)
        throw CliError{kExitUsage,
                       "--seed: a lesson's questions quote the numbers of its examples, so a "
                       "lesson worksheet keeps them; use --seed with --example or --scenario"};
      WorksheetOptions o;
      o.head = a->head;
      o.precision = a->precision;
      const std::optional<Paper> paper = paper_of(a->paper);
      if (!paper || *paper == Paper::kSlide)
        throw CliError{kExitUsage,
                       "--paper: unknown paper '" + a->paper + "'; expected a4 or letter"};
      o.paper = *paper;
      require_pdf(a->out, "--out");
      if (!a->answers.empty()) require_pdf(a->answers, "--answers");
      // The handout and its key are written together or not at all; a path that cannot be
      // written, or the key naming the handout's file by any name, is refused before any work.
      OutputFiles files;
      const int out_index = files.add("--out", a->out);
      const int answers_index = a->answers.empty() ? -1 : files.add("--answers", a->answers);
      if (!a->lesson.empty()) {
        const Lesson lesson = load_lesson_or_throw(a->lesson, "--lesson");
        std::vector<AttentionTrace> traces;
        std::string error;
        const std::optional<LessonSheet> built = lesson_sheet(lesson, traces, o.precision, error);
        if (!built) throw CliError{kExitUsage, "--lesson: " + error};
        const LessonSheet& sheet = *built;
        render_image_or_throw(files, out_index, a->out, "--out",
                              [&](ImageFormat, std::string& bytes, std::string& e) {
                                return render_lesson_sheet(sheet, o, false, bytes, e);
                              });
        if (answers_index >= 0)
          render_image_or_throw(files, answers_index, a->answers, "--answers",
                                [&](ImageFormat, std::string& bytes, std::string& e) {
                                  return render_lesson_sheet(sheet, o, true, bytes, e);
                                });
        files.commit();
        std::cout << "wrote " << printable_text(a->out) << "\n";
        if (answers_index >= 0) std::cout << "wrote " << printable_text(a->answers) << "\n";
        return kExitOk;
      }
      if (!scenario_given)
        throw CliError{kExitUsage, "give one of --example NAME, --scenario FILE or --lesson FILE"};
      Scenario s = load_scenario_source(a->src);
      check_traceable(s);
      if (a->seed) {
        s = with_random_inputs(s, *a->seed);
        o.variant = "seed " + std::to_string(*a->seed);
      }
      std::unique_ptr<Backend> backend = make_backend_or_throw("cpu");
      AttentionTrace trace = compute_scenario_trace(s, *backend);
      // Long tokens are cut before the sheet or its narration is laid out.
      clip_worksheet_tokens(trace);
      std::string error = check_worksheet(trace, o);
      if (!error.empty())
        throw CliError{kExitUsage, name_fields(error, {{"head", "--head"}, {"paper", "--paper"}})};
      render_image_or_throw(files, out_index, a->out, "--out",
                            [&](ImageFormat, std::string& bytes, std::string& e) {
                              return render_worksheet(trace, o, bytes, e);
                            });
      if (answers_index >= 0) {
        const NarrateQuery narrate = [&](int query, std::string& e) {
          ExplainRequest r;
          r.query = query;
          r.head = o.head;
          r.precision = o.precision;
          return explain(trace, r, e);
        };
        render_image_or_throw(files, answers_index, a->answers, "--answers",
                              [&](ImageFormat, std::string& bytes, std::string& e) {
                                return render_answer_key(trace, o, narrate, bytes, e);
                              });
      }
      files.commit();
      std::cout << "wrote " << printable_text(a->out) << "\n";
      if (answers_index >= 0) std::cout << "wrote " << printable_text(a->answers) << "\n";
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
