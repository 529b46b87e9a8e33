// `attention-lab lm train`: trains a small GPT-2 or Llama-style model on the induction task or on
// text (core/lm/trainer)
// with a progress bar and the figures of every interval, a checkpoint folder after each interval
// and on Ctrl+C; `lm heads`: what each head of a model does on a text, and how often it copies.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "attention/format.h"
#include "cli/cli.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "lm/head_trace.h"
#include "lm/stories.h"
#include "lm/train_limits.h"
#include "lm/trainer.h"

namespace attn::cli {

namespace {

struct TrainArgs {
  std::string data = "induction", corpus, out, schedule = "cosine", arch = "gpt2";
  int merges = 400, stories = 3000;
  int repeat_min = 0, repeat_max = 0;  // induction: the repeated segment's length (0: default)
  lm::TrainOptions o;
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
  if (o.arch != LmArch::kGpt2)
    s << " --arch " << a.arch << " --kv-heads " << (o.n_kv_head ? o.n_kv_head : o.n_head)
      << " --rope-theta " << o.rope_theta;
  s << " --layers " << o.n_layer << " --heads " << o.n_head << " --embd " << o.n_embd
    << " --context " << o.context << (o.attention_only ? " --attention-only" : "") << " --batch "
    << o.batch << " --steps " << o.steps << " --lr " << o.lr << " --warmup " << o.warmup
    << " --schedule " << a.schedule << " --min-lr " << o.min_lr_ratio << " --weight-decay "
    << o.weight_decay << " --init-std " << o.init_std << " --seed " << o.seed << " --threads "
    << o.threads << " --eval-every " << o.eval_every << " --out " << a.out;
  return s.str();
}

int run_train(TrainArgs& a) {
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
                            {"repeat_min", "--repeat-min"},
                            {"repeat_max", "--repeat-max"}};
  if (const std::string e = lm::check_train_options(o); !e.empty())
    throw CliError{kExitUsage, name_fields(e, flags)};
  if (a.data != "induction" && (a.repeat_min || a.repeat_max))
    throw CliError{kExitUsage, "--repeat-min/--repeat-max: only with --data induction"};
  if (const std::string e = lm::check_repeat_range(a.repeat_min, a.repeat_max, o.context);
      !e.empty())
    throw CliError{kExitUsage, name_fields(e, flags)};
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
  lm::TrainSet set;
  std::string what;
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
    if (!lm::text_set(corpus, a.merges, o.context, set, error))
      throw CliError{kExitUsage, (a.data == "text" ? "--corpus: " : "--stories: ") + error};
    what += " (" + std::to_string(set.train.size() + set.heldout.size()) + " tokens, " +
            std::to_string(set.tokenizer.merges().size()) + " merges learned)";
  } else {
    throw CliError{kExitUsage, "--data: expected induction, stories or text, got '" + a.data + "'"};
  }
  lm::Model model = lm::new_training_model(o, set);
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
            << o.threads << (o.threads == 1 ? " thread\n" : " threads\n") << std::flush;

  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const InterruptGuard interrupt;
  lm::TrainCallbacks cb;
  cb.stop = interrupt.flag();
  std::vector<lm::EvalPoint> history;
  std::string save_error;
  long saved_step = -1;
  auto save = [&](const lm::Model& m, long step) {
    std::string error;
    if (!lm::save_model(m, a.out, error) ||
        !write_file_atomically(a.out + "/training.json",
                               lm::training_json(command, c, step, o.steps, history), error)) {
      if (save_error.empty()) save_error = error;
      return;
    }
    saved_step = step;
  };
  cb.on_step = [&](long step, double loss, double) {
    if (!tty || (step % 5 != 0 && step != o.steps)) return;
    std::cerr << "\r" << bar(step, o.steps, 30) << " step " << step << "/" << o.steps << "  loss "
              << format("%.4f", loss) << std::flush;
  };
  cb.on_eval = [&](const lm::EvalPoint& e, const lm::Model& m, const lm::Activations&) {
    history.push_back(e);
    if (tty) std::cerr << "\r" << std::string(70, ' ') << "\r" << std::flush;
    const lm::HeadScores& ind = e.heads[static_cast<size_t>(e.best_induction)];
    const lm::HeadScores& prev = e.heads[static_cast<size_t>(e.best_previous)];
    char line[320];
    std::snprintf(line, sizeof line,
                  "step %*ld/%ld %s %3.0f%%  loss %.4f  held-out %.4f  in-context %5.1f%%  "
                  "induction %s %.2f  previous-token %s %.2f  (%.1f s)",
                  static_cast<int>(std::to_string(o.steps).size()), e.step, o.steps,
                  bar(e.step, o.steps, 20).c_str(), 100.0 * e.step / o.steps, e.train_loss,
                  e.heldout_loss, 100.0 * e.icl_accuracy, head_name(c, e.best_induction).c_str(),
                  ind.induction, head_name(c, e.best_previous).c_str(), prev.previous, e.seconds);
    std::cout << line << std::endl;
    save(m, e.step);
  };
  const long done = lm::train_lm(model, set, o, cb);
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
  cmd->add_option("--out", a->out, "the model folder to write (a checkpoint every interval)")
      ->required();
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
