// `attention-lab export`: draws one stage of a scenario's trace as a heatmap (PNG or SVG) for
// slides, through the same exporter the app uses.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "attention/scenario.h"
#include "backends/compute.h"
#include "cli/cli.h"
#include "render/heatmap_export.h"
#include "render/heatmap_layout.h"

namespace attn::cli {

namespace {

struct ExportArgs {
  ScenarioSource src;
  HeatmapOptions options;
  std::string out;
  bool annotate = false, no_annotate = false;
};

// The folder the output goes to must exist; a missing one is the user's mistake (exit 2), while
// a failure to write into an existing folder is reported as a runtime error.
void check_output_folder(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw CliError{kExitUsage, "--out: folder '" + dir + "' does not exist"};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw CliError{kExitUsage, "--out: '" + path + "' is a folder; give an image file name"};
}

}  // namespace

void register_export(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("export", "Draw one stage as a heatmap image (PNG or SVG)");
  auto a = std::make_shared<ExportArgs>();
  add_scenario_options(*cmd, a->src);
  cmd->add_option("--step", a->options.step,
                  "stage to draw: scores, scaled, masked, weights, output, ...")
      ->required();
  cmd->add_option("--head", a->options.head,
                  "query head (default 0); with --model, the model's head");
  cmd->add_option("--out", a->out, "output image, FILE.png or FILE.svg")->required();
  cmd->add_option("--colormap", a->options.colormap,
                  "viridis, cividis, magma, grayscale or diverging (default: diverging for signed "
                  "data, viridis otherwise)");
  auto* on = cmd->add_flag("--annotate", a->annotate, "numbers in the cells (default up to 16×16)");
  auto* off = cmd->add_flag("--no-annotate", a->no_annotate, "no numbers in the cells");
  on->excludes(off);
  off->excludes(on);
  cmd->add_option("--width", a->options.width,
                  "image width in pixels, 200 to 8192 (default: automatic)");
  cmd->callback([&action, a] {
    action = [a] {
      HeatmapOptions o = a->options;
      if (a->annotate) o.annotate = true;
      if (a->no_annotate) o.annotate = false;
      // With --model, --head picks the model's head; its scenario has that one head.
      ScenarioSource src = a->src;
      src.head = o.head;
      if (!src.model.empty()) o.head = 0;
      Scenario s = load_scenario_source(src);
      std::unique_ptr<Backend> backend = make_backend_or_throw("cpu");
      AttentionTrace trace = compute_scenario_trace(s, *backend);
      std::string error = check_heatmap_options(trace, o);
      if (!error.empty()) throw CliError{kExitUsage, error};
      check_output_folder(a->out);
      write_image_or_throw(a->out, "--out", [&](ImageFormat f, std::string& bytes, std::string& e) {
        return render_heatmap(trace, o, f, bytes, e);
      });
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
