// A text that tokenizes to nothing (docs/cli.md, "Shipped English model…"; issue 40): every
// command that runs a model on a text — each `lm` subcommand, `lm bench`, `trace`, `explain`,
// `export` and `worksheet` with `--model` — is exit 2 naming the text, and writes nothing. Two
// tokenizer.json files written here give zero tokens: one whose pre-tokenizer removes every
// character, one whose vocabulary lacks the text's characters (no unk, no byte fallback).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llama_fixture.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::run_cli;
using test::temp_path;

std::string sh(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A Llama folder from the test fixture whose tokenizer.json is replaced: a BPE model over the
// vocabulary {a, b, c, d} (ids 0-3, within the model's embedding rows), no merges, no unk token, no
// byte fallback, no post-processor (so no BOS), and `pre_tokenizer` when given.
std::string folder_with_tokenizer(const std::string& name, const nlohmann::json& pre_tokenizer) {
  test::LlamaSpec spec;
  spec.tokenizer = "qwen2";
  spec.n_layer = 1;
  const test::LlamaModel m = test::make_llama_model(spec);
  const std::string dir = temp_path(name);
  test::write_llama_model(m, dir);
  nlohmann::json t = {{"version", "1.0"},
                      {"model",
                       {{"type", "BPE"},
                        {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}}},
                        {"merges", nlohmann::json::array()}}}};
  if (!pre_tokenizer.is_null()) t["pre_tokenizer"] = pre_tokenizer;
  std::ofstream(dir + "/tokenizer.json") << t.dump(1);
  return dir;
}

// Every model command on `text`, each expected to refuse it with exit 2 naming the text.
void expect_every_command_refuses(const std::string& dir, const std::string& text, bool bench_too) {
  const std::string m = " --model " + sh(dir) + " --text " + sh(text);
  const std::string npy = temp_path("zero.npy"), png = temp_path("zero.png"),
                    pdf = temp_path("zero.pdf"), logits = temp_path("zero-logits.npy");
  std::vector<std::string> commands = {"lm tokens" + m,
                                       "lm attention" + m + " --out " + npy,
                                       "lm rollout" + m,
                                       "lm next" + m + " --logits " + logits,
                                       "lm generate" + m + " --tokens 3",
                                       "lm generate" + m + " --tokens 3 --temperature 0.8",
                                       "lm heads" + m,
                                       "trace" + m,
                                       "explain" + m + " --query 0",
                                       "export" + m + " --step weights --out " + png,
                                       "worksheet" + m + " --out " + pdf};
  for (const std::string& args : commands) {
    SCOPED_TRACE(args);
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("\"" + text + "\" gives no tokens"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  for (const std::string& f : {npy, png, pdf, logits}) EXPECT_FALSE(file_exists(f)) << f;
  if (bench_too) {
    // lm bench's own sentence gives no tokens either: exit 2, not a sentence doubled forever.
    const auto r = run_cli("lm bench --model " + sh(dir) + " --tokens 8 --runs 1");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("the benchmark's text: \"The quick brown fox"), std::string::npos)
        << r.err;
  }
}

TEST(ZeroTokens, APreTokenizerThatRemovesEverything) {
  // Split on every character, removing the matches: nothing is left to tokenize.
  const nlohmann::json removes_all = {{"type", "Split"},
                                      {"pattern", {{"Regex", "[\\s\\S]"}}},
                                      {"behavior", "Removed"},
                                      {"invert", false}};
  const std::string dir = folder_with_tokenizer("zero-removed", removes_all);
  // The same folder tokenizes nothing but still loads: a text is what fails.
  expect_every_command_refuses(dir, "abc abc", true);
}

TEST(ZeroTokens, CharactersTheVocabularyLacks) {
  const std::string dir = folder_with_tokenizer("zero-unknown", nullptr);
  // The vocabulary has a-d: a text of them works (four tokens), one of other characters gives
  // none.
  const auto ok = run_cli("lm tokens --model " + sh(dir) + " --text abcd");
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(std::count(ok.out.begin(), ok.out.end(), '\n'), 4) << ok.out;
  // (lm bench's sentence has a, b, c and d in it, so it tokenizes here: the folder above covers
  // lm bench.)
  expect_every_command_refuses(dir, "xyz", false);
  expect_every_command_refuses(dir, "жж", false);
}

}  // namespace
}  // namespace attn
