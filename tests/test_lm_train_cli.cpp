// `attention-lab lm train` and `lm heads` end to end: a short run prints its progress and figures
// and writes a GPT-2 folder that `lm` reads back (standard config keys, GPT-2's tensor names, the
// merges it learned); the same command gives the same bytes; Ctrl+C keeps a readable folder; bad
// options are exit 2 naming the flag.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "io/safetensors.h"
#include "lm/model.h"
#include "reference.h"

namespace attn::lm {
namespace {

using test::run_cli;
using test::temp_path;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

const char* kTiny =
    "--layers 2 --heads 2 --embd 16 --context 16 --batch 8 --steps 30 --warmup 5 --lr 0.005 "
    "--eval-every 10 --attention-only";

const std::string& induction_folder() {
  static const std::string dir = [] {
    const std::string d = temp_path("lm-train-induction");
    const auto r =
        run_cli(std::string("lm train --data induction ") + kTiny + " --out '" + d + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    // One line per interval with the progress bar and the held-out figures.
    for (const char* s : {"step 10/30 [", "step 30/30 [####################] 100%", "held-out ",
                          "in-context ", "induction L", "previous-token L", "wrote "})
      EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
    EXPECT_NE(r.out.find("step  0/30"), std::string::npos) << r.out;
    return d;
  }();
  return dir;
}

TEST(LmTrainCli, WritesAFolderThatLmReads) {
  const std::string& d = induction_folder();
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(d, m, error)) << error;
  EXPECT_FALSE(m.mlp);  // attention-only: the MLP weights are there, and zero
  EXPECT_EQ(m.config.n_layer, 2);
  EXPECT_EQ(m.config.n_positions, 16);
  EXPECT_EQ(m.config.vocab_size, 283);
  // config.json with GPT-2's keys.
  const auto config = nlohmann::json::parse(slurp(d + "/config.json"));
  for (const char* key : {"model_type", "n_layer", "n_head", "n_embd", "n_positions", "n_ctx",
                          "vocab_size", "layer_norm_epsilon", "activation_function"})
    EXPECT_TRUE(config.contains(key)) << key;
  EXPECT_EQ(config["model_type"], "gpt2");
  // GPT-2's tensor names and shapes, every one.
  SafetensorsFile f;
  ASSERT_TRUE(f.open(d + "/model.safetensors", error)) << error;
  EXPECT_EQ(f.find("h.1.mlp.c_fc.weight")->shape, (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(f.find("h.0.attn.c_attn.weight")->shape, (std::vector<int64_t>{16, 48}));
  EXPECT_EQ(f.find("wte.weight")->shape, (std::vector<int64_t>{283, 16}));
  // The 26 letter merges, one per line after the version line.
  const std::string merges = slurp(d + "/merges.txt");
  EXPECT_EQ(std::count(merges.begin(), merges.end(), '\n'), 27);
  EXPECT_NE(merges.find("\xC4\xA0 q\n"), std::string::npos);
  const auto log = nlohmann::json::parse(slurp(d + "/training.json"));
  EXPECT_EQ(log["steps_done"], 30);
  EXPECT_EQ(log["history"].size(), 4u);
  EXPECT_NE(log["command"].get<std::string>().find("--attention-only"), std::string::npos);

  auto r = run_cli("lm next --model '" + d + "' --text ' q x m' --top 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3);
  r = run_cli("lm heads --model '" + d + "' --text ' q x m b q x m b'");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"attention-only", "layer  head  previous", "best previous-token head",
                        "best induction head",
                        "copies the repeat: predicts the token that "
                        "followed last time"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_NE(r.out.find("of 3 times"), std::string::npos) << r.out;  // x m b after the repeat's q
}

TEST(LmTrainCli, TheSameCommandGivesTheSameBytes) {
  const std::string& d = induction_folder();
  const std::string again = temp_path("lm-train-induction-again");
  const auto r =
      run_cli(std::string("lm train --data induction ") + kTiny + " --out '" + again + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d + "/model.safetensors"), slurp(again + "/model.safetensors"));
  EXPECT_EQ(slurp(d + "/vocab.json"), slurp(again + "/vocab.json"));
}

TEST(LmTrainCli, StoriesLearnMergesAndAnMlp) {
  const std::string d = temp_path("lm-train-stories");
  const auto r = run_cli(
      "lm train --data stories --stories 60 --merges 150 --layers 1 --heads 2 --embd 16 "
      "--context 16 --batch 4 --steps 4 --eval-every 2 --out '" +
      d + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("merges learned"), std::string::npos) << r.out;
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(d, m, error)) << error;
  EXPECT_TRUE(m.mlp);
  EXPECT_GT(m.tokenizer.merges().size(), 100u);
  EXPECT_EQ(m.tokenizer.decode(m.tokenizer.encode("Tom found a red ball.")),
            "Tom found a red ball.");
}

TEST(LmTrainCli, TextFromAFile) {
  const std::string corpus = temp_path("corpus.txt"), d = temp_path("lm-train-text");
  std::string text;
  for (int i = 0; i < 40; ++i) text += "The teacher explains attention to the class again. ";
  std::ofstream(corpus) << text;
  const auto r = run_cli("lm train --data text --corpus '" + corpus +
                         "' --merges 40 --layers 1 --heads 1 --embd 8 --context 8 --batch 2 "
                         "--steps 2 --out '" +
                         d + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  Model m;
  std::string error;
  EXPECT_TRUE(load_model(d, m, error)) << error;
}

TEST(LmTrainCli, BadOptionsNameTheFlag) {
  const std::string out = temp_path("lm-train-bad");
  const std::string file = temp_path("lm-train-file");
  std::ofstream(file) << "x";
  const struct {
    std::string args, flag;
  } cases[] = {
      {"lm train --out '" + out + "' --embd 30 --heads 4", "--embd"},
      {"lm train --out '" + out + "' --data poems", "--data"},
      {"lm train --out '" + out + "' --schedule step", "--schedule"},
      {"lm train --out '" + out + "' --data text", "--corpus"},
      {"lm train --out '" + out + "' --data text --corpus /no/such/file", "--corpus"},
      {"lm train --out '" + out + "' --data text --corpus '" + file + "'", "--corpus"},
      {"lm train --out '" + out + "' --corpus '" + file + "'", "--corpus"},
      {"lm train --out '" + file + "'", "--out"},
      {"lm train --out '" + out + "' --context 4", "--context"},
      {"lm train --out '" + out + "' --steps 0", "--steps"},
      {"lm heads --model /no/such/model --text ' a'", "--model"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << c.args << "\n" << r.err;
  }
}

TEST(LmTrainCli, CtrlCKeepsAReadableFolder) {
  const std::string out = temp_path("lm-train-interrupted");
  const std::string log = temp_path("lm-train-interrupted.log");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!freopen(log.c_str(), "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execl(ATTN_CLI_PATH, ATTN_CLI_PATH, "lm", "train", "--layers", "1", "--heads", "2", "--embd",
          "16", "--context", "16", "--batch", "4", "--steps", "100000000", "--eval-every", "5",
          "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the first checkpoint (step 0 is written before training starts), then Ctrl+C.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int status = 0;
  while (access((out + "/training.json").c_str(), F_OK) != 0 &&
         std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "training ended before its first checkpoint";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGINT);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(out, m, error)) << error;
  const auto j = nlohmann::json::parse(slurp(out + "/training.json"));
  EXPECT_GT(j["steps_done"].get<long>(), 0);
  EXPECT_LT(j["steps_done"].get<long>(), 100000000);
  const auto r = run_cli("lm next --model '" + out + "' --text ' a b'");
  EXPECT_EQ(r.status, 0) << r.err;
}

}  // namespace
}  // namespace attn::lm
