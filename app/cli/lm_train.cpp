// `attention-lab lm train`: trains a small GPT-2 or Llama-style model on the induction task or on
// text (core/lm/trainer)
// with a progress bar and the figures of every interval (and on --eval-corpus), a checkpoint folder
// after each interval and on Ctrl+C, and `--resume DIR` to continue a stopped run
// (lm/train_checkpoint.h).
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attention/format.h"
#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "lm/corpus_eval.h"
#include "lm/head_trace.h"
#include "lm/stories.h"
#include "lm/train_checkpoint.h"
#include "lm/train_limits.h"
#include "lm/trainer.h"

namespace attn::cli {

namespace {

struct TrainArgs {
  std::string data = "induction", corpus, out, schedule = "cosine", arch = "gpt2";
  int merges = 400, stories = 3000;
  int repeat_min = 0, repeat_max = 0;  // induction: the repeated segment's length (0: default)
  double repeat_share = 0;             // text: windows with a span repeated (lm::repeat_span)
  double copy_share = 0;               // text: scrambled windows with a span repeated
  int copy_vocab = 0;                  // their tokens: the N most frequent only (0: all)
  std::string eval_corpus;             // held-out text for figures at every interval
  std::string resume;                  // --resume DIR: continue the run that wrote DIR
  uint64_t corpus_hash = 0;            // FNV-1a of --corpus's bytes, checked on resume
  uint64_t eval_corpus_hash = 0;
  lm::TrainOptions o;
  CLI::App* cmd = nullptr;  // to tell which flags were given
};

// The corpus against the training memory limit before it is read or written
// (lm/train_limits.h): a file by its size, the stories by counting their bytes.
void check_corpus_size(const TrainArgs& a, const lm::TrainOptions& o) {
  if (a.data != "text" && a.data != "stories") return;
  double bytes = 0;
  std::string what;
  if (a.data == "stories") {
    bytes = static_cast<double>(lm::stories_bytes(a.stories, o.seed));
    what = "--stories: " + std::to_string(a.stories) + " stories";
  } else {
    struct stat st {};
    if (a.corpus.empty() || ::stat(a.corpus.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    bytes = static_cast<double>(st.st_size);  // reading it says what else is wrong
    what = "--corpus: " + a.corpus;
  }
  if (std::string e = lm::check_corpus_memory(o, 256 + a.merges + 1, bytes, what); !e.empty())
    throw CliError{kExitUsage, e};
}

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string head_name(const lm::Config& c, int i) {
  return "L" + std::to_string(i / c.n_head) + "H" + std::to_string(i % c.n_head);
}

std::string bar(long done, long total, int width) {
  const long n = total > 0 ? done * width / total : width;
  return "[" + std::string(static_cast<size_t>(n), '#') +
         std::string(static_cast<size_t>(width - n), '.') + "]";
}

// The command line that reproduces this run (defaults spelled out), for training.json.
std::string command_of(const TrainArgs& a) {
  const lm::TrainOptions& o = a.o;
  std::ostringstream s;
  s << "attention-lab lm train --data " << a.data;
  if (a.data == "text") s << " --corpus " << a.corpus;
  if (a.data == "stories") s << " --stories " << a.stories;
  if (a.data != "induction") s << " --merges " << a.merges;
  if (a.repeat_min) s << " --repeat-min " << a.repeat_min;
  if (a.repeat_max) s << " --repeat-max " << a.repeat_max;
  if (a.repeat_share > 0) s << " --repeat-share " << a.repeat_share;
  if (a.copy_share > 0) s << " --copy-share " << a.copy_share;
  if (a.copy_vocab > 0) s << " --copy-vocab " << a.copy_vocab;
  if (o.arch != LmArch::kGpt2)
    s << " --arch " << a.arch << " --kv-heads " << (o.n_kv_head ? o.n_kv_head : o.n_head)
      << " --rope-theta " << o.rope_theta;
  s << " --layers " << o.n_layer << " --heads " << o.n_head << " --embd " << o.n_embd
    << " --context " << o.context << (o.attention_only ? " --attention-only" : "") << " --batch "
    << o.batch << " --steps " << o.steps << " --lr " << o.lr << " --warmup " << o.warmup
    << " --schedule " << a.schedule << " --min-lr " << o.min_lr_ratio << " --weight-decay "
    << o.weight_decay << " --init-std " << o.init_std;
  if (o.shape_previous > 0)
    s << " --shape-previous " << o.shape_previous << " --shape-steps " << o.shape_steps;
  s << " --seed " << o.seed << " --threads " << o.threads << " --eval-every " << o.eval_every;
  if (!a.eval_corpus.empty()) s << " --eval-corpus " << a.eval_corpus;
  s << " --out " << a.out;
  return s.str();
}

void check_args(TrainArgs& a) {
  lm::TrainOptions& o = a.o;
  if (!lm::parse_lr_schedule(a.schedule, o.schedule))
    throw CliError{kExitUsage,
                   "--schedule: expected cosine, linear or constant, got '" + a.schedule + "'"};
  // The options' fields by the flags that set them.
  if (a.arch != "gpt2" && a.arch != "llama" && a.arch != "qwen2")
    throw CliError{kExitUsage, "--arch: expected gpt2, llama or qwen2, got '" + a.arch + "'"};
  o.arch = a.arch == "llama" ? LmArch::kLlama : a.arch == "qwen2" ? LmArch::kQwen2 : LmArch::kGpt2;
  const FieldNames flags = {{"n_layer", "--layers"},
                            {"n_head", "--heads"},
                            {"n_kv_head", "--kv-heads"},
                            {"arch", "--arch"},
                            {"rope_theta", "--rope-theta"},
                            {"n_embd", "--embd"},
                            {"context", "--context"},
                            {"batch", "--batch"},
                            {"steps", "--steps"},
                            {"warmup", "--warmup"},
                            {"lr", "--lr"},
                            {"min_lr_ratio", "--min-lr"},
                            {"weight_decay", "--weight-decay"},
                            {"threads", "--threads"},
                            {"eval_every", "--eval-every"},
                            {"init_std", "--init-std"},
                            {"shape_previous", "--shape-previous"},
                            {"shape_steps", "--shape-steps"},
                            {"repeat_min", "--repeat-min"},
                            {"repeat_max", "--repeat-max"}};
  if (const std::string e = lm::check_train_options(o); !e.empty())
    throw CliError{kExitUsage, name_fields(e, flags)};
  if (a.data != "induction" && (a.repeat_min || a.repeat_max))
    throw CliError{kExitUsage, "--repeat-min/--repeat-max: only with --data induction"};
  if (const std::string e = lm::check_repeat_range(a.repeat_min, a.repeat_max, o.context);
      !e.empty())
    throw CliError{kExitUsage, name_fields(e, flags)};
  if (a.data == "induction" && a.repeat_share > 0)
    throw CliError{kExitUsage, "--repeat-share: only with --data text or stories"};
  if (a.data == "induction" && a.copy_share > 0)
    throw CliError{kExitUsage, "--copy-share: only with --data text or stories"};
  if (a.copy_vocab > 0 && a.copy_share <= 0)
    throw CliError{kExitUsage, "--copy-vocab: only with --copy-share"};
  if (a.data != "text" && !a.corpus.empty())
    throw CliError{kExitUsage, "--corpus: only with --data text"};
  // Fail now, not after the first interval, when the folder cannot be written; but create it
  // only when the first checkpoint is complete (save_model's NewFolder, docs/robustness.md): a
  // corpus that cannot be read, a run too large or Ctrl+C before then leaves no folder.
  if (const std::string e = check_output_folder(a.out); !e.empty())
    throw CliError{kExitUsage, "--out: " + e};
  {  // Too large for memory, before anything is read: the vocabulary at its largest.
    const int vocab =
        a.data == "induction" ? lm::induction_set().tokenizer.size() : 256 + a.merges + 1;
    if (const std::string e = lm::check_train_memory(o, vocab); !e.empty())
      throw CliError{kExitUsage, "--layers/--heads/--embd/--context/--batch: " + e};
  }
  check_corpus_size(a, o);
}

// The data set of the run, and what it is for the first line. On resume the corpus must be the one
// the run started on (its bytes' FNV-1a).
lm::TrainSet make_set(TrainArgs& a, std::string& what) {
  const lm::TrainOptions& o = a.o;
  lm::TrainSet set;
  if (a.data == "induction") {
    set = lm::induction_set();
    set.repeat_min = a.repeat_min;
    set.repeat_max = a.repeat_max;
    what = "the induction task (random letters with a repeated segment)";
  } else if (a.data == "stories" || a.data == "text") {
    std::string corpus, error;
    if (a.data == "stories") {
      corpus = lm::write_stories(a.stories, o.seed);
      what = std::to_string(a.stories) + " stories written by the story grammar";
    } else {
      if (a.corpus.empty()) throw CliError{kExitUsage, "--corpus: required with --data text"};
      if (!read_regular_file(a.corpus, 256u << 20, corpus, error))
        throw CliError{kExitUsage, "--corpus: " + error};
      size_t bad = 0;
      if (!lm::valid_utf8(corpus, &bad))
        throw CliError{kExitUsage, "--corpus: " + a.corpus + " is not UTF-8 (byte " +
                                       std::to_string(bad) + ")"};
      what = printable_text(a.corpus);
    }
    const uint64_t h = lm::fnv1a64(corpus);
    if (a.corpus_hash != 0 && h != a.corpus_hash)
      throw CliError{kExitUsage, "--corpus: " + printable_text(a.corpus) +
                                     " has changed since the run started"};
    a.corpus_hash = h;
    if (!lm::text_set(corpus, a.merges, o.context, set, error))
      throw CliError{kExitUsage, (a.data == "text" ? "--corpus: " : "--stories: ") + error};
    set.repeat_share = a.repeat_share;
    set.copy_share = a.copy_share;
    if (a.copy_vocab > 0) set.copy_pool = lm::most_frequent_tokens(set.train, a.copy_vocab);
    what += " (" + std::to_string(set.train.size() + set.heldout.size()) + " tokens, " +
            std::to_string(set.tokenizer.merges().size()) + " merges learned)";
  } else {
    throw CliError{kExitUsage, "--data: expected induction, stories or text, got '" + a.data + "'"};
  }
  return set;
}

// The run's options as checkpoint.bin keeps them (every flag, the corpora by absolute path and
// FNV-1a), and back: --resume continues with exactly the options the run started with.
std::string run_json(const TrainArgs& a) {
  const lm::TrainOptions& o = a.o;
  const nlohmann::ordered_json j = {{"data", a.data},
                                    {"corpus", a.corpus},
                                    {"corpus_fnv1a", a.corpus_hash},
                                    {"eval_corpus", a.eval_corpus},
                                    {"eval_corpus_fnv1a", a.eval_corpus_hash},
                                    {"merges", a.merges},
                                    {"stories", a.stories},
                                    {"repeat_min", a.repeat_min},
                                    {"repeat_max", a.repeat_max},
                                    {"repeat_share", a.repeat_share},
                                    {"copy_share", a.copy_share},
                                    {"copy_vocab", a.copy_vocab},
                                    {"schedule", a.schedule},
                                    {"arch", a.arch},
                                    {"n_layer", o.n_layer},
                                    {"n_head", o.n_head},
                                    {"n_kv_head", o.n_kv_head},
                                    {"rope_theta", o.rope_theta},
                                    {"n_embd", o.n_embd},
                                    {"context", o.context},
                                    {"attention_only", o.attention_only},
                                    {"init_std", o.init_std},
                                    {"batch", o.batch},
                                    {"steps", o.steps},
                                    {"warmup", o.warmup},
                                    {"lr", o.lr},
                                    {"min_lr_ratio", o.min_lr_ratio},
                                    {"weight_decay", o.weight_decay},
                                    {"clip", o.clip},
                                    {"shape_previous", o.shape_previous},
                                    {"shape_steps", o.shape_steps},
                                    {"seed", o.seed},
                                    {"threads", o.threads},
                                    {"eval_every", o.eval_every},
                                    {"heldout_sequences", o.heldout_sequences},
                                    {"probe_sequences", o.probe_sequences}};
  return j.dump();
}

void args_from_run_json(const std::string& text, TrainArgs& a) {
  lm::TrainOptions& o = a.o;
  const nlohmann::json j = nlohmann::json::parse(text);
  lm::read_json_field(j, "data", a.data);
  lm::read_json_field(j, "corpus", a.corpus);
  lm::read_json_field(j, "corpus_fnv1a", a.corpus_hash);
  lm::read_json_field(j, "eval_corpus", a.eval_corpus);
  lm::read_json_field(j, "eval_corpus_fnv1a", a.eval_corpus_hash);
  lm::read_json_field(j, "merges", a.merges);
  lm::read_json_field(j, "stories", a.stories);
  lm::read_json_field(j, "repeat_min", a.repeat_min);
  lm::read_json_field(j, "repeat_max", a.repeat_max);
  lm::read_json_field(j, "repeat_share", a.repeat_share);
  if (j.contains("copy_share"))
    lm::read_json_field(j, "copy_share", a.copy_share);  // since 2026-11
  if (j.contains("copy_vocab")) lm::read_json_field(j, "copy_vocab", a.copy_vocab);
  lm::read_json_field(j, "schedule", a.schedule);
  lm::read_json_field(j, "arch", a.arch);
  lm::read_json_field(j, "n_layer", o.n_layer);
  lm::read_json_field(j, "n_head", o.n_head);
  lm::read_json_field(j, "n_kv_head", o.n_kv_head);
  lm::read_json_field(j, "rope_theta", o.rope_theta);
  lm::read_json_field(j, "n_embd", o.n_embd);
  lm::read_json_field(j, "context", o.context);
  lm::read_json_field(j, "attention_only", o.attention_only);
  lm::read_json_field(j, "init_std", o.init_std);
  lm::read_json_field(j, "batch", o.batch);
  lm::read_json_field(j, "steps", o.steps);
  lm::read_json_field(j, "warmup", o.warmup);
  lm::read_json_field(j, "lr", o.lr);
  lm::read_json_field(j, "min_lr_ratio", o.min_lr_ratio);
  lm::read_json_field(j, "weight_decay", o.weight_decay);
  lm::read_json_field(j, "clip", o.clip);
  if (j.contains("shape_previous")) {  // since 2026-11-29
    lm::read_json_field(j, "shape_previous", o.shape_previous);
    lm::read_json_field(j, "shape_steps", o.shape_steps);
  }
  lm::read_json_field(j, "seed", o.seed);
  lm::read_json_field(j, "threads", o.threads);
  lm::read_json_field(j, "eval_every", o.eval_every);
  lm::read_json_field(j, "heldout_sequences", o.heldout_sequences);
  lm::read_json_field(j, "probe_sequences", o.probe_sequences);
}

std::string absolute_path(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) + "/" + path : path;
}

// --resume DIR: the checkpoint and the options of the run that wrote it (no other flag may be
// given: the run continues as it started).
lm::TrainCheckpoint read_resume(TrainArgs& a) {
  for (const CLI::Option* opt : a.cmd->get_options())
    if (opt->count() > 0 && opt->get_name() != "--resume" && opt->get_name() != "--help")
      throw CliError{kExitUsage, "--resume: continues the run with the options it started with; " +
                                     opt->get_name() + " cannot be given with it"};
  const std::string path = a.resume + "/" + lm::kCheckpointFile;
  std::string bytes, error;
  if (!read_regular_file(path, size_t{8} << 30, bytes, error))
    throw CliError{kExitUsage, "--resume: " + error};
  lm::TrainCheckpoint c;
  if (!lm::parse_checkpoint(bytes, c, error))
    throw CliError{kExitUsage, "--resume: " + printable_text(path) + ": " + error};
  try {
    args_from_run_json(c.run, a);
  } catch (const std::exception& e) {
    throw CliError{kExitUsage,
                   "--resume: " + printable_text(path) + ": the run's options: " + e.what()};
  }
  a.out = a.resume;
  return c;
}

// --eval-corpus: the held-out text's tokens in the run's vocabulary (at least 2).
std::vector<int> eval_corpus_ids(TrainArgs& a, const lm::Tokenizer& t) {
  if (a.eval_corpus.empty()) return {};
  std::string text, error;
  if (!read_regular_file(a.eval_corpus, 256u << 20, text, error))
    throw CliError{kExitUsage, "--eval-corpus: " + error};
  const uint64_t h = lm::fnv1a64(text);
  if (a.eval_corpus_hash != 0 && h != a.eval_corpus_hash)
    throw CliError{kExitUsage, "--eval-corpus: " + printable_text(a.eval_corpus) +
                                   " has changed since the run started"};
  a.eval_corpus_hash = h;
  size_t bad = 0;
  if (!lm::valid_utf8(text, &bad))
    throw CliError{kExitUsage, "--eval-corpus: " + printable_text(a.eval_corpus) +
                                   " is not UTF-8 (byte " + std::to_string(bad) + ")"};
  std::vector<int> ids;
  if (!t.encode(text, ids, error)) throw CliError{kExitUsage, "--eval-corpus: " + error};
  if (ids.size() < 2)
    throw CliError{kExitUsage, "--eval-corpus: " + printable_text(a.eval_corpus) + " has " +
                                   std::to_string(ids.size()) +
                                   " tokens; at least 2 are needed for a prediction"};
  return ids;
}

bool write_checkpoint(const TrainArgs& a, const lm::Model& m, const lm::TrainState& state,
                      const std::vector<lm::EvalPoint>& history, std::string& error) {
  lm::TrainCheckpoint c;
  c.run = run_json(a);
  c.state = state;
  c.params.assign(m.params.memory.begin(), m.params.memory.end());
  c.history = history;
  return write_file_atomically(a.out + "/" + lm::kCheckpointFile, lm::checkpoint_bytes(c), error);
}

// "1234 tokens/s, " for `steps` steps of batch × context tokens in `time`; "" for none.
std::string tokens_per_second(long steps, const lm::TrainOptions& o,
                              std::chrono::steady_clock::duration time) {
  const double s = std::chrono::duration<double>(time).count();
  if (steps <= 0 || s <= 0) return "";
  return format("%.0f tokens/s, ", static_cast<double>(steps) * o.batch * o.context / s);
}

std::string eval_line(const lm::EvalPoint& e) {
  char line[200];
  std::snprintf(line, sizeof line,
                "    eval-corpus  loss %.4f  perplexity %.2f  top-1 %.1f%%  top-5 %.1f%%  "
                "(%ld tokens)",
                e.eval_loss, std::exp(e.eval_loss), 100 * e.eval_top1, 100 * e.eval_top5,
                e.eval_tokens);
  return line;
}

int run_train(TrainArgs& a) {
  lm::TrainCheckpoint resumed;
  if (!a.resume.empty()) {
    resumed = read_resume(a);
  } else {
    if (a.out.empty()) throw CliError{kExitUsage, "--out: required (or --resume DIR)"};
    a.corpus = absolute_path(a.corpus);
    a.eval_corpus = absolute_path(a.eval_corpus);
  }
  check_args(a);
  lm::TrainOptions& o = a.o;
  if (!a.resume.empty() && resumed.state.step >= o.steps) {
    std::cout << printable_text(a.out) << ": the run is complete (" << resumed.state.step << " of "
              << o.steps << " steps); nothing to resume\n";
    return kExitOk;
  }
  std::string what;
  const lm::TrainSet set = make_set(a, what);
  lm::Model model = lm::new_training_model(o, set);
  const std::vector<int> eval_ids = eval_corpus_ids(a, model.tokenizer);
  lm::TrainState state;
  std::vector<lm::EvalPoint> history;
  if (!a.resume.empty()) {
    if (resumed.params.size() != model.params.memory.size())
      throw CliError{kExitUsage, "--resume: the checkpoint holds " +
                                     std::to_string(resumed.params.size()) +
                                     " weights, the run's model has " +
                                     std::to_string(model.params.memory.size())};
    std::copy(resumed.params.begin(), resumed.params.end(), model.params.memory.begin());
    if (model.config.llama_family()) lm::llama_weights_from_params(model);
    state = std::move(resumed.state);
    history = std::move(resumed.history);
  }
  model.name = a.out;
  const lm::Config& c = model.config;
  const std::string command = command_of(a);
  std::string heads = std::to_string(c.n_head) + " heads";
  if (c.llama_family())
    heads = std::to_string(c.n_head) + " query heads sharing " + std::to_string(c.kv_heads()) +
            " K/V heads, RoPE, RMSNorm" + (c.qkv_bias ? ", q/k/v biases" : "") +
            (o.attention_only ? "" : ", SwiGLU");
  std::cout << "training a " << c.n_layer << "-layer "
            << (o.attention_only ? "attention-only " : "")
            << (c.arch == LmArch::kQwen2 ? "Qwen2-style "
                : c.llama_family()       ? "Llama-style "
                                         : "")
            << "transformer (" << heads << ", n_embd " << c.n_embd << ", context " << c.n_positions
            << ", vocabulary " << c.vocab_size << ", " << model.params.total() << " parameters) on "
            << what << ": " << o.steps << " steps of " << o.batch << " sequences, AdamW lr " << o.lr
            << " (warm-up " << o.warmup << ", " << a.schedule << "), seed " << o.seed << ", "
            << o.threads << (o.threads == 1 ? " thread\n" : " threads\n");
  if (o.shape_previous > 0)
    std::cout << "attention shaping: layer 0's head 0 pulled toward the previous token (weight "
              << o.shape_previous << ") for the first " << o.shape_steps << " steps\n";
  std::cout << std::flush;

  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const InterruptGuard interrupt;
  lm::TrainCallbacks cb;
  cb.stop = interrupt.flag();
  std::string save_error;
  long saved_step = -1;
  auto save = [&](const lm::Model& m, long step) {
    std::string error;
    // checkpoint.bin last, each file atomically: whenever the run is stopped, the checkpoint
    // is whole, and resuming from it rewrites the rest.
    if (!lm::save_model(m, a.out, error) ||
        !write_file_atomically(a.out + "/training.json",
                               lm::training_json(command, c, step, o.steps, history), error) ||
        !write_checkpoint(a, m, state, history, error)) {
      if (save_error.empty()) save_error = error;
      return;
    }
    saved_step = step;
  };
  // Tokens per second of the steps alone (not the figures or the checkpoint): from the end of the
  // last report to the last step before this one.
  using Clock = std::chrono::steady_clock;
  Clock::time_point interval_start = Clock::now(), last_step = interval_start;
  long interval_first = state.step;
  cb.on_step = [&](long step, double loss, double) {
    last_step = Clock::now();
    if (!tty || (step % 5 != 0 && step != o.steps)) return;
    std::cerr << "\r" << bar(step, o.steps, 30) << " step " << step << "/" << o.steps << "  loss "
              << format("%.4f", loss) << std::flush;
  };
  cb.on_eval = [&](const lm::EvalPoint& point, const lm::Model& m, const lm::Activations&) {
    lm::EvalPoint e = point;
    if (!eval_ids.empty()) {
      const lm::CorpusFigures f = lm::corpus_eval(m, eval_ids, o.threads);
      e.eval_tokens = f.tokens;
      e.eval_loss = f.loss;
      e.eval_top1 = f.top1;
      e.eval_top5 = f.top5;
    }
    history.push_back(e);
    if (tty) std::cerr << "\r" << std::string(70, ' ') << "\r" << std::flush;
    const lm::HeadScores& ind = e.heads[static_cast<size_t>(e.best_induction)];
    const lm::HeadScores& prev = e.heads[static_cast<size_t>(e.best_previous)];
    char line[320];
    std::snprintf(line, sizeof line,
                  "step %*ld/%ld %s %3.0f%%  loss %.4f  held-out %.4f  in-context %5.1f%%  "
                  "induction %s %.2f  previous-token %s %.2f  (%s%.1f s)",
                  static_cast<int>(std::to_string(o.steps).size()), e.step, o.steps,
                  bar(e.step, o.steps, 20).c_str(), 100.0 * e.step / o.steps, e.train_loss,
                  e.heldout_loss, 100.0 * e.icl_accuracy, head_name(c, e.best_induction).c_str(),
                  ind.induction, head_name(c, e.best_previous).c_str(), prev.previous,
                  tokens_per_second(e.step - interval_first, o, last_step - interval_start).c_str(),
                  e.seconds);
    std::cout << line << std::endl;
    if (e.eval_tokens > 0) std::cout << eval_line(e) << std::endl;
    save(m, e.step);
    interval_start = last_step = Clock::now();
    interval_first = e.step;
  };
  if (state.step > 0)
    std::cout << "resuming at step " << state.step << " of " << o.steps << " ("
              << format("%.0f", state.seconds) << " s trained so far)" << std::endl;
  const long done = lm::train_lm(model, set, o, cb, state);
  if (tty) std::cerr << "\r" << std::string(70, ' ') << "\r" << std::flush;
  if (done < o.steps) save(model, done);  // the model after the last complete step
  if (!save_error.empty()) throw CliError{kExitRuntime, "--out: " + save_error};
  const lm::PhaseChange p = lm::detect_phase_change(history);
  if (p.found)
    std::printf(
        "phase change: in-context accuracy rose from %.1f%% to %.1f%% between steps %ld "
        "and %ld\n",
        100 * p.from, 100 * p.to, p.start, p.end);
  if (done < o.steps) {
    std::cerr << "interrupted: " << printable_text(a.out) << " holds the model after step "
              << saved_step << " of " << o.steps << "\n";
    return 130;
  }
  std::cout << "wrote " << printable_text(a.out)
            << (c.llama_family() ? " (config.json, model.safetensors, tokenizer.json, "
                                 : " (config.json, model.safetensors, vocab.json, merges.txt, ")
            << "training.json)\n";
  return kExitOk;
}

}  // namespace

void register_lm_train(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "train",
      "Train a small GPT-2 or Llama-style model (induction task or text) and write a model folder");
  auto a = std::make_shared<TrainArgs>();
  lm::TrainOptions& o = a->o;
  a->cmd = cmd;
  cmd->add_option("--out", a->out,
                  "the model folder to write (a checkpoint every interval); required unless "
                  "--resume");
  cmd->add_option("--resume", a->resume,
                  "continue the stopped run whose folder this is, from its checkpoint.bin, to its "
                  "--steps (no other flag: the run keeps its options)");
  cmd->add_option("--eval-corpus", a->eval_corpus,
                  "a held-out UTF-8 text: its loss, perplexity, top-1 and top-5 accuracy at every "
                  "interval (in the model's context windows)");
  cmd->add_option("--data", a->data,
                  "induction (random letters with a repeated segment), stories (the story "
                  "grammar's text) or text (--corpus)")
      ->capture_default_str();
  cmd->add_option("--corpus", a->corpus, "with --data text: a UTF-8 text file");
  cmd->add_option("--stories", a->stories, "with --data stories: how many stories")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--merges", a->merges, "BPE merges to learn from the text")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--repeat-min", a->repeat_min,
                  "with --data induction: the shortest repeated segment (default (context+1)/8)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--repeat-max", a->repeat_max,
                  "with --data induction: the longest repeated segment (default (context+1)/3; "
                  "at most (context+1)/2)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--repeat-share", a->repeat_share,
                  "with --data text or stories: the share of training windows in which a span "
                  "(context/16 to context/4 tokens) is written again later, at a varied distance, "
                  "so copying pays and induction heads form (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--copy-share", a->copy_share,
                  "with --data text or stories: the share of training windows made of tokens "
                  "drawn from random places in the text, with a span written again later, so only "
                  "copying predicts it: the pure induction signal (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--copy-vocab", a->copy_vocab,
                  "with --copy-share: those windows draw their tokens from the N most frequent "
                  "of the training text only (a first stage of a copying curriculum; default 0, "
                  "every token)")
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--arch", a->arch,
                  "gpt2 (learned positions, LayerNorm, GELU), llama (RoPE, RMSNorm, SwiGLU, "
                  "grouped-query attention; the output tied to the embedding) or qwen2 (llama "
                  "with biases on q, k and v)")
      ->capture_default_str();
  cmd->add_option(
         "--kv-heads", o.n_kv_head,
         "with --arch llama or qwen2: K/V heads shared by the query heads (a divisor of --heads; "
         "default --heads)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--rope-theta", o.rope_theta, "with --arch llama or qwen2: RoPE's base θ")
      ->check(finite_in(2.0, 1e9))
      ->capture_default_str();
  cmd->add_option("--layers", o.n_layer, "n_layer")
      ->check(CLI::Range(1, 48))
      ->capture_default_str();
  cmd->add_option("--heads", o.n_head, "n_head")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--embd", o.n_embd, "n_embd (a multiple of --heads)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--context", o.context, "tokens per sequence (n_positions)")
      ->check(CLI::Range(8, 4096))
      ->capture_default_str();
  cmd->add_flag("--attention-only", o.attention_only,
                "no MLP blocks (written as zero MLP weights, which GPT-2 loaders read)");
  cmd->add_option("--batch", o.batch, "sequences per step")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--steps", o.steps, "optimisation steps")
      ->check(CLI::Range(1L, 100000000L))
      ->capture_default_str();
  cmd->add_option("--lr", o.lr, "peak learning rate")
      ->check(finite_in(1e-7, 1.0))
      ->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "steps of linear warm-up")
      ->check(CLI::Range(0L, 100000000L))
      ->capture_default_str();
  cmd->add_option("--schedule", a->schedule, "after warm-up: cosine, linear or constant")
      ->capture_default_str();
  cmd->add_option("--min-lr", o.min_lr_ratio, "final learning rate as a fraction of --lr")
      ->check(finite_in(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay")
      ->check(finite_in(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--init-std", o.init_std,
                  "standard deviation of the initial weights (GPT-2's is 0.02)")
      ->check(finite_in(1e-4, 1.0))
      ->capture_default_str();
  cmd->add_option("--shape-previous", o.shape_previous,
                  "attention shaping: the weight of −ln w(t, t−1) of layer 0's head 0 in the loss "
                  "(with --shape-steps)")
      ->check(finite_in(0.0, 100.0));
  cmd->add_option("--shape-steps", o.shape_steps,
                  "the first steps that --shape-previous applies to")
      ->check(CLI::Range(0L, 100000000L));
  cmd->add_option("--seed", o.seed, "seed of the initialisation and the batches")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "threads (the result depends on it)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--eval-every", o.eval_every, "steps between figures and checkpoints")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  cmd->callback([&action, a] { action = [a] { return run_train(*a); }; });
}

}  // namespace attn::cli
