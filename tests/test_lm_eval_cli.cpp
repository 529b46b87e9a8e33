// `attention-lab lm eval` and `lm train --resume`/`--eval-corpus` end to end: the figures printed,
// written as JSON and kept in training.json agree; bad input is exit 2 naming what was wrong, and
// a damaged checkpoint is refused rather than resumed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "npy_fixture.h"
#include "reference.h"

namespace attn::lm {
namespace {

using test::read_bytes;
using test::run_cli;
using test::temp_path;
using test::write_bytes;

const char* kHeldOut =
    "Once upon a time a little cat found a red ball in the garden. She was happy and ran to "
    "show her mother, who smiled at the cat and the ball.\n";

// A 6-step stories run with --eval-corpus, made once.
const std::string& run_folder() {
  static const std::string dir = [] {
    const std::string d = temp_path("lm-eval-run");
    write_bytes(d + ".txt", kHeldOut);
    const auto r = run_cli(
        "lm train --data stories --stories 100 --merges 60 --layers 1 --heads 2 --embd 16 "
        "--context 16 --batch 4 --steps 6 --eval-every 3 --eval-corpus '" +
        d + ".txt' --out '" + d + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("    eval-corpus  loss "), std::string::npos) << r.out;
    return d;
  }();
  return dir;
}

// lm eval's NAME<TAB>VALUE lines.
std::map<std::string, double> figures(const std::string& out) {
  std::map<std::string, double> printed;
  std::istringstream lines(out);
  std::string name, value;
  while (std::getline(lines, name, '\t') && std::getline(lines, value))
    printed[name] = std::stod(value);
  return printed;
}

TEST(LmEvalCli, PrintedJsonAndTrainingFiguresAgree) {
  const std::string& d = run_folder();
  const auto r =
      run_cli("lm eval --model '" + d + "' --corpus '" + d + ".txt' --json '" + d + "-eval.json'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, double> printed = figures(r.out);
  ASSERT_EQ(printed.size(), 5u) << r.out;
  const auto j = nlohmann::json::parse(read_bytes(d + "-eval.json"));
  EXPECT_NEAR(j["loss"].get<double>(), printed["loss"], 1e-4);
  EXPECT_NEAR(j["perplexity"].get<double>(), std::exp(j["loss"].get<double>()), 1e-9);
  EXPECT_NEAR(j["top1"].get<double>(), printed["top1"], 1e-4);
  EXPECT_NEAR(j["top5"].get<double>(), printed["top5"], 1e-4);
  EXPECT_EQ(j["tokens"].get<long>(), static_cast<long>(printed["tokens"]));
  EXPECT_GE(j["top5"].get<double>(), j["top1"].get<double>());
  // The run's last figures on the same text are the saved model's.
  const auto t = nlohmann::json::parse(read_bytes(d + "/training.json"));
  const auto& last = t["history"].back()["eval_corpus"];
  EXPECT_EQ(last["tokens"].get<long>(), j["tokens"].get<long>());
  EXPECT_NEAR(last["loss"].get<double>(), j["loss"].get<double>(), 1e-9);
  EXPECT_NEAR(last["top5"].get<double>(), j["top5"].get<double>(), 1e-12);
}

// --bigram: the baseline's figures beside the model's, over the same tokens; a text predicts
// itself better from its own counts than from another text's.
TEST(LmEvalCli, TheBigramBaselineIsFiguredOverTheSameTokens) {
  const std::string& d = run_folder();
  const auto r = run_cli("lm eval --model '" + d + "' --corpus '" + d + ".txt' --bigram '" + d +
                         ".txt' --json '" + d + "-bigram.json'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::map<std::string, double> printed = figures(r.out);
  ASSERT_EQ(printed.size(), 10u) << r.out;
  EXPECT_EQ(printed["bigram_tokens"], printed["tokens"]);
  EXPECT_NEAR(printed["bigram_perplexity"], std::exp(printed["bigram_loss"]),
              1e-2 * printed["bigram_perplexity"]);
  EXPECT_GE(printed["bigram_top5"], printed["bigram_top1"]);
  const auto j = nlohmann::json::parse(read_bytes(d + "-bigram.json"));
  EXPECT_NEAR(j["bigram"]["figures"]["loss"].get<double>(), printed["bigram_loss"], 1e-4);
  const auto bad =
      run_cli("lm eval --model '" + d + "' --corpus '" + d + ".txt' --bigram no-such-file.txt");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--bigram: "), std::string::npos) << bad.err;
}

TEST(LmEvalCli, BadInputIsExitTwo) {
  const std::string& d = run_folder();
  write_bytes(d + "-empty.txt", "");
  auto r = run_cli("lm eval --model '" + d + "' --corpus '" + d + "-empty.txt'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --corpus: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has 0 tokens"), std::string::npos) << r.err;
  write_bytes(d + "-latin1.txt", "caf\xe9\n");
  r = run_cli("lm eval --model '" + d + "' --corpus '" + d + "-latin1.txt'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("is not UTF-8 (byte 3)"), std::string::npos) << r.err;
  r = run_cli("lm eval --model /no/such/model --corpus '" + d + "-empty.txt'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("error: --model: '/no/such/model' is neither a folder", 0), 0u) << r.err;
  r = run_cli("lm eval --model '" + d + "' --corpus '" + d + "-missing.txt'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --corpus: "), std::string::npos) << r.err;
  // --eval-corpus is checked before anything is trained or written.
  const std::string never = temp_path("lm-eval-never");
  r = run_cli(
      "lm train --data stories --stories 100 --merges 60 --layers 1 --heads 2 --embd 16 "
      "--context 16 --steps 2 --eval-corpus '" +
      d + "-empty.txt' --out '" + never + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --eval-corpus: "), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(never + "/config.json"), "");
}

TEST(LmResumeCli, RefusesOtherFlagsMissingAndDamagedCheckpoints) {
  const std::string& d = run_folder();
  auto r = run_cli("lm train --resume '" + d + "' --lr 0.1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--lr cannot be given with it"), std::string::npos) << r.err;
  r = run_cli("lm train --resume '" + temp_path("lm-eval-nowhere") + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --resume: "), std::string::npos) << r.err;
  // A copy of the checkpoint with one byte changed in the weights.
  const std::string bad = temp_path("lm-eval-damaged");
  std::string bytes = read_bytes(d + "/checkpoint.bin");
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() - 40] ^= 0x10;
  ASSERT_EQ(std::system(("mkdir -p '" + bad + "'").c_str()), 0);
  write_bytes(bad + "/checkpoint.bin", bytes);
  r = run_cli("lm train --resume '" + bad + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("checksum does not match"), std::string::npos) << r.err;
  // The run itself is complete.
  r = run_cli("lm train --resume '" + d + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("the run is complete (6 of 6 steps)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace attn::lm
