// `attention-lab lm`: GPT-2-format models on the command line: the tokens of a text, every
// layer's and head's attention weights, the next-token distribution, and a speed benchmark; and
// the scenario of one real head for trace, explain and export (--model).
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include "attention/format.h"
#include "attention/scenario.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/atomic_file.h"
#include "io/llama_config.h"
#include "io/mapped_file.h"
#include "io/npy.h"
#include "lm/forward.h"
#include "lm/generate.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "lm/rollout.h"
#include "lm/trainer.h"

namespace attn::cli {

std::string lm_model_folder_or_throw(const std::string& arg) {
  std::string error;
  const std::string folder = lm::resolve_model_folder(arg, error);
  if (folder.empty()) throw CliError{kExitUsage, name_fields(error, {{"model", "--model"}})};
  return folder;
}

namespace {

lm::Model load_model_or_throw(const std::string& arg) {
  const std::string folder = lm_model_folder_or_throw(arg);
  std::string error;
  lm::Model m;
  if (!lm::load_model(folder, m, error)) throw CliError{kExitUsage, error};
  return m;
}

std::vector<int> tokenize_or_throw(const lm::Model& m, const std::string& text) {
  size_t bad = 0;
  if (!lm::valid_utf8(text, &bad))
    throw CliError{kExitUsage, "--text: not valid UTF-8 (byte " + std::to_string(bad) + ")"};
  if (text.empty()) throw CliError{kExitUsage, "--text: empty; give at least one character"};
  std::vector<int> ids;
  std::string error;
  if (!m.tokenizer.encode(text, ids, error)) throw CliError{kExitUsage, "--text: " + error};
  if (static_cast<int>(ids.size()) > m.config.n_positions)
    throw CliError{kExitUsage, "--text: " + std::to_string(ids.size()) +
                                   " tokens, more than the model's n_positions = " +
                                   std::to_string(m.config.n_positions)};
  return ids;
}

struct Run {
  lm::Model model;
  std::vector<int> ids;
  lm::Activations acts;
};

// What a command keeps beside the forward pass's activations, counted against the same limit
// (lm/forward.h's kMaxForwardBytes): bytes per attention weight (L·NH·n² of them) and per cell
// of a layer's (n, n) matrix (L·n²).
struct Extra {
  double per_weight = 0, per_layer_cell = 0;
};

std::unique_ptr<Run> run_model(const std::string& model, const std::string& text, bool all_logits,
                               Extra extra = {}) {
  auto r = std::make_unique<Run>();
  r->model = load_model_or_throw(model);
  r->ids = tokenize_or_throw(r->model, text);
  lm::ForwardOptions o;
  o.all_logits = all_logits;
  const lm::Config& c = r->model.config;
  const int T = static_cast<int>(r->ids.size());
  const double cells = static_cast<double>(c.n_layer) * T * T;
  // Too large (checked before anything is allocated) or overflowing float32: exit 2, and
  // nothing computed from the pass is printed or written.
  if (std::string e =
          lm::checked_forward(r->model, r->ids, 1, T, r->acts, o,
                              extra.per_weight * cells * c.n_head + extra.per_layer_cell * cells);
      !e.empty())
    throw CliError{kExitUsage, r->model.name + ": " + e};
  return r;
}

// A token as vocab.json spells it, for the terminal: control characters (ESC, newline, tab, …)
// and bytes that are not UTF-8 escaped as \xHH (docs/robustness.md), so a token cannot move the
// cursor, recolour or clear the terminal, or break the ID<TAB>TOKEN lines.
std::string vocab_spelling(const lm::Tokenizer& t, int id) {
  const std::string& s = t.token(id);
  return s.empty() ? "<no token " + std::to_string(id) + ">" : printable_text(s);
}

struct LmArgs {
  std::string model, text, out, logits;
  int top = 10;
  double temperature = 1.0;
};

void add_model_text(CLI::App& cmd, LmArgs& a) {
  cmd.add_option("--model", a.model, "GPT-2-format model folder or a shipped model's name")
      ->required()
      ->check(non_empty());
  cmd.add_option("--text", a.text, "the text (UTF-8)")->required();
}

void register_tokens(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand("tokens", "The text's tokens, one per line: ID<TAB>TOKEN");
  auto a = std::make_shared<LmArgs>();
  add_model_text(*cmd, *a);
  cmd->callback([&action, a] {
    action = [a] {
      const lm::Model m = load_model_or_throw(a->model);
      for (int id : tokenize_or_throw(m, a->text))
        std::cout << id << '\t' << vocab_spelling(m.tokenizer, id) << '\n';
      return kExitOk;
    };
  });
}

void register_attention(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "attention", "Every layer's and head's attention weights as (n_layer, n_head, n, n) .npy");
  auto a = std::make_shared<LmArgs>();
  add_model_text(*cmd, *a);
  cmd->add_option("--out", a->out, "output .npy file")->required();
  cmd->callback([&action, a] {
    action = [a] {
      OutputFiles files;  // checked before the model runs (cli.h)
      const int index = files.add("--out", a->out);
      // The .npy's bytes are a second copy of the weights.
      const auto r = run_model(a->model, a->text, false, {4, 0});
      const lm::Config& c = r->model.config;
      const auto n = static_cast<size_t>(r->acts.T);
      // B = 1, so att (L, 1, NH, T, T) is already the (L, NH, T, T) the contract asks for.
      files.write(index, npy_array_bytes(
                             {static_cast<size_t>(c.n_layer), static_cast<size_t>(c.n_head), n, n},
                             r->acts.att.data()));
      files.commit();
      return kExitOk;
    };
  });
}

// ---- lm rollout ----

void register_rollout(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "rollout",
      "Attention rollout across layers: which tokens feed the last one after 1, 2, … layers");
  auto a = std::make_shared<LmArgs>();
  add_model_text(*cmd, *a);
  cmd->add_option("--top", a->top, "tokens listed per layer (default 10)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--out", a->out, "also write the rollout of every layer, (n_layer, n, n) .npy");
  cmd->callback([&action, a] {
    action = [a] {
      OutputFiles files;  // checked before the model runs (cli.h)
      const int index = a->out.empty() ? -1 : files.add("--out", a->out);
      // The rollout keeps two (n, n) matrices of doubles per layer, a product's temporary, and
      // with --out the floats and the file's bytes.
      const auto r = run_model(a->model, a->text, false, {0, 40});
      const lm::Config& c = r->model.config;
      const lm::Rollout ro = lm::attention_rollout(c, r->acts);
      const int T = ro.T, last = T - 1;
      const std::vector<std::string> tokens = lm::display_tokens(r->model.tokenizer, r->ids);
      if (index >= 0) {
        std::vector<float> all;
        for (const MatrixD& m : ro.cumulative)
          for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j) all.push_back(static_cast<float>(m(i, j)));
        files.write(index, npy_array_bytes({static_cast<size_t>(c.n_layer), static_cast<size_t>(T),
                                            static_cast<size_t>(T)},
                                           all.data()));
        files.commit();
      }
      std::printf(
          "Attention rollout of \"%s\" (%d tokens) through %d layer%s: per layer the "
          "heads' mean weights A,\nthe residual as A' = 0.5·A + 0.5·I, rows renormalised, "
          "R_l = A'_l · R_(l-1).\nWhat the last token %d \"%s\" draws from:\n",
          printable_text(a->text).c_str(), T, c.n_layer, c.n_layer == 1 ? "" : "s", last,
          printable_text(tokens[static_cast<size_t>(last)]).c_str());
      for (int l = 0; l < c.n_layer; ++l) {
        const MatrixD& m = ro.cumulative[static_cast<size_t>(l)];
        std::vector<int> order(static_cast<size_t>(T));
        for (int j = 0; j < T; ++j) order[static_cast<size_t>(j)] = j;
        std::stable_sort(order.begin(), order.end(),
                         [&](int x, int y) { return m(last, x) > m(last, y); });
        std::printf("after layer %d: %d of %d tokens carry >= 1%%:", l,
                    lm::receptive_field(ro, l, last, 0.01), T);
        for (int k = 0; k < std::min(a->top, T); ++k) {
          const int j = order[static_cast<size_t>(k)];
          std::printf("%s %d \"%s\" %.4f", k ? "," : "", j,
                      printable_text(tokens[static_cast<size_t>(j)]).c_str(), m(last, j));
        }
        std::printf("\n");
      }
      return kExitOk;
    };
  });
}

void register_next(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "next", "The most likely next tokens: ID<TAB>TOKEN<TAB>PROBABILITY, most likely first");
  auto a = std::make_shared<LmArgs>();
  add_model_text(*cmd, *a);
  cmd->add_option("--top", a->top, "how many tokens (default 10)")->check(CLI::Range(1, 1 << 22));
  cmd->add_option("--temperature", a->temperature,
                  "divide the logits by T before the softmax (default 1)")
      ->check(finite_in(1e-3, 1e3));
  cmd->add_option("--logits", a->logits, "also write the last position's logits (vocab_size,)");
  cmd->callback([&action, a] {
    action = [a] {
      OutputFiles files;  // checked before the model runs (cli.h)
      const int index = a->logits.empty() ? -1 : files.add("--logits", a->logits);
      const auto r = run_model(a->model, a->text, false);
      const lm::Config& c = r->model.config;
      // The logits file first: if it cannot be written, nothing has been printed either.
      if (index >= 0) {
        files.write(index,
                    npy_array_bytes({static_cast<size_t>(c.vocab_size)}, r->acts.logits.data()));
        files.commit();
      }
      std::string out;
      char prob[32];
      for (auto [id, p] : lm::top_next_tokens(c, r->acts, a->top, a->temperature)) {
        std::snprintf(prob, sizeof prob, "%.6f", p);
        out +=
            std::to_string(id) + '\t' + vocab_spelling(r->model.tokenizer, id) + '\t' + prob + '\n';
      }
      std::cout << out;
      return kExitOk;
    };
  });
}

// ---- lm heads ----

void register_heads(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "heads",
      "What every head does on the text (previous token, first, self, induction) and how "
      "often the model copies a repeat");
  auto a = std::make_shared<LmArgs>();
  add_model_text(*cmd, *a);
  cmd->callback([&action, a] {
    action = [a] {
      const auto r = run_model(a->model, a->text, true);
      const lm::Config& c = r->model.config;
      const auto scores = lm::head_scores(c, r->acts);
      const lm::CopyAccuracy copy = lm::copy_accuracy(c, r->acts);
      std::printf("model: %s (%d layers x %d heads%s), %d tokens, %d of them seen before\n",
                  printable_text(r->model.name).c_str(), c.n_layer, c.n_head,
                  r->model.mlp ? "" : ", attention-only", r->acts.T,
                  scores.front().induction_queries);
      std::printf("layer  head  previous   first    self  induction\n");
      size_t best_prev = 0, best_ind = 0;
      for (size_t i = 0; i < scores.size(); ++i) {
        const lm::HeadScores& s = scores[i];
        char ind[16] = "      -";
        if (s.induction >= 0) std::snprintf(ind, sizeof ind, "%9.3f", s.induction);
        std::printf("%5d %5d %9.3f %7.3f %7.3f  %s\n", static_cast<int>(i) / c.n_head,
                    static_cast<int>(i) % c.n_head, s.previous, s.first, s.self, ind);
        if (s.previous > scores[best_prev].previous) best_prev = i;
        if (s.induction > scores[best_ind].induction) best_ind = i;
      }
      std::printf("best previous-token head: layer %d head %d (%.3f)\n",
                  static_cast<int>(best_prev) / c.n_head, static_cast<int>(best_prev) % c.n_head,
                  scores[best_prev].previous);
      if (scores[best_ind].induction >= 0)
        std::printf("best induction head: layer %d head %d (%.3f)\n",
                    static_cast<int>(best_ind) / c.n_head, static_cast<int>(best_ind) % c.n_head,
                    scores[best_ind].induction);
      else
        std::printf("best induction head: none (no token of the text occurred before)\n");
      if (copy.total > 0)
        std::printf(
            "copies the repeat: predicts the token that followed last time %d of %d "
            "times (%.1f%%)\n",
            copy.correct, copy.total, 100.0 * copy.fraction());
      return kExitOk;
    };
  });
}

// ---- lm bench ----

struct BenchArgs {
  std::string model, folder = "/tmp/attention-lab-gpt2-small-random";
  int tokens = 64, runs = 5;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// GPT-2 small's sizes (Hugging Face "gpt2").
lm::Config gpt2_small() {
  lm::Config c;
  c.n_layer = 12;
  c.n_head = 12;
  c.n_embd = 768;
  c.n_positions = 1024;
  c.vocab_size = 50257;
  return c;
}

int run_bench(const BenchArgs& a) {
  std::string folder = a.model, error;
  if (folder.empty()) {
    if (a.tokens > gpt2_small().n_positions)  // before the random model is written
      throw CliError{kExitUsage, "--tokens: " + std::to_string(a.tokens) +
                                     " is more than GPT-2 small's n_positions = " +
                                     std::to_string(gpt2_small().n_positions)};
    folder = a.folder;
    struct stat st {};
    if (::stat((folder + "/model.safetensors").c_str(), &st) != 0) {
      // A random model of GPT-2 small's shape with a byte-level vocabulary: the speed of the
      // forward pass depends only on the sizes.
      lm::Model m;
      lm::init_random(m, gpt2_small(), 1234);
      std::vector<std::string> bytes(lm::byte_to_unicode().begin(), lm::byte_to_unicode().end());
      if (!m.tokenizer.build(bytes, {}, error) || !lm::save_model(m, folder, error))
        throw CliError{kExitRuntime, error};
      std::cout << "wrote a randomly initialised GPT-2-small-shaped model to "
                << printable_text(folder) << "\n";
    }
  } else {
    folder = lm_model_folder_or_throw(a.model);
  }
  auto t0 = std::chrono::steady_clock::now();
  lm::Model m;
  if (!lm::load_model(folder, m, error)) throw CliError{kExitUsage, error};
  const double load_s = seconds_since(t0);
  const lm::Config& c = m.config;
  if (a.tokens > c.n_positions)
    throw CliError{kExitUsage, "--tokens: " + std::to_string(a.tokens) + " is more than " + m.name +
                                   "'s n_positions = " + std::to_string(c.n_positions)};
  const int T = a.tokens;
  {  // Both passes' sizes before any text is built (docs/robustness.md).
    lm::ForwardOptions all;
    all.mlp = m.mlp;
    if (std::string e = lm::check_forward_size(c, 1, T, all); !e.empty())
      throw CliError{kExitUsage, "--tokens: " + e};
  }
  // The sentence doubled until it has T tokens: a few encodings, not one per sentence added.
  std::string text =
      "The quick brown fox jumps over the lazy dog while the teacher explains attention. ";
  std::vector<int> ids;
  for (;;) {
    // A tokenizer that gives this sentence no tokens would double it forever.
    if (std::string e; !m.tokenizer.encode(text, ids, e))
      throw CliError{kExitUsage, "the benchmark's text: " + e};
    if (static_cast<int>(ids.size()) >= T) break;
    text += text;
  }
  ids.resize(static_cast<size_t>(T));

  const double L = c.n_layer, C = c.n_embd, F = c.mlp_size(), V = c.vocab_size, W = c.qkv_width(),
               Q = c.q_dim();
  // Multiply-adds ×2: the matrix products per layer (Q | K | V, the output projection, the MLP's
  // two or three), Q·Kᵀ and weights·V over the causal half, and the output layer.
  const double mlp_products = c.llama_family() ? 3 : 2;
  const double layer_flops =
      L * (2.0 * T * (C * W + Q * C + mlp_products * C * F) + 2.0 * T * T * Q);
  std::printf(
      "model: %s (%s, %d layers, %d query heads, %d K/V heads, hidden %d, vocab %d, %.1f "
      "M parameters, %s)\n",
      printable_text(folder).c_str(), arch_name(c.arch), c.n_layer, c.n_head, c.kv_heads(),
      c.n_embd, c.vocab_size, m.parameter_count() / 1e6, m.dtype.c_str());
  std::printf("load (map, convert, check every weight, tokenizer): %.3f s\n", load_s);
  lm::Activations acts;
  for (bool all : {false, true}) {
    lm::ForwardOptions o;
    o.all_logits = all;
    // Warm-up: sizes the buffers, and finds a pass that overflows float32 (its timing would
    // mean nothing).
    if (std::string e = lm::checked_forward(m, ids, 1, T, acts, o); !e.empty())
      throw CliError{kExitUsage, m.name + ": " + e};
    std::vector<double> times, cpu;
    for (int r = 0; r < a.runs; ++r) {
      t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_seconds();
      lm::gpt_forward(m, ids, 1, T, acts, o);
      cpu.push_back(process_cpu_seconds() - c0);
      times.push_back(seconds_since(t0));
    }
    const double flops = layer_flops + 2.0 * (all ? T : 1) * C * V;
    const double med = median(times);
    // CPU time counts only this process's work: on a machine busy with other work, it tells
    // what an idle one would take (CPU time / cores, when the work is split evenly).
    std::printf(
        "forward, %d tokens, logits of %s: median %.1f ms, min %.1f ms over %d runs "
        "(%.1f GFLOP, %.1f GFLOP/s); CPU time %.1f ms (all cores together)\n",
        T, all ? "every position" : "the last position", med * 1e3,
        *std::min_element(times.begin(), times.end()) * 1e3, a.runs, flops / 1e9, flops / med / 1e9,
        median(cpu) * 1e3);
  }
  // What the machine can do right now: the same Eigen product, 1024³, its output columns split
  // over every core as matmul_forward splits them (other work on the machine lowers both).
  {
    constexpr int S = 1024;
    std::vector<float> x(static_cast<size_t>(S) * S, 0.5f), w(x.size(), 0.25f), y(x.size());
    std::vector<double> times, cpu;
    for (int r = 0; r < 3; ++r) {
      t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_seconds();
      lm::matmul_forward<float>(x.data(), w.data(), nullptr, S, S, S, y.data());
      cpu.push_back(process_cpu_seconds() - c0);
      times.push_back(seconds_since(t0));
    }
    std::printf(
        "limit: Eigen float product %d×%d×%d on every core: median %.1f ms, %.1f GFLOP/s; CPU "
        "time %.1f ms\n",
        S, S, S, median(times) * 1e3, 2.0 * S * S * S / median(times) / 1e9, median(cpu) * 1e3);
  }
  // Generation with the KV cache: the prompt (the first min(T, 64) tokens) once, then one token
  // at a time, greedy.
  {
    constexpr int kNew = 32;
    const int prompt = std::min(T, 64);
    if (prompt + kNew <= c.n_positions) {
      lm::Generator gen(m);
      t0 = std::chrono::steady_clock::now();
      if (std::string e = gen.feed({ids.begin(), ids.begin() + prompt}); !e.empty())
        throw CliError{kExitUsage, m.name + ": " + e};
      const double prompt_s = seconds_since(t0);
      std::mt19937_64 rng(0);
      t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_seconds();
      for (int i = 0; i < kNew; ++i)
        if (std::string e = gen.feed({lm::choose_next_token(gen.logits(), 0, 0, rng)}); !e.empty())
          throw CliError{kExitUsage, m.name + ": " + e};
      const double gen_s = seconds_since(t0), gen_cpu = process_cpu_seconds() - c0;
      std::printf(
          "generate: %d-token prompt %.1f ms, then %d tokens at %.1f tokens/s (%.1f ms each; "
          "CPU time %.1f ms each); KV cache %.2f MB\n",
          prompt, prompt_s * 1e3, kNew, kNew / gen_s, gen_s / kNew * 1e3, gen_cpu / kNew * 1e3,
          gen.cache_bytes() / 1e6);
    }
  }
  t0 = std::chrono::steady_clock::now();
  const auto scores = lm::head_scores(c, acts);
  std::printf("head scores of all %zu heads: %.2f ms\n", scores.size(), seconds_since(t0) * 1e3);
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  std::printf("peak resident memory: %.0f MB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return kExitOk;
}

void register_bench_lm(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "bench",
      "Time loading and the forward pass (default: a random GPT-2-small-shaped model it writes)");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--model", a->model, "a model folder or shipped name instead of the random one");
  cmd->add_option("--folder", a->folder, "where the random model is written (reused when there)")
      ->capture_default_str();
  cmd->add_option("--tokens", a->tokens, "tokens per forward pass (default 64)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--runs", a->runs, "timed runs (default 5)")->check(CLI::Range(1, 1000));
  cmd->callback([&action, a] { action = [a] { return run_bench(*a); }; });
}

// ---- lm generate ----

struct GenerateArgs : LmArgs {
  int tokens = 20, top_k = 0;
  uint64_t seed = 0;
  bool ids = false;
};

// Generated text for the terminal: its lines kept, control characters and broken UTF-8 escaped
// (printable_text) within each.
std::string terminal_text(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t nl = text.find('\n', at);
    out += printable_text(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) break;
    out += '\n';
    at = nl + 1;
  }
  return out;
}

int run_generate(const GenerateArgs& a) {
  const lm::Model m = load_model_or_throw(a.model);
  const std::vector<int> prompt = tokenize_or_throw(m, a.text);
  const lm::Config& c = m.config;
  if (static_cast<int>(prompt.size()) + a.tokens > c.n_positions)
    throw CliError{kExitUsage, "--tokens: the text's " + std::to_string(prompt.size()) +
                                   " tokens and " + std::to_string(a.tokens) +
                                   " more would pass the model's n_positions = " +
                                   std::to_string(c.n_positions)};
  lm::Generator gen(m);
  std::mt19937_64 rng(a.seed);
  const std::vector<int> stop = lm::end_of_text_ids(m);
  std::vector<int> made;
  std::string out;
  if (std::string e = gen.feed(prompt); !e.empty()) throw CliError{kExitUsage, m.name + ": " + e};
  for (int i = 0; i < a.tokens; ++i) {
    const int next = lm::choose_next_token(gen.logits(), a.temperature, a.top_k, rng);
    if (std::find(stop.begin(), stop.end(), next) != stop.end()) break;
    made.push_back(next);
    if (a.ids) out += std::to_string(next) + '\t' + vocab_spelling(m.tokenizer, next) + '\n';
    if (i + 1 < a.tokens)
      if (std::string e = gen.feed({next}); !e.empty())
        throw CliError{kExitUsage, m.name + ": " + e};
  }
  // Printed whole at the end: an error part-way leaves nothing half-printed.
  if (!a.ids) out = terminal_text(m.tokenizer.decode(made)) + "\n";
  std::cout << out;
  return kExitOk;
}

void register_generate(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "generate", "Continue the text token by token with a KV cache (greedy unless sampling)");
  auto a = std::make_shared<GenerateArgs>();
  a->temperature = 0;
  add_model_text(*cmd, *a);
  cmd->add_option("--tokens", a->tokens, "how many tokens to add (default 20)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--temperature", a->temperature,
                  "0 (default): the most likely token each step; above 0: sample from "
                  "softmax(logits / T)")
      ->check(finite_in(0.0, 1e3));
  cmd->add_option("--top-k", a->top_k, "sample among the K most likely only (default: all)")
      ->check(CLI::Range(0, 1 << 22));
  cmd->add_option("--seed", a->seed, "random seed for sampling (default 0)")
      ->check(unsigned_integer());
  cmd->add_flag("--ids", a->ids, "one line per new token, ID<TAB>TOKEN, instead of the text");
  cmd->callback([&action, a] { action = [a] { return run_generate(*a); }; });
}

// ---- lm init ----

struct InitArgs {
  std::string out, corpus, dtype, arch = "gpt2";
  // -1: the architecture's default (GPT-2: a small model; the Llama family: SmolLM2-135M's shape)
  int layers = -1, heads = -1, kv_heads = -1, embd = -1, mlp = -1, head_dim = -1, vocab = -1,
      positions = -1, window = -1, merges = 500;
  double rope_theta = -1;
  uint64_t seed = 1;
  float std = 0.02f;
};

// The config `lm init` writes: the flags given, the architecture's defaults for the rest.
lm::Config init_config(const InitArgs& a, int tokenizer_size) {
  lm::Config c;
  auto pick = [](int flag, int fallback) { return flag >= 0 ? flag : fallback; };
  if (a.arch == "gpt2") {
    c.n_layer = pick(a.layers, 4);
    c.n_head = pick(a.heads, 4);
    c.n_embd = pick(a.embd, 64);
    c.n_positions = pick(a.positions, 128);
    c.vocab_size = tokenizer_size;
    return c;
  }
  c.arch = a.arch == "llama"     ? LmArch::kLlama
           : a.arch == "mistral" ? LmArch::kMistral
                                 : LmArch::kQwen2;
  // SmolLM2-135M: hidden 576, 30 layers, 9 query heads sharing 3 K/V heads of 64, MLP 1536,
  // vocabulary 49152, 8192 positions, rope_theta 100000, tied.
  c.n_layer = pick(a.layers, 30);
  c.n_head = pick(a.heads, 9);
  c.n_kv_head = pick(a.kv_heads, std::min(3, c.n_head));
  c.n_embd = pick(a.embd, 576);
  c.head_dim = pick(a.head_dim, c.n_embd % c.n_head == 0 ? c.n_embd / c.n_head : 64);
  c.n_inner = pick(a.mlp, c.n_embd * 8 / 3);
  if (a.mlp < 0 && a.embd < 0) c.n_inner = 1536;
  c.vocab_size = std::max(pick(a.vocab, 49152), tokenizer_size);
  c.n_positions = pick(a.positions, 8192);
  c.rope_theta = a.rope_theta > 0 ? a.rope_theta : 100000;
  c.layer_norm_epsilon = 1e-5;
  c.qkv_bias = c.arch == LmArch::kQwen2;
  c.tied = true;
  if (c.arch == LmArch::kMistral) c.sliding_window = pick(a.window, 4096);
  if (c.arch == LmArch::kQwen2 && a.window > 0) c.sliding_window = a.window;
  return c;
}

int run_init(const InitArgs& a) {
  if (a.arch != "gpt2" && a.arch != "llama" && a.arch != "mistral" && a.arch != "qwen2")
    throw CliError{kExitUsage,
                   "--arch: expected gpt2, llama, mistral or qwen2, got '" + a.arch + "'"};
  const bool llama = a.arch != "gpt2";
  const std::string dtype = !a.dtype.empty() ? a.dtype : llama ? "BF16" : "F32";
  if (dtype != "F32" && dtype != "F16" && dtype != "BF16")
    throw CliError{kExitUsage, "--dtype: expected F32, F16 or BF16, got '" + dtype + "'"};
  if (!llama && (a.kv_heads >= 0 || a.mlp >= 0 || a.head_dim >= 0 || a.vocab >= 0 ||
                 a.window >= 0 || a.rope_theta >= 0))
    throw CliError{kExitUsage,
                   "--kv-heads, --mlp, --head-dim, --vocab, --window and --rope-theta are for "
                   "--arch llama, mistral or qwen2"};
  {
    const int symbols = 256 + (a.corpus.empty() ? 0 : a.merges) + 1;
    // The byte-level tokenizer has a token for each of the 256 bytes, the merges and the end of
    // text: an embedding with fewer rows could not look them up (not silently widened).
    if (llama && a.vocab >= 0 && a.vocab < symbols)
      throw CliError{kExitUsage,
                     "--vocab: " + std::to_string(a.vocab) +
                         " is fewer than the byte-level tokenizer's " + std::to_string(symbols) +
                         " tokens (256 bytes" + (a.corpus.empty() ? "" : ", the merges") +
                         " and the end of text); give at least " + std::to_string(symbols)};
    const lm::Config c = init_config(a, symbols);
    if (!llama && c.n_embd % c.n_head != 0)
      throw CliError{kExitUsage, "--embd: " + std::to_string(c.n_embd) +
                                     " is not divisible by --heads " + std::to_string(c.n_head)};
    if (llama && c.n_head % c.kv_heads() != 0)
      throw CliError{kExitUsage, "--kv-heads: " + std::to_string(c.kv_heads()) +
                                     " does not divide --heads " + std::to_string(c.n_head)};
    if (llama && c.head_size() % 2 != 0)
      throw CliError{kExitUsage, "--head-dim: " + std::to_string(c.head_size()) +
                                     " is odd; RoPE rotates pairs of dimensions"};
  }
  // The folder is checked now and created only when the model is complete (save_model's
  // NewFolder): a corpus that cannot be read or a model too large leaves nothing behind.
  if (const std::string e = check_output_folder(a.out); !e.empty())
    throw CliError{kExitUsage, "--out: " + e};
  {
    const lm::Config c = init_config(a, 256 + (a.corpus.empty() ? 0 : a.merges) + 1);
    // The parameters in float32, and the file's bytes made from them.
    const double params = lm::parameter_count(c);
    const double bytes = params * (4.0 + (dtype == "F32" ? 4.0 : 2.0));
    if (bytes > lm::kMaxTrainBytes) {
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "--layers/--heads/--embd/--positions: a model of %.0f parameters would need "
                    "%.1f GB (%.0f bytes) to build and write; at most %.1f GB (%.0f bytes) are "
                    "allowed (docs/robustness.md)",
                    params, bytes / 1e9, bytes, lm::kMaxTrainBytes / 1e9, lm::kMaxTrainBytes);
      throw CliError{kExitUsage, buf};
    }
  }
  std::string corpus, error;
  if (!a.corpus.empty()) {
    if (!read_regular_file(a.corpus, 256u << 20, corpus, error))
      throw CliError{kExitUsage, "--corpus: " + error};
    if (corpus.empty())
      throw CliError{kExitUsage, "--corpus: " + a.corpus + " is empty; give some UTF-8 text"};
    size_t bad = 0;
    if (!lm::valid_utf8(corpus, &bad))
      throw CliError{kExitUsage,
                     "--corpus: " + a.corpus + " is not UTF-8 (byte " + std::to_string(bad) + ")"};
  }
  lm::Model m;
  m.tokenizer = lm::learn_bpe(corpus, a.corpus.empty() ? 0 : a.merges);
  const lm::Config c = init_config(a, m.tokenizer.size());
  if (llama) {
    lm::init_random_llama(m, c, a.seed, a.std);
    m.config.eos_token_id = m.tokenizer.find("<|endoftext|>");
  } else {
    lm::init_random(m, c, a.seed, a.std);
  }
  if (!lm::save_model(m, a.out, error, dtype)) throw CliError{kExitRuntime, "--out: " + error};
  std::cout << "wrote " << printable_text(a.out) << ": " << arch_name(c.arch) << ", " << c.n_layer
            << " layers, " << c.n_head << " heads";
  if (llama)
    std::cout << " sharing " << c.kv_heads() << " K/V heads of " << c.head_size() << ", hidden "
              << c.n_embd << ", MLP " << c.mlp_size();
  else
    std::cout << ", n_embd " << c.n_embd;
  std::cout << ", " << c.n_positions << " positions, vocabulary " << c.vocab_size << " ("
            << m.tokenizer.size() << " tokens, " << m.tokenizer.merges().size() << " merges), "
            << static_cast<long long>(m.parameter_count()) << " parameters in " << dtype
            << ", random\n";
  return kExitOk;
}

void register_init(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "init",
      "Write a randomly initialised model folder (GPT-2, Llama, Mistral or Qwen2; merges learned "
      "from a text)");
  auto a = std::make_shared<InitArgs>();
  cmd->add_option("--out", a->out, "the folder to write (created)")->required();
  cmd->add_option("--arch", a->arch,
                  "gpt2 (default), llama, mistral or qwen2 (defaults: SmolLM2-135M's shape)");
  cmd->add_option("--corpus", a->corpus,
                  "UTF-8 text to learn BPE merges from (default: bytes only)");
  cmd->add_option("--merges", a->merges, "how many merges to learn (default 500)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--layers", a->layers, "layers (default 4; Llama family 30)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--heads", a->heads, "query heads (default 4; Llama family 9)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-heads", a->kv_heads, "K/V heads (Llama family; default 3)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--embd", a->embd, "n_embd / hidden_size (default 64; Llama family 576)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--head-dim", a->head_dim, "size of each head (Llama family; default 64)")
      ->check(CLI::Range(2, 4096));
  cmd->add_option("--mlp", a->mlp, "MLP width (Llama family; default 1536)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--vocab", a->vocab,
                  "embedding rows, at least the tokenizer's (Llama family; default 49152)")
      ->check(CLI::Range(1, 1 << 22));
  cmd->add_option("--positions", a->positions, "n_positions (default 128; Llama family 8192)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--window", a->window, "sliding window W (mistral default 4096; qwen2 none)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--rope-theta", a->rope_theta, "RoPE's base (Llama family; default 100000)")
      ->check(finite_in(1.0, 1e12));
  cmd->add_option("--seed", a->seed, "random seed (default 1)")->check(unsigned_integer());
  cmd->add_option("--std", a->std,
                  "standard deviation of the weights (default 0.02, GPT-2's; larger values give "
                  "sharper, more varied attention)")
      ->check(finite_in(0.0, 10.0));
  cmd->add_option("--dtype", a->dtype, "F32, F16 or BF16 (default F32; Llama family BF16)");
  cmd->callback([&action, a] { action = [a] { return run_init(*a); }; });
}

}  // namespace

Scenario load_model_head_scenario(const ScenarioSource& src) {
  if (src.text.empty())
    throw CliError{kExitUsage, "--text: required with --model (the text the head reads)"};
  const auto r = run_model(src.model, src.text, false);
  const lm::Config& c = r->model.config;
  if (src.layer < 0 || src.layer >= c.n_layer)
    throw CliError{kExitUsage, "--layer: " + std::to_string(src.layer) + " is out of range; " +
                                   r->model.name + " has layers 0.." +
                                   std::to_string(c.n_layer - 1)};
  if (src.head < 0 || src.head >= c.n_head)
    throw CliError{kExitUsage, "--head: " + std::to_string(src.head) + " is out of range; " +
                                   r->model.name + " has heads 0.." + std::to_string(c.n_head - 1)};
  return lm::head_scenario(r->model, r->acts, src.layer, src.head,
                           lm::display_tokens(r->model.tokenizer, r->ids), src.text);
}

void register_lm(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "lm", "GPT-2-format transformers: tokens, attention of every head, next-token predictions");
  cmd->require_subcommand(1);
  register_tokens(*cmd, action);
  register_attention(*cmd, action);
  register_rollout(*cmd, action);
  register_next(*cmd, action);
  register_generate(*cmd, action);
  register_bench_lm(*cmd, action);
  register_init(*cmd, action);
  register_heads(*cmd, action);
  register_lm_train(*cmd, action);
  register_lm_eval(*cmd, action);
  register_lm_curve(*cmd, action);
}

}  // namespace attn::cli
