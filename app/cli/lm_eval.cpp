// `attention-lab lm eval`: how well a model predicts a text it reads (lm/corpus_eval.h) — mean
// loss, perplexity, top-1 and top-5 next-token accuracy over the text's tokens in windows of the
// model's context, printed as NAME<TAB>VALUE lines and, with --json, written to a file atomically.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "attention/format.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "lm/bigram.h"
#include "lm/corpus_eval.h"
#include "lm/model.h"
#include "lm/tokenizer.h"

namespace attn::cli {

namespace {

struct EvalArgs {
  std::string model, corpus, json;
  std::string bigram;  // a training text: also the bigram baseline counted on it
  int threads = 0;
};

std::string fixed(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// A UTF-8 text file in the model's tokens (at least 2), or an error naming `flag`.
std::vector<int> read_tokens(const lm::Model& m, const std::string& path, const std::string& flag) {
  std::string text, error;
  if (!read_regular_file(path, 256u << 20, text, error))
    throw CliError{kExitUsage, flag + ": " + error};
  size_t bad = 0;
  if (!lm::valid_utf8(text, &bad))
    throw CliError{kExitUsage, flag + ": " + printable_text(path) + " is not UTF-8 (byte " +
                                   std::to_string(bad) + ")"};
  std::vector<int> ids;
  if (!m.tokenizer.encode(text, ids, error)) throw CliError{kExitUsage, flag + ": " + error};
  if (ids.size() < 2)
    throw CliError{kExitUsage, flag + ": " + printable_text(path) + " has " +
                                   std::to_string(ids.size()) +
                                   " tokens; at least 2 are needed for one prediction"};
  return ids;
}

nlohmann::ordered_json figures_json(const lm::CorpusFigures& f) {
  return {{"tokens", f.tokens},
          {"loss", f.loss},
          {"perplexity", f.perplexity()},
          {"top1", f.top1},
          {"top5", f.top5}};
}

void print_figures(const lm::CorpusFigures& f, const std::string& prefix) {
  std::cout << prefix << "loss\t" << fixed("%.4f", f.loss) << "\n"
            << prefix << "perplexity\t" << fixed("%.2f", f.perplexity()) << "\n"
            << prefix << "top1\t" << fixed("%.4f", f.top1) << "\n"
            << prefix << "top5\t" << fixed("%.4f", f.top5) << "\n"
            << prefix << "tokens\t" << f.tokens << "\n";
}

int run_eval(const EvalArgs& a) {
  const std::string folder = lm_model_folder_or_throw(a.model);
  std::string error;
  lm::Model m;
  if (!lm::load_model(folder, m, error)) throw CliError{kExitUsage, "--model: " + error};
  const std::vector<int> ids = read_tokens(m, a.corpus, "--corpus");
  const lm::CorpusFigures f = lm::corpus_eval(m, ids, a.threads);
  std::optional<lm::CorpusFigures> bigram;
  if (!a.bigram.empty())
    bigram =
        lm::BigramModel(read_tokens(m, a.bigram, "--bigram"), m.config.vocab_size).evaluate(ids);
  if (!a.json.empty()) {
    nlohmann::ordered_json j = {
        {"model", folder},    {"corpus", a.corpus}, {"context", m.config.n_positions},
        {"tokens", f.tokens}, {"loss", f.loss},     {"perplexity", f.perplexity()},
        {"top1", f.top1},     {"top5", f.top5}};
    if (bigram) j["bigram"] = {{"train", a.bigram}, {"figures", figures_json(*bigram)}};
    if (!write_file_atomically(a.json, j.dump(2) + "\n", error))
      throw CliError{kExitRuntime, "--json: " + error};
  }
  print_figures(f, "");
  if (bigram) print_figures(*bigram, "bigram_");
  return kExitOk;
}

}  // namespace

void register_lm_eval(CLI::App& parent, Action& action) {
  auto* cmd = parent.add_subcommand(
      "eval",
      "How well a model predicts a text: mean loss, perplexity, top-1 and top-5 next-token "
      "accuracy, in windows of the model's context");
  auto a = std::make_shared<EvalArgs>();
  cmd->add_option("--model", a->model, "a model folder or a shipped model's short name")
      ->required();
  cmd->add_option("--corpus", a->corpus, "a UTF-8 text file")->required();
  cmd->add_option("--json", a->json, "also write the figures to this JSON file");
  cmd->add_option("--bigram", a->bigram,
                  "a training text (UTF-8): also the figures of a bigram model counted on it in "
                  "the model's tokens (bigram_loss, …), the baseline to beat");
  cmd->add_option("--threads", a->threads, "threads (0: every core)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  cmd->callback([&action, a] { action = [a] { return run_eval(*a); }; });
}

}  // namespace attn::cli
