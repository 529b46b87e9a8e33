// `attention-lab seq2seq train|translate|align|eval|compare`: trains the date-translation
// encoder–decoders (core/seq2seq), prints translations with their alignment, draws alignment
// plots, and reproduces the bottleneck (accuracy against input length).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "attention/format.h"
#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "io/atomic_file.h"
#include "io/shipped.h"
#include "render/align_plot.h"
#include "render/colormap.h"
#include "seq2seq/alignment.h"
#include "seq2seq/explain_step.h"
#include "seq2seq/trainer.h"

namespace attn::cli {

namespace {

using namespace attn::s2s;

constexpr const char* kModelHelp =
    "model file, or the name of a shipped one (see 'seq2seq models')";

// --model takes a file or a shipped model's short name ("bahdanau", "bottleneck/none-max40").
Model load_model_or_throw(const std::string& name_or_path) {
  std::string error;
  const std::optional<std::string> path = resolve_shipped(kSeq2seqModels, name_or_path, error);
  if (!path) throw CliError{kExitUsage, "--model: " + error};
  Model m;
  if (!load_model(*path, m, error)) throw CliError{kExitUsage, "--model: " + error};
  return m;
}

// eval and compare score a model on the held-out dates: one whose alphabets cannot read or write
// them is refused rather than scored 0%.
Model load_date_model_or_throw(const std::string& path) {
  Model m = load_model_or_throw(path);
  std::string error;
  if (!check_date_alphabets(m, error))
    throw CliError{kExitUsage, "--model: '" + path + "': " + error};
  return m;
}

std::string percent(double x) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << 100.0 * x << "%";
  return s.str();
}

// One cell of the translate table, 4 columns wide: the weight in percent rounded to a whole
// number ("100", "5"), or "." when it is below 5% (the threshold applies to the exact value, so
// 4.85% is "." and never "5").
std::string percent_cell(double w) {
  const double pct = 100.0 * w;
  if (pct < 5.0) return "   .";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%4ld", std::lround(pct));
  return buf;
}

std::string describe(const Model& m) {
  std::string s = score_name(m.config.score) + ", hidden " + std::to_string(m.config.hidden) +
                  ", embed " + std::to_string(m.config.embed);
  if (uses_window(m.config.score)) s += ", window " + std::to_string(m.config.window);
  return s;
}

// Translates or throws exit 2 naming --input.
ForwardCache<float> run_translate(const Model& m, const std::string& input, std::string& out) {
  ForwardCache<float> fc;
  std::string error;
  if (!translate(m, input, fc, out, error)) throw CliError{kExitUsage, "--input: " + error};
  return fc;
}

// The alignment plot of one translation (rows: every decoded character plus the </s> step when
// it was reached).
AlignmentPlot make_plot(const Model& m, const std::string& input) {
  s2s::Alignment a;
  std::string error;
  if (!s2s::align(m, input, a, error)) throw CliError{kExitUsage, "--input: " + error};
  AlignmentPlot p;
  p.title = score_name(m.config.score) + ": \"" + input + "\" → \"" + a.output + "\"";
  p.rows = a.rows;
  p.cols = a.cols;
  p.weights = a.weights;
  p.visible = a.visible;
  if (m.config.score == Score::kNone)
    p.subtitle = "no attention: every step sees only h_T, the state after the last character";
  return p;
}

// seq2seq train's options.
struct Seq2seqTrainArgs {
  std::string score, out;
  int hidden = 64, embed = 16, window = 8;
  TrainOptions train;
  std::string watch, watch_dir;
  int watch_every = 50;
};

// Checks the options that CLI11's ranges cannot (the score's name, an even --hidden, a writable
// --out, --watch and --watch-dir) and makes the untrained model.
void check_train_args(const Seq2seqTrainArgs& a, Score& score, Model& model) {
  if (!parse_score(a.score, score))
    throw CliError{kExitUsage, "--score: unknown score '" + a.score +
                                   "'; expected bahdanau, dot, general, concat, local-p, "
                                   "local-m or none"};
  if (a.hidden % 2 != 0)
    throw CliError{kExitUsage, "--hidden: must be even (each encoder direction has H/2), got " +
                                   std::to_string(a.hidden)};
  {  // Fail now, not after the first epoch, when the output cannot be written: the check
     // (and temporary file) every command's outputs get, discarded again here.
    OutputFiles probe;
    probe.add("--out", a.out);
  }
  model = new_date_model(score, a.hidden, a.embed, a.window, a.train.seed);
  if (!a.watch_dir.empty() && a.watch.empty())
    throw CliError{kExitUsage, "--watch-dir: needs --watch TEXT"};
  if (!a.watch.empty()) {
    std::vector<int> ids;
    std::string error;
    if (!encode(model.in_vocab, a.watch, ids, error))
      throw CliError{kExitUsage, "--watch: " + error};
  }
  if (!a.watch_dir.empty()) {
    struct stat st {};
    if (::stat(a.watch_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw CliError{kExitUsage, "--watch-dir: '" + a.watch_dir + "' is not a folder"};
  }
}

// The command that made the model, kept in each checkpoint.
std::string train_command_line(const Seq2seqTrainArgs& a, Score score) {
  std::ostringstream cmdline;
  cmdline << "attention-lab seq2seq train --score " << a.score << " --epochs " << a.train.epochs
          << " --hidden " << a.hidden << " --embed " << a.embed;
  if (uses_window(score)) cmdline << " --window " << a.window;
  cmdline << " --batch " << a.train.batch << " --train-size " << a.train.train_size << " --lr "
          << a.train.lr << " --seed " << a.train.seed << " --threads " << a.train.threads;
  if (a.train.min_length != 1) cmdline << " --min-length " << a.train.min_length;
  if (a.train.max_length != 200) cmdline << " --max-length " << a.train.max_length;
  return cmdline.str();
}

// Trains with a progress bar, a checkpoint after every epoch and the watched input's alignment;
// Ctrl+C stops after the current batch.
int run_train(const std::shared_ptr<Seq2seqTrainArgs>& o) {
  Score score;
  Model model;
  check_train_args(*o, score, model);
  // The watched input's alignment as an image named by the number of batches seen.
  auto draw_watch = [&o](const Model& m, long batches) {
    char name[32];
    std::snprintf(name, sizeof name, "/align-%06ld.png", batches);
    AlignmentPlot p = make_plot(m, o->watch);
    p.subtitle = "after " + std::to_string(batches) + " batches";
    std::string bytes, error;
    if (!render_alignment_plots({p}, ImageFormat::kPng, bytes, error) ||
        !write_file_atomically(o->watch_dir + name, bytes, error))
      throw CliError{kExitRuntime, "--watch-dir: " + error};
  };
  if (!o->watch_dir.empty()) draw_watch(model, 0);
  const std::string cmdline = train_command_line(*o, score);
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  std::cout << "training " << describe(model) << " on " << o->train.train_size << " dates, "
            << o->train.epochs << (o->train.epochs == 1 ? " epoch, " : " epochs, ")
            << o->train.threads << (o->train.threads == 1 ? " thread\n" : " threads\n")
            << std::flush;
  // Ctrl+C stops after the current batch; the previous SIGINT action comes back however
  // training ends (errors included).
  const InterruptGuard interrupt;
  TrainCallbacks cb;
  cb.stop = interrupt.flag();
  const auto start = std::chrono::steady_clock::now();
  cb.on_batch = [tty, &o, &draw_watch](int epoch, int k, int n, double loss, const Model& m) {
    const long seen = static_cast<long>(epoch - 1) * n + k + 1;
    if (!o->watch_dir.empty() && seen % o->watch_every == 0) draw_watch(m, seen);
    if (!tty || (k % 10 != 0 && k + 1 != n)) return;
    const int width = 30, done = (k + 1) * width / n;
    std::cerr << "\repoch " << epoch << "/" << o->train.epochs << " ["
              << std::string(static_cast<size_t>(done), '#')
              << std::string(static_cast<size_t>(width - done), '.') << "] " << (k + 1) << "/" << n
              << " loss " << std::fixed << std::setprecision(4) << loss << std::defaultfloat
              << std::flush;
  };
  std::string save_error;
  cb.on_epoch = [&](const EpochStats& st, const Model& m) {
    if (tty) std::cerr << "\r" << std::string(70, ' ') << "\r";
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "epoch " << st.epoch << "/" << o->train.epochs << "  loss " << std::fixed
              << std::setprecision(4) << st.loss << "  held-out exact "
              << percent(st.heldout_accuracy) << "  (" << std::setprecision(1) << st.seconds
              << " s, total " << total << " s)" << std::defaultfloat << std::endl;
    if (!o->watch.empty()) {
      std::string text;
      run_translate(m, o->watch, text);
      std::cout << "  watch: " << o->watch << " -> " << text << std::endl;
    }
    Model ck = m;
    std::ostringstream info;
    info << cmdline << "\nepoch " << st.epoch << " of " << o->train.epochs << ", held-out exact "
         << percent(st.heldout_accuracy);
    ck.info = info.str();
    std::string error;
    if (!save_model(ck, o->out, error) && save_error.empty()) save_error = error;
  };
  std::string error;
  const int done = train_model(model, o->train, cb, error);
  if (done < 0) throw CliError{kExitUsage, "--min-length/--max-length: " + error};
  if (!save_error.empty()) throw CliError{kExitRuntime, "--out: " + save_error};
  if (done < o->train.epochs) {
    if (tty) std::cerr << "\n";
    std::cerr << "interrupted: " << o->out
              << (done > 0
                      ? " holds the last complete checkpoint (epoch " + std::to_string(done) + ")"
                      : " was not written (no epoch completed)")
              << "\n";
    return 130;
  }
  std::cout << "wrote " << printable_text(o->out) << "\n";
  return kExitOk;
}

void register_train(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand("train", "Train a date-translation model");
  auto o = std::make_shared<Seq2seqTrainArgs>();
  cmd->add_option("--score", o->score, "bahdanau|dot|general|concat|local-p|local-m|none")
      ->required();
  cmd->add_option("--out", o->out, "model file to write (a checkpoint after every epoch)")
      ->required();
  cmd->add_option("--epochs", o->train.epochs, "passes over the training set")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--hidden", o->hidden, "decoder and annotation size H (even)")
      ->check(CLI::Range(2, 1024));
  cmd->add_option("--embed", o->embed, "character embedding size")->check(CLI::Range(1, 1024));
  cmd->add_option("--window", o->window, "half-width D of the local-p/local-m window")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--batch", o->train.batch, "examples per mini-batch")->check(CLI::Range(1, 4096));
  cmd->add_option("--train-size", o->train.train_size, "training examples")
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--heldout-size", o->train.heldout_size,
                  "held-out examples for the per-epoch accuracy")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--lr", o->train.lr, "Adam learning rate")->check(finite_in(1e-7, 1.0));
  cmd->add_option("--seed", o->train.seed, "seed of the data, the initialisation and the order")
      ->check(unsigned_integer());
  cmd->add_option("--threads", o->train.threads, "threads per batch (results depend on it)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--min-length", o->train.min_length, "shortest training input")
      ->check(CLI::Range(1, 200));
  cmd->add_option("--max-length", o->train.max_length, "longest training input")
      ->check(CLI::Range(1, 200));
  cmd->add_option("--watch", o->watch, "an input to translate after every epoch (and to draw)");
  cmd->add_option("--watch-dir", o->watch_dir,
                  "with --watch: write its alignment as DIR/align-BATCH.png as training goes");
  cmd->add_option("--watch-every", o->watch_every, "batches between --watch-dir images")
      ->check(CLI::Range(1, 1000000));
  cmd->callback([&action, o] { action = [o] { return run_train(o); }; });
}

// One decoder step written out: the score of every input position, the softmax, the context.
void print_step(const Model& m, const ForwardCache<float>& fc, const std::string& input, int t) {
  const StepCache<float>& st = fc.steps[static_cast<size_t>(t)];
  const Score sc = m.config.score;
  std::cout << "\nstep " << t << ": emits '" << printable_text(m.out_vocab.label(st.out[0]))
            << "' (p = " << std::fixed << std::setprecision(4) << st.probs(0, st.out[0]) << ")\n";
  if (sc == Score::kNone) {
    std::cout << "no attention: the context is the last encoder state h_T at every step\n";
  } else {
    std::cout << score_formula(sc) << "\n";
    if (uses_window(sc))
      std::cout << "p_t = " << st.pos(0, 0) << ", window |j - p_t| <= " << m.config.window << "\n";
    std::cout << "   j  char        e_tj      a_tj\n";
    for (int j = 0; j < fc.src_len; ++j) {
      const char c = input[static_cast<size_t>(j)];
      std::cout << std::setw(4) << j << "  " << std::setw(4)
                << (c == ' ' ? std::string("_") : char_text(c));
      if (st.valid(0, j) == 0.0f)
        std::cout << std::setw(12) << "-inf" << std::setw(10) << "0"
                  << "  (outside the window)\n";
      else
        std::cout << std::setw(12) << st.e(0, j) << std::setw(10) << st.alpha(0, j) << "\n";
    }
  }
  std::cout << "context c_t = sum_j a_tj h_j (" << st.c.cols() << " numbers):\n ";
  for (int k = 0; k < st.c.cols(); ++k)
    std::cout << " " << std::setprecision(3) << st.c(0, k) << ((k + 1) % 12 == 0 ? "\n " : "");
  std::cout << std::defaultfloat << "\n";
}

void register_translate(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand("translate", "Translate one date and print its alignment");
  auto model = std::make_shared<std::string>();
  auto input = std::make_shared<std::string>();
  auto step = std::make_shared<int>(-1);
  auto position = std::make_shared<int>(-1);
  cmd->add_option("--model", *model, kModelHelp)->required();
  cmd->add_option("--input", *input, "text to translate, e.g. 'tuesday, 22 november 2026'")
      ->required();
  cmd->add_option("--step", *step, "also write out decoder step T: scores, weights, context")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--position", *position,
                  "with --step: write out the score of input position J with its numbers")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([&action, model, input, step, position] {
    action = [model, input, step, position] {
      const Model m = load_model_or_throw(*model);
      std::string out;
      const ForwardCache<float> fc = run_translate(m, *input, out);
      const int steps =
          std::min(static_cast<int>(fc.steps.size()), static_cast<int>(out.size()) + 1);
      if (*step >= steps)
        throw CliError{kExitUsage, "--step: " + std::to_string(*step) + " is past the last step (" +
                                       std::to_string(steps - 1) + ")"};
      std::cout << "input:  " << printable_text(*input) << "\noutput: " << printable_text(out)
                << "\nmodel:  " << describe(m) << "\nscore:  " << score_formula(m.config.score)
                << "\n";
      if (*position >= 0 && *step < 0) throw CliError{kExitUsage, "--position: needs --step"};
      if (*position >= static_cast<int>(input->size()))
        throw CliError{kExitUsage, "--position: " + std::to_string(*position) +
                                       " is past the last input character (" +
                                       std::to_string(input->size() - 1) + ")"};
      if (*step >= 0) {
        print_step(m, fc, *input, *step);
        if (*position >= 0) {
          std::cout << "\n";
          for (const auto& line : explain_attention_step(m, fc, *step, *position))
            std::cout << printable_text(line) << "\n";
        }
        return kExitOk;
      }
      if (m.config.score == Score::kNone) {
        std::cout << "\nno alignment: this model reads only the last encoder state.\n";
        return kExitOk;
      }
      const AlignmentPlot p = make_plot(m, *input);
      std::cout << "\nalignment (rows: output characters; columns: input characters; weights "
                   "in percent, rounded; '.' below 5%):\n     ";
      for (const auto& c : p.cols) std::cout << std::setw(4) << (c == " " ? "_" : char_text(c[0]));
      std::cout << "\n";
      for (int i = 0; i < p.weights.rows(); ++i) {
        std::cout << std::setw(5) << printable_text(p.rows[i]);
        for (int j = 0; j < p.weights.cols(); ++j) std::cout << percent_cell(p.weights(i, j));
        std::cout << "\n";
      }
      return kExitOk;
    };
  });
}

void register_align(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "align", "Draw the alignment plot of one translation (several models: one above the other)");
  auto models = std::make_shared<std::vector<std::string>>();
  auto input = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("--model", *models, std::string(kModelHelp) + "; repeat to compare")->required();
  cmd->add_option("--input", *input, "text to translate")->required();
  auto colormap = std::make_shared<std::string>("viridis");
  cmd->add_option("--out", *out, "FILE.png, FILE.svg or FILE.pdf")->required();
  cmd->add_option("--colormap", *colormap,
                  "viridis (default), cividis, magma or grayscale (white = 1, as in the paper)");
  cmd->callback([&action, models, input, out, colormap] {
    action = [models, input, out, colormap] {
      if (!is_colormap(*colormap) || is_diverging(*colormap))
        throw CliError{kExitUsage, "--colormap: unknown colour map '" + *colormap +
                                       "'; expected viridis, cividis, magma or grayscale"};
      image_format_or_throw(*out, "--out");
      OutputFiles files;  // checked before any work (cli.h)
      const int index = files.add("--out", *out);
      std::vector<AlignmentPlot> plots;
      for (const auto& path : *models) {
        const Model m = load_model_or_throw(path);
        std::string text;
        run_translate(m, *input, text);
        plots.push_back(make_plot(m, *input));
        plots.back().colormap = *colormap;
        std::cout << score_name(m.config.score) << ": " << printable_text(*input) << " -> "
                  << printable_text(text) << "\n";
      }
      render_image_or_throw(files, index, *out, "--out",
                            [&](ImageFormat f, std::string& bytes, std::string& e) {
                              return render_alignment_plots(plots, f, bytes, e);
                            });
      files.commit();
      std::cout << "wrote " << printable_text(*out) << "\n";
      return kExitOk;
    };
  });
}

struct EvalOpts {
  std::vector<std::string> models;
  int count = 2000, threads = 1;
  std::string plot;
  std::string title = "exact match on held-out dates by input length";
};

void add_eval_options(CLI::App* cmd, EvalOpts& o, bool many) {
  auto* m = cmd->add_option("--model", o.models,
                            std::string(kModelHelp) + (many ? "; repeat to compare" : ""))
                ->required();
  if (!many) m->expected(1);
  cmd->add_option("--count", o.count, "held-out dates to evaluate")->check(CLI::Range(1, 1000000));
  cmd->add_option("--threads", o.threads, "threads")->check(CLI::Range(1, 64));
}

void register_eval(CLI::App& parent, Action& action) {
  auto* cmd =
      parent.add_subcommand("eval", "Exact-match accuracy on held-out dates by input length");
  auto o = std::make_shared<EvalOpts>();
  add_eval_options(cmd, *o, false);
  cmd->callback([&action, o] {
    action = [o] {
      const Model m = load_date_model_or_throw(o->models[0]);
      const auto rows = accuracy_by_length(m, heldout_dates(o->count), o->threads);
      std::cout << "model: " << printable_text(o->models[0]) << " (" << describe(m) << ")\n"
                << "held-out dates: " << o->count << " (seed " << kHeldOutSeed
                << "; no date also in training)\n\n"
                << "input length   count   exact match\n";
      for (const auto& r : rows)
        std::cout << std::left << std::setw(13) << r.label << std::right << std::setw(7) << r.count
                  << std::setw(14) << percent(r.accuracy()) << "\n";
      return kExitOk;
    };
  });
}

void register_compare(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "compare", "Accuracy by input length for several models side by side (the bottleneck)");
  auto o = std::make_shared<EvalOpts>();
  add_eval_options(cmd, *o, true);
  cmd->add_option("--plot", o->plot,
                  "also draw accuracy against input length (FILE.png, .svg or .pdf)");
  cmd->add_option("--title", o->title, "title of the --plot chart");
  cmd->callback([&action, o] {
    action = [o] {
      OutputFiles files;
      int plot_index = -1;
      if (!o->plot.empty()) {
        image_format_or_throw(o->plot, "--plot");
        plot_index = files.add("--plot", o->plot);
      }
      std::vector<Model> models;
      for (const auto& path : o->models) models.push_back(load_date_model_or_throw(path));
      const auto data = heldout_dates(o->count);
      std::vector<std::vector<LengthBucket>> tables;
      for (const auto& m : models) tables.push_back(accuracy_by_length(m, data, o->threads));
      std::cout << "exact match on " << o->count << " held-out dates by input length\n\n"
                << std::left << std::setw(13) << "input length" << std::right << std::setw(7)
                << "count";
      for (const auto& m : models) std::cout << std::setw(11) << score_name(m.config.score);
      std::cout << "\n";
      for (size_t r = 0; r < tables[0].size(); ++r) {
        std::cout << std::left << std::setw(13) << tables[0][r].label << std::right << std::setw(7)
                  << tables[0][r].count;
        for (const auto& t : tables) std::cout << std::setw(11) << percent(t[r].accuracy());
        std::cout << "\n";
      }
      if (!o->plot.empty()) {
        AccuracyChart chart;
        chart.title = o->title;
        for (size_t r = 0; r + 1 < tables[0].size(); ++r)
          chart.buckets.push_back(tables[0][r].label);
        for (size_t k = 0; k < models.size(); ++k) {
          std::string name = score_name(models[k].config.score);
          for (size_t j = 0; j < k; ++j)
            if (score_name(models[j].config.score) == name)
              name += " (" + std::to_string(k + 1) + ")";
          chart.series.push_back(name);
          chart.accuracy.emplace_back();
          for (size_t r = 0; r + 1 < tables[k].size(); ++r)
            chart.accuracy.back().push_back(tables[k][r].accuracy());
        }
        render_image_or_throw(files, plot_index, o->plot, "--plot",
                              [&](ImageFormat f, std::string& bytes, std::string& e) {
                                return render_accuracy_chart(chart, f, bytes, e);
                              });
        files.commit();
        std::cout << "wrote " << printable_text(o->plot) << "\n";
      }
      return kExitOk;
    };
  });
}

void register_dates(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand("dates", "Print examples of the date task: input<TAB>target");
  auto o = std::make_shared<DateSetOptions>();
  auto split = std::make_shared<std::string>("train");
  o->count = 10;
  cmd->add_option("--count", o->count, "how many")->check(CLI::Range(1, 10000000));
  cmd->add_option("--split", *split, "train or heldout (never the same dates)")
      ->check(CLI::IsMember({"train", "heldout"}));
  cmd->add_option("--seed", o->seed, "seed")->check(unsigned_integer());
  cmd->add_option("--min-length", o->min_length, "shortest input")->check(CLI::Range(1, 200));
  cmd->add_option("--max-length", o->max_length, "longest input")->check(CLI::Range(1, 200));
  cmd->callback([&action, o, split] {
    action = [o, split] {
      DateSetOptions opts = *o;
      opts.split = *split == "heldout" ? Split::kHeldOut : Split::kTrain;
      std::vector<DateExample> data;
      std::string error;
      if (!generate_dates(opts, data, error))
        throw CliError{kExitUsage, "--min-length/--max-length: " + error};
      for (const auto& ex : data) std::cout << ex.input << '\t' << ex.target << '\n';
      return kExitOk;
    };
  });
}

// What a model file's note (its training command, then "epoch E of N, held-out exact P%") says
// about how it was trained, for `seq2seq models`: "; inputs of at most 40 characters; epoch …".
std::string training_note(const std::string& info) {
  std::string note;
  const std::string flag = "--max-length ";
  if (const size_t at = info.find(flag); at != std::string::npos) {
    const size_t from = at + flag.size();
    note += "; inputs of at most " + info.substr(from, info.find_first_of(" \n", from) - from) +
            " characters";
  }
  const size_t line = info.rfind('\n');
  if (line != std::string::npos) note += "; " + info.substr(line + 1);
  return note;
}

void register_models(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "models", "List the shipped models (NAME<TAB>score, sizes, training, accuracy)");
  cmd->callback([&action] {
    action = [] {
      const std::vector<ShippedItem> items = list_shipped(kSeq2seqModels);
      if (items.empty()) throw CliError{kExitRuntime, no_shipped_message(kSeq2seqModels)};
      for (const ShippedItem& item : items) {
        Model m;
        std::string error;
        if (!load_model(item.path, m, error)) throw CliError{kExitRuntime, error};
        std::cout << item.name << '\t' << describe(m) << training_note(m.info) << "\n";
      }
      return kExitOk;
    };
  });
}

}  // namespace

void register_seq2seq(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "seq2seq", "Encoder-decoder with Bahdanau/Luong attention on a date-translation task");
  cmd->require_subcommand(1);
  register_train(*cmd, action);
  register_translate(*cmd, action);
  register_align(*cmd, action);
  register_eval(*cmd, action);
  register_compare(*cmd, action);
  register_dates(*cmd, action);
  register_models(*cmd, action);
}

}  // namespace attn::cli
