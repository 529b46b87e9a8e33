// Parses the command line, dispatches to a subcommand, and turns every failure into
// "error: ..." on stderr with the exit code of cli.md.
#include "cli/cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>

#include "attention/engine.h"
#include "attention/format.h"
#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "cli/options.h"
#include "gui/gui.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "io/scenario_json.h"

namespace attn::cli {

void add_scenario_options(CLI::App& cmd, ScenarioSource& src, bool required, bool add_head) {
  auto* ex = cmd.add_option("--example", src.example, "built-in example (see 'examples')")
                 ->check(non_empty());
  auto* sc =
      cmd.add_option("--scenario", src.scenario_file, "JSON scenario file")->check(non_empty());
  auto* md = cmd.add_option("--model", src.model,
                            "GPT-2-format model folder (or a shipped model's name): a real head")
                 ->check(non_empty());
  ex->excludes(sc);
  sc->excludes(ex);
  md->excludes(ex)->excludes(sc);
  ex->excludes(md);
  sc->excludes(md);
  cmd.add_option("--text", src.text, "with --model: the text whose tokens the head attends over")
      ->needs(md);
  cmd.add_option("--layer", src.layer, "with --model: the layer (0-based, default 0)")->needs(md);
  if (add_head) cmd.add_option("--head", src.head, "with --model: the head (0-based, default 0)");
  if (required) {
    // CLI11 has no "exactly one of"; checked after parsing in load_scenario_source.
  }
}

Scenario load_scenario_source(const ScenarioSource& src) {
  if (!src.model.empty()) return load_model_head_scenario(src);
  std::string error;
  std::optional<Scenario> s;
  if (!src.scenario_file.empty()) {
    s = load_scenario_file(src.scenario_file, error);
  } else if (!src.example.empty()) {
    s = load_example(src.example, error);
  } else {
    throw CliError{kExitUsage,
                   "one of --example NAME, --scenario FILE or --model M --text T is required"};
  }
  if (!s) {
    if (error.rfind("example:", 0) == 0) error += "; 'attention-lab examples' lists them";
    throw CliError{kExitUsage, name_fields(error, {{"example", "--example"}})};
  }
  return std::move(*s);
}

void check_traceable(const Scenario& s) {
  const std::string error = check_trace_size(to_problem(s));
  if (!error.empty()) throw CliError{kExitUsage, "the scenario is too large to trace: " + error};
}

StageId stage_in_trace_or_throw(const std::string& name, const AttentionTrace& trace) {
  const std::optional<StageId> id = stage_from_name(name);
  if (!id || !trace.find(*id))
    throw CliError{kExitUsage, "--step: no stage '" + name + "' in this trace; expected one of " +
                                   stage_names(trace, false)};
  return *id;
}

std::unique_ptr<Backend> make_backend_or_throw(const std::string& name, int device) {
  if (name != "cpu" && name != "opencl" && name != "auto")
    throw CliError{kExitUsage,
                   "--backend: unknown backend '" + name + "'; expected cpu, opencl or auto"};
  std::string error;
  std::unique_ptr<Backend> b = make_backend(name, error, device);
  if (!b) throw CliError{kExitRuntime, "--backend " + name + ": " + error};
  return b;
}

void register_gui(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("gui", "Open the desktop app");
  auto opts = std::make_shared<GuiOptions>();
  auto src = std::make_shared<ScenarioSource>();
  add_scenario_options(*cmd, *src, false);
  auto size = std::make_shared<std::string>();
  cmd->add_option("--step", opts->step, "stage to open on (e.g. weights)")->check(non_empty());
  cmd->add_option("--size", *size,
                  "window size WxH, e.g. 1600x1000 (default: the screen's work area)");
  cmd->add_option("--screenshot", opts->screenshot, "render frames, save the window as PNG, exit")
      ->check(non_empty());
  cmd->add_option("--frames", opts->frames, "frames to render before the screenshot")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--head", opts->head, "query head to show");
  cmd->add_option("--select", opts->select, "select query row I or cell I,J (narration)")
      ->check(non_empty());
  cmd->add_option(
      "--edit", opts->edits,
      "edit a cell first, TENSOR:HEAD:ROW:COL=VALUE (tensors q k v x x_kv w_q w_k w_v w_o)");
  cmd->add_option("--theme", opts->theme, "light or dark")->check(non_empty());
  cmd->add_option("--colormap", opts->colormap, "viridis, cividis, magma, grayscale or diverging")
      ->check(non_empty());
  cmd->add_option("--font-size", opts->font_px, "base font size in pixels (12..48)")
      ->check(finite_in(12, 48));
  cmd->add_flag("--presentation", opts->presentation, "start in presentation mode");
  cmd->add_option(
         "--tab", opts->tab,
         "left panel tab: inputs or variants; variant-views also opens the Linformer and "
         "Multi-Token Attention views; seq2seq opens the seq2seq window, "
         "seq2seq-live its live training; lm-heads, lm-block, lm-next, lm-roles, lm-circuit or "
         "lm-kv the language model window on that tab (with --model); lm-sinks the "
         "roles tab on the first-token score with its attention-sink box; "
         "rope-angles, rope-turned or rope-distance the rope stage's view (with "
         "--model and --step rope); lm-train the "
         "window that trains a transformer live (training starts at once); flash the "
         "FlashAttention window (the online softmax, block by block); scores the window "
         "that times the additive score against the dot product; sqrt-dk the √d_k "
         "experiment; ghost the Ghost Attention help page; lm-rollout the language "
         "model's rollout tab (with --model); tour, shortcuts or about the Help "
         "menu's windows")
      ->check(non_empty());
  cmd->add_option("--backend", opts->backend, "compute backend: cpu, opencl or auto")
      ->check(non_empty());
  cmd->add_option("--seq2seq-model", opts->seq2seq_model,
                  "open the seq2seq window on this model: a file or a shipped name ('seq2seq "
                  "models')")
      ->check(non_empty());
  CLI::Option* lesson = cmd->add_option("--lesson", opts->lesson,
                                        "open a lesson: a file or a built-in lesson's name "
                                        "('lessons')")
                            ->check(non_empty());
  // Without --lesson there is no step to open: a usage error, not a flag silently ignored.
  cmd->add_option("--lesson-step", opts->lesson_step,
                  "with --lesson: the step to open on (1-based)")
      ->check(CLI::Range(1, 100000))
      ->needs(lesson);
  auto* class_mode = cmd->add_flag("--class-mode", opts->class_mode,
                                   "start class mode: students answer the lesson's questions "
                                   "from their own browsers (View → Class mode)");
  cmd->add_option("--class-port", opts->class_port,
                  "with --class-mode: the port to serve on (default 8765; 0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->needs(class_mode);
  cmd->add_option("--class-bind", opts->class_bind,
                  "with --class-mode: the address to listen on (default 0.0.0.0, every network; "
                  "127.0.0.1: this computer only)")
      ->check(non_empty())
      ->needs(class_mode);
  cmd->add_option("--class-code", opts->class_code,
                  "with --class-mode: the session code students type (4 to 16 letters or digits; "
                  "default: four random digits)")
      ->needs(class_mode);
  cmd->add_flag("--frame-stats", opts->frame_stats,
                "render --frames frames, print the mean and max frame time, exit");
  cmd->add_flag("--animate", opts->animate,
                "zoom and pan the heatmap every frame (with --frame-stats)");
  cmd->add_option("--edit-stats", opts->edit_stats,
                  "with --frame-stats: edit q[0][0][0] N times, each once the last one's result "
                  "is drawn, and print the time from each edit to the frame that shows it")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--debug", opts->debug,
                "show the Debug menu (ImGui demo and metrics windows); so does ATTN_DEBUG=1");
  cmd->add_flag("--no-animation", opts->no_animation,
                "stage changes and edits do not animate (View menu: Animate changes)");
  cmd->add_option("--predict", opts->predict,
                  "start with a question on the stage: value (type the number of the selected "
                  "cell) or pick (the key with the most weight in the selected row)");
  cmd->add_option("--predict-scope", opts->predict_scope,
                  "what the question hides: cell, row or stage (default cell)");
  cmd->add_option("--guess", opts->guess,
                  "answer the --predict question and reveal it (a number, or a key's index)");
  cmd->add_option("--transition", opts->transition,
                  "show the change into --step from stage FROM frozen at progress P, FROM:P "
                  "(screenshots of the animation)");
  cmd->callback([&action, opts, src, size] {
    action = [opts, src, size] {
      GuiOptions o = *opts;
      if (!src->example.empty()) o.example = src->example;
      o.scenario_file = src->scenario_file;
      if (!src->model.empty()) {
        // --head picks the model's head; the stepper then shows that one head.
        o.model = src->model;
        o.text = src->text;
        o.layer = src->layer;
        o.model_head = o.head;
        o.head = 0;
      }
      if (!size->empty()) {
        int w = 0, h = 0;
        char x = 0, extra = 0;
        if (std::sscanf(size->c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || x != 'x' ||
            w < 320 || h < 240 || w > 16384 || h > 16384)
          throw CliError{kExitUsage,
                         "--size: expected WxH with W >= 320 and H >= 240, got '" + *size + "'"};
        o.width = w;
        o.height = h;
        o.size_given = true;
      }
      return run_gui(o);
    };
  });
}

Action default_action() {
  return [] { return run_gui(GuiOptions{}); };
}

void configure_app(CLI::App& app, Action& action) {
  app.description("Attention Lab: step through the attention mechanism, stage by stage.");
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", std::string("attention-lab ") + ATTN_VERSION,
                       "Print the version and exit");
  app.require_subcommand(0, 1);
  register_examples(app, action);
  register_trace(app, action);
  register_explain(app, action);
  register_compute(app, action);
  register_export(app, action);
  register_gui(app, action);
  register_seq2seq(app, action);
  register_bench(app, action);
  register_worksheet(app, action);
  register_lm(app, action);
  register_lessons(app, action);
  register_experiment(app, action);
  // Every floating-point flag of every subcommand: finite (docs/robustness.md).
  require_finite_floats(app);
}

namespace {

// A standard output that was closed before the program started: its descriptor is given
// /dev/full, so no file the command opens lands on descriptor 1 (and receives the output), and a
// write to it fails as a write to a closed output should.
bool hold_closed_stdout() {
  if (fcntl(STDOUT_FILENO, F_GETFD) != -1 || errno != EBADF) return false;
  const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd >= 0 && fd != STDOUT_FILENO) {
    dup2(fd, STDOUT_FILENO);
    close(fd);
  }
  return true;
}

// Whether everything written to standard output (printf and std::cout alike: they share stdio's
// buffer) reached it; the output is flushed first, so a full disk shows here.
std::string stdout_error(bool closed) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  int err = flushed ? 0 : errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return "";
  if (closed) return "cannot write to standard output: it is closed";
  // The write that failed was an earlier one (stdio flushes as its buffer fills) and its errno is
  // gone: one byte more, to an output already broken, says why.
  if (err == 0 && ::write(STDOUT_FILENO, "\n", 1) < 0) err = errno;
  return std::string("cannot write to standard output: ") +
         (err ? std::strerror(err) : "write failed");
}

int run_action(CLI::App& app, Action& action, int argc, char** argv) {
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      print_error(e.what());
      return kExitUsage;
    }
    if (!action) action = default_action();
    return action();
  } catch (const CliError& e) {
    print_error(e.message);
    return e.code;
  } catch (const InvalidScenario& e) {  // the input's fault, as every other input error
    print_error(e.what());
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return kExitRuntime;
  } catch (const std::exception& e) {
    print_error(e.what());
    return kExitRuntime;
  }
}

}  // namespace

// Every command's standard output is checked once here, after it has run: a write that failed
// (closed, full disk) is exit 1 with the reason, whichever command wrote (docs/robustness.md).
int run(int argc, char** argv) {
  const bool closed = hold_closed_stdout();
  CLI::App app{"", "attention-lab"};
  Action action;
  configure_app(app, action);
  const int code = run_action(app, action, argc, argv);
  const std::string error = stdout_error(closed);
  if (!error.empty() && code == 0) {
    print_error(error);
    return kExitRuntime;
  }
  return code;
}

int OutputFiles::add(const std::string& flag, const std::string& path) {
  std::string error;
  const int index = files_.add(path, error);
  if (index < 0) {
    // Name the other flag when two outputs are the same file.
    for (size_t i = 0; i < flags_.size(); ++i) {
      const std::string other = "'" + files_.path(static_cast<int>(i)) + "', another output";
      const size_t at = error.find(other);
      if (at != std::string::npos)
        error.replace(at, other.size(),
                      "the " + flags_[i] + " file '" + files_.path(static_cast<int>(i)) + "'");
    }
    throw CliError{kExitUsage, flag + ": " + error};
  }
  flags_.push_back(flag);
  return index;
}

void OutputFiles::write(int index, const void* data, size_t size) {
  std::string error;
  if (!files_.write(index, data, size, error))
    throw CliError{kExitRuntime, flags_[static_cast<size_t>(index)] + ": " + error};
}

void OutputFiles::write(int index, const std::string& bytes) {
  write(index, bytes.data(), bytes.size());
}

void OutputFiles::commit() {
  std::string error;
  if (files_.commit(error)) return;
  // The error names the file; put its flag in front.
  for (size_t i = 0; i < flags_.size(); ++i)
    if (error.find("'" + files_.path(static_cast<int>(i)) + "'") != std::string::npos)
      throw CliError{kExitRuntime, flags_[i] + ": " + error};
  throw CliError{kExitRuntime, error};
}

ImageFormat image_format_or_throw(const std::string& path, const std::string& flag) {
  const std::optional<ImageFormat> format = image_format_of(path);
  if (!format) throw CliError{kExitUsage, flag + ": " + image_format_error(path)};
  return *format;
}

void render_image_or_throw(OutputFiles& out, int index, const std::string& path,
                           const std::string& flag, const RenderImage& render) {
  std::string bytes, error;
  if (!render(image_format_or_throw(path, flag), bytes, error))
    throw CliError{kExitRuntime, flag + ": " + error};
  out.write(index, bytes);
}

void print_error(const std::string& message) {
  // One line: a newline inside a message can only come from a file name, token or alphabet, and
  // is escaped with the other control characters.
  std::cerr << "error: " << printable_text(message) << "\n";
}

}  // namespace attn::cli
