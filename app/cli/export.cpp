// `attention-lab export`: draws one stage of a scenario's trace as a heatmap (PNG, SVG or PDF)
// for slides, or every stage as the pages of one PDF, through the same exporter the app uses.
#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/format.h"
#include "attention/scenario.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/score_flags.h"
#include "render/heatmap_export.h"

namespace attn::cli {

namespace {

struct ExportArgs {
  ScenarioSource src;
  HeatmapOptions options;
  std::string colormap;
  std::string out;
  std::string paper = "slide";
  bool annotate = false, no_annotate = false, all_stages = false;
  ScoreFlags score;
  std::string step;     // --step or --all-stages is required
  ExportHtmlArgs html;  // --lesson/--course with --html: a lesson as a web page
};

}  // namespace

void register_export(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "export", "Draw one stage as a heatmap (PNG, SVG or PDF), or every stage as PDF pages");
  auto a = std::make_shared<ExportArgs>();
  add_scenario_options(*cmd, a->src);
  add_score_flags(*cmd, a->score);
  auto* step = cmd->add_option("--step", a->step,
                               "stage to draw: scores, scaled, masked, weights, output, ...");
  auto* all = cmd->add_flag("--all-stages", a->all_stages,
                            "every stage (every head) on its own page of one PDF");
  step->check(non_empty());
  step->excludes(all);
  all->excludes(step);
  cmd->add_option("--head", a->options.head,
                  "query head (default 0); with --model, the model's head");
  cmd->add_option("--out", a->out, "output file: FILE.png, FILE.svg or FILE.pdf");
  auto* lesson = cmd->add_option("--lesson", a->html.lesson,
                                 "a lesson file or built-in lesson name ('lessons'), with --html")
                     ->check(non_empty());
  auto* course = cmd->add_flag("--course", a->html.course,
                               "every built-in lesson, with --html DIR/ (and an index.html)");
  lesson->excludes(course);
  course->excludes(lesson);
  cmd->add_option("--html", a->html.out,
                  "the lesson as one self-contained web page, OUT.html (with --course: a folder)")
      ->check(non_empty());
  cmd->add_option("--colormap", a->colormap,
                  "viridis, cividis, magma, grayscale or diverging (default: diverging for signed "
                  "data, viridis otherwise, as in the app)")
      ->check(non_empty());
  auto* on = cmd->add_flag("--annotate", a->annotate, "numbers in the cells (default up to 16×16)");
  auto* off = cmd->add_flag("--no-annotate", a->no_annotate, "no numbers in the cells");
  on->excludes(off);
  off->excludes(on);
  cmd->add_option("--width", a->options.width,
                  "picture width in pixels (points in a PDF), 200 to 8192 (default: automatic)")
      ->check(CLI::Range(200, 8192));
  cmd->add_option("--paper", a->paper,
                  "page size with --all-stages: slide (16:9), a4 or letter (landscape)");
  cmd->callback([&action, a, cmd] {
    action = [a, cmd] {
      if (!a->html.out.empty() || !a->html.lesson.empty() || a->html.course) {
        // Every other option is a heatmap's: named, rather than silently ignored.
        for (const CLI::Option* o : cmd->get_options())
          if (o->count() > 0 && o->get_name() != "--lesson" && o->get_name() != "--course" &&
              o->get_name() != "--html")
            throw CliError{kExitUsage,
                           "--html: a lesson's web page takes --lesson or --course and --html "
                           "only; " +
                               o->get_name() + " is for a heatmap"};
        return export_lesson_html(a->html);
      }
      if (a->out.empty())
        throw CliError{kExitUsage,
                       "--out: give the file to write (FILE.png, FILE.svg or FILE.pdf)"};
      HeatmapOptions o = a->options;
      if (!a->colormap.empty()) o.maps = ColormapChoice::only(a->colormap);
      if (a->annotate) o.annotate = true;
      if (a->no_annotate) o.annotate = false;
      const std::optional<Paper> paper = paper_of(a->paper);
      if (!paper)
        throw CliError{kExitUsage, "--paper: unknown page size '" + a->paper +
                                       "'; expected slide, a4 or letter"};
      if (!a->all_stages && a->step.empty())
        throw CliError{kExitUsage, "--step: give the stage to draw, or --all-stages"};
      if (a->all_stages && image_format_of(a->out) != ImageFormat::kPdf)
        throw CliError{kExitUsage,
                       "--all-stages: every stage goes on a page of one PDF; use an "
                       "--out name ending in .pdf (got '" +
                           a->out + "')"};
      image_format_or_throw(a->out, "--out");
      OutputFiles files;  // checked before any work (cli.h)
      const int index = files.add("--out", a->out);
      // With --model, --head picks the model's head; its scenario has that one head.
      ScenarioSource src = a->src;
      src.head = o.head;
      if (!src.model.empty()) o.head = 0;
      Scenario s = load_scenario_source(src);
      apply_score_flags(a->score, scenario_d_k(s), s.options);
      check_traceable(s);
      std::unique_ptr<Backend> backend = make_backend_or_throw("cpu");
      AttentionTrace trace = compute_scenario_trace(s, *backend);
      o.step = a->all_stages ? trace.steps.front().id : stage_in_trace_or_throw(a->step, trace);
      std::string error = check_heatmap_options(trace, o);
      if (!error.empty())
        throw CliError{kExitUsage, name_fields(error, {{"step", "--step"},
                                                       {"head", "--head"},
                                                       {"colormap", "--colormap"},
                                                       {"width", "--width"},
                                                       {"annotate", "--annotate"}})};
      std::vector<std::string> warnings;
      render_image_or_throw(
          files, index, a->out, "--out", [&](ImageFormat f, std::string& bytes, std::string& e) {
            return a->all_stages ? render_stage_pages(trace, o, *paper, bytes, e, &warnings)
                                 : render_heatmap(trace, o, f, bytes, e, &warnings);
          });
      files.commit();
      for (const auto& w : warnings) std::cerr << "warning: " << printable_text(w) << "\n";
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
