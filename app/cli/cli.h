// The command line: subcommands registered on one CLI11 app; exit codes and errors per cli.md.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "io/atomic_file.h"
#include "render/image_format.h"

namespace CLI {
class App;
}

namespace attn {
class Backend;
struct Scenario;
struct Lesson;
}  // namespace attn

namespace attn::cli {

// Exit codes of cli.md.
constexpr int kExitOk = 0;
constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

// Thrown by subcommands for an error that should end the program with `code` and print
// "error: <message>" on stderr.
struct CliError {
  int code;
  std::string message;
};

// Runs the program; never throws.
int run(int argc, char** argv);

// Every subcommand registers itself on `app` and sets `action` when it is chosen; the action
// runs after parsing and returns the exit code.
using Action = std::function<int()>;
// The whole command line on `app`: every subcommand, --help-all and --version (run() parses with
// it; a test checks docs/cli.md documents every option it has).
void configure_app(CLI::App& app, Action& action);

void register_examples(CLI::App& app, Action& action);
void register_trace(CLI::App& app, Action& action);
void register_explain(CLI::App& app, Action& action);
void register_compute(CLI::App& app, Action& action);
void register_export(CLI::App& app, Action& action);
void register_gui(CLI::App& app, Action& action);
void register_seq2seq(CLI::App& app, Action& action);
void register_bench(CLI::App& app, Action& action);
void register_worksheet(CLI::App& app, Action& action);
void register_lm(CLI::App& app, Action& action);
// `lm train`, registered on the `lm` subcommand (app/cli/lm_train.cpp).
void register_lm_train(CLI::App& lm, Action& action);
// `lm eval`, registered on the `lm` subcommand (app/cli/lm_eval.cpp).
void register_lm_eval(CLI::App& lm, Action& action);
// `lm curve`, registered on the `lm` subcommand (app/cli/lm_curve.cpp).
void register_lm_curve(CLI::App& lm, Action& action);
// --model's folder (lm::resolve_model_folder: a folder as given, else a shipped model's short
// name); exit 2 with the error naming --model when it is neither (app/cli/lm.cpp).
std::string lm_model_folder_or_throw(const std::string& arg);
void register_lessons(CLI::App& app, Action& action);
void register_experiment(CLI::App& app, Action& action);
// The action when no subcommand is given: the desktop app on the default example.
Action default_action();

// --example NAME | --scenario FILE | --model M --text T --layer L --head H, shared by trace,
// explain, export and gui.
struct ScenarioSource {
  std::string example;
  std::string scenario_file;
  std::string model;  // a GPT-2-format folder or a shipped model's name
  std::string text;
  int layer = 0;
  int head = 0;  // the model's head (explain, export and gui pass their --head here)
};
// Adds --example, --scenario, --model, --text and --layer (and --head for the model when
// `add_head`; commands with their own --head pass it on in ScenarioSource::head).
void add_scenario_options(CLI::App& cmd, ScenarioSource& src, bool required = true,
                          bool add_head = false);
// Loads the chosen scenario or throws CliError (exit 2) naming the file/field. With --model: the
// scenario of that head on the text (lm/head_trace.h).
Scenario load_scenario_source(const ScenarioSource& src);
// The scenario of --model's head on --text, or throws CliError (app/cli/lm.cpp).
Scenario load_model_head_scenario(const ScenarioSource& src);
// Throws exit 2 when the scenario's full trace would exceed kMaxTraceCells (attention/engine.h):
// for the commands that build the whole trace (trace, export).
void check_traceable(const Scenario& s);
// A lesson file, or a built-in lesson by name ("03-softmax"), read and checked; throws CliError
// (exit 2) naming the file, the step and the field (app/cli/worksheet.cpp).
Lesson load_lesson_or_throw(const std::string& name_or_path, const std::string& flag);
// The stage --step names, which the trace must hold; throws CliError (exit 2) listing the stages
// the trace has ("no stage 'X' in this trace; expected one of …").
StageId stage_in_trace_or_throw(const std::string& name, const AttentionTrace& trace);
// Creates the backend named by --backend or throws CliError (exit 2 for a bad name, 1 when
// the backend is unavailable).
std::unique_ptr<Backend> make_backend_or_throw(const std::string& name, int device = 0);

// The files one command writes, all of them or none (io/atomic_file.h). Every output is added
// before the work starts, so a path that cannot be written (no such folder; a directory, device
// or FIFO; a read-only file; the same file as another output) is exit 2 naming the flag before
// anything is computed. commit() puts every file in place at the end; a failure while writing or
// committing (disk full, I/O error) is exit 1. Either way nothing is replaced or left behind on
// failure, in every command alike.
class OutputFiles {
 public:
  // Returns the output's index; throws CliError.
  int add(const std::string& flag, const std::string& path);
  void write(int index, const std::string& bytes);
  void write(int index, const void* data, size_t size);
  void commit();

 private:
  std::vector<std::string> flags_;
  AtomicOutputs files_;
};

// Renders an image, choosing PNG, SVG or PDF by the extension, into an OutputFiles set (written
// atomically with the command's other outputs): it becomes output `index` (added by the caller).
// `flag` names the option in errors: an unknown extension or a path that cannot be written is
// exit 2; a render or write failure exit 1.
using RenderImage = std::function<bool(ImageFormat format, std::string& bytes, std::string& error)>;
void render_image_or_throw(OutputFiles& out, int index, const std::string& path,
                           const std::string& flag, const RenderImage& render);
// Checks the extension of an image path for `flag` (exit 2 when unknown).
ImageFormat image_format_or_throw(const std::string& path, const std::string& flag);

// `export --lesson NAME|FILE --html OUT.html` and `export --course --html DIR/`: a lesson (or every
// built-in lesson and an index.html) as self-contained web pages, written together or not at all
// (app/cli/export_html.cpp). Returns the exit code or throws CliError.
struct ExportHtmlArgs {
  std::string lesson, out;
  bool course = false;
};
int export_lesson_html(const ExportHtmlArgs& args);

// Prints an error the way cli.md asks: one line starting with "error: ", with control characters
// (newlines included, from file names, tokens, alphabets) escaped so nothing reaches the terminal
// raw.
void print_error(const std::string& message);

}  // namespace attn::cli
