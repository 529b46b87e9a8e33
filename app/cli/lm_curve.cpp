// `attention-lab lm curve`: a run's loss curves — training loss and held-out loss at every
// evaluated step, read from the training.json `lm train` writes beside the model
// (lm/training_history.h) — drawn as a line chart (render/chart.h), PNG, SVG or PDF. Several
// --model compare runs evaluated at the same steps (e.g. the Llama-style and GPT-2-style austen).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

#include "attention/format.h"
#include "cli/cli.h"
#include "lm/model.h"
#include "lm/training_history.h"
#include "render/chart.h"
#include "render/scene.h"
#include "render/ticks.h"

namespace attn::cli {

namespace {

struct CurveArgs {
  std::vector<std::string> models, names;
  std::string out, title = "Training and held-out loss";
};

// A y range that holds every value, with 3 to 6 ticks at a round step (render/ticks.h; at least
// 0.1): the smallest such step from which 6 steps above a multiple of it reach the largest value.
void nice_range(const std::vector<std::vector<double>>& values, LineChart& chart) {
  double mn = INFINITY, mx = -INFINITY;
  for (const auto& v : values)
    for (double x : v) mn = std::min(mn, x), mx = std::max(mx, x);
  // No step below a sixth of the range can do; from there, the next round step until one fits.
  for (double step = nice_step(std::max(0.1, (mx - mn) / 6));; step = nice_step(step * 1.01)) {
    const double lo = std::floor(mn / step) * step;
    const int n = std::max(3, static_cast<int>(std::ceil((mx - lo) / step - 1e-9)));
    if (n <= 6) {
      chart.y_min = lo;
      chart.y_max = lo + n * step;
      chart.y_steps = n;
      return;
    }
  }
}

int run_curve(const CurveArgs& a) {
  if (!a.names.empty() && a.names.size() != a.models.size())
    throw CliError{kExitUsage, "--name: " + std::to_string(a.names.size()) + " names for " +
                                   std::to_string(a.models.size()) +
                                   " models; give one per --model, in the same order"};
  OutputFiles files;  // checked before any work (cli.h)
  const int index = files.add("--out", a.out);
  LineChart chart;
  chart.title = a.title;
  chart.x_title = "training step";
  std::vector<int> steps;
  bool corpus = true;
  for (size_t i = 0; i < a.models.size(); ++i) {
    const std::string folder = lm_model_folder_or_throw(a.models[i]);
    std::string error;
    lm::TrainingHistory h;
    if (!lm::read_training_history(folder, h, error))
      throw CliError{kExitUsage, "--model: " + error};
    if (i == 0) {
      steps = h.steps;
    } else if (h.steps != steps) {
      throw CliError{kExitUsage, "--model: " + printable_text(a.models[i]) +
                                     " was evaluated at other steps than " +
                                     printable_text(a.models[0]) +
                                     "; runs compared in one chart need the same --steps and "
                                     "--eval-every"};
    }
    corpus = corpus && h.heldout_is_corpus;
    const std::string name = a.names.empty() ? lm::folder_name(folder) : a.names[i];
    const std::string prefix = a.models.size() > 1 ? name + ": " : "";
    chart.series.push_back(prefix + "training");
    chart.values.push_back(h.train_loss);
    chart.series.push_back(prefix + (h.heldout_is_corpus ? "held-out text" : "held-out batch"));
    chart.values.push_back(h.heldout_loss);
  }
  for (int s : steps) chart.x_labels.push_back(std::to_string(s));
  chart.y_title = "loss (nats per token)";
  nice_range(chart.values, chart);
  render_image_or_throw(files, index, a.out, "--out",
                        [&](ImageFormat f, std::string& bytes, std::string& e) {
                          std::unique_ptr<TextEngine> text = TextEngine::create(e);
                          if (!text) return false;
                          e = check_line_chart(chart);
                          if (!e.empty()) return false;
                          RenderOptions ro;
                          ro.title = chart.title;
                          return render_pages({compose_line_chart(chart, *text)}, f, bytes, e, ro);
                        });
  files.commit();
  std::cout << "wrote " << printable_text(a.out) << " (" << steps.size() << " evaluated steps, "
            << (corpus ? "held-out loss on the --eval-corpus text"
                       : "held-out loss on the trainer's held-out batch")
            << ")\n";
  return kExitOk;
}

}  // namespace

void register_lm_curve(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "curve",
      "Draw a trained model's loss curves (training and held-out loss at every evaluated step, "
      "from its training.json) as PNG, SVG or PDF");
  auto a = std::make_shared<CurveArgs>();
  cmd->add_option("--model", a->models,
                  "a model folder written by `lm train`, or a shipped model's short name; repeat "
                  "to compare runs evaluated at the same steps")
      ->required();
  cmd->add_option("--name", a->names, "the name of each --model in the legend (repeat, in order)");
  cmd->add_option("--title", a->title, "the chart's title")->capture_default_str();
  cmd->add_option("--out", a->out, "FILE.png, FILE.svg or FILE.pdf")->required();
  cmd->callback([&action, a] { action = [a] { return run_curve(*a); }; });
}

}  // namespace attn::cli
