// `attention-lab lm train` and `lm heads` end to end: a short run prints its progress and figures
// and writes a GPT-2 folder that `lm` reads back (standard config keys, GPT-2's tensor names, the
// merges it learned); the same command gives the same bytes; Ctrl+C keeps a readable folder; bad
// options are exit 2 naming the flag.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "io/safetensors.h"
#include "lm/model.h"
#include "lm/train_checkpoint.h"
#include "lm/trainer.h"
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

// Today's architecture: RoPE, RMSNorm, SwiGLU and two query heads sharing one K/V head, written
// as a Llama folder (the transformers library's names, tokenizer.json) that `lm` reads back and
// that learns (the held-out loss falls), the same bytes for the same command.
TEST(LmTrainCli, TheLlamaArchitectureWritesATodaysFolder) {
  const std::string d = temp_path("lm-train-llama");
  const std::string cmd =
      "lm train --arch llama --kv-heads 1 --data induction --layers 2 --heads 2 --embd 16 "
      "--context 16 --batch 8 --steps 30 --warmup 5 --lr 0.01 --eval-every 10 --out '";
  auto r = run_cli(cmd + d + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Llama-style transformer (2 query heads sharing 1 K/V heads, RoPE, "
                       "RMSNorm, SwiGLU"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tokenizer.json"), std::string::npos) << r.out;
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(d, m, error)) << error;
  EXPECT_EQ(m.config.arch, LmArch::kLlama);
  EXPECT_EQ(m.config.n_head, 2);
  EXPECT_EQ(m.config.kv_heads(), 1);
  EXPECT_TRUE(m.config.tied);
  EXPECT_EQ(m.config.mlp_size(), 48);  // 8/3 · 16 rounded up to a multiple of 8
  SafetensorsFile f;
  ASSERT_TRUE(f.open(d + "/model.safetensors", error)) << error;
  ASSERT_NE(f.find("model.layers.1.self_attn.k_proj.weight"), nullptr);
  EXPECT_EQ(f.find("model.layers.1.self_attn.k_proj.weight")->shape, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(f.find("model.layers.0.mlp.gate_proj.weight")->shape, (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(f.find("lm_head.weight"), nullptr);  // tied
  EXPECT_EQ(f.find("model.norm.weight")->dtype, "F32");
  EXPECT_EQ(nlohmann::json::parse(slurp(d + "/config.json"))["torch_dtype"], "float32");
  EXPECT_EQ(access((d + "/tokenizer.json").c_str(), F_OK), 0);
  const auto log = nlohmann::json::parse(slurp(d + "/training.json"));
  EXPECT_NE(log["command"].get<std::string>().find("--arch llama --kv-heads 1"), std::string::npos);
  const auto& h = log["history"];
  ASSERT_EQ(h.size(), 4u);
  EXPECT_LT(h[3]["heldout_loss"].get<double>(), h[0]["heldout_loss"].get<double>() - 1.0);

  r = run_cli("lm heads --model '" + d + "' --text ' q x m b q x m b'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("best induction head"), std::string::npos) << r.out;
  // Attention shaping is said on the first line and kept in the command that trained the model.
  const std::string shaped = temp_path("lm-train-llama-shaped");
  r = run_cli(cmd + shaped + "' --shape-previous 5 --shape-steps 20");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("attention shaping: layer 0's head 0 pulled toward the previous token "
                       "(weight 5) for the first 20 steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      nlohmann::json::parse(slurp(shaped + "/training.json"))["command"].get<std::string>().find(
          "--shape-previous 5 --shape-steps 20"),
      std::string::npos);
  // The checkpoint keeps them for --resume.
  TrainCheckpoint checkpoint;
  ASSERT_TRUE(parse_checkpoint(slurp(shaped + "/checkpoint.bin"), checkpoint, error)) << error;
  const auto run = nlohmann::json::parse(checkpoint.run);
  EXPECT_EQ(run["shape_previous"].get<double>(), 5.0);
  EXPECT_EQ(run["shape_steps"].get<long>(), 20);
  const std::string again = temp_path("lm-train-llama-again");
  r = run_cli(cmd + again + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d + "/model.safetensors"), slurp(again + "/model.safetensors"));
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
      {"lm train --out '" + out + "' --arch bert", "--arch"},
      {"lm train --out '" + out + "' --arch llama --heads 4 --kv-heads 3", "--kv-heads"},
      {"lm train --out '" + out + "' --heads 4 --kv-heads 2", "--kv-heads"},
      {"lm train --out '" + out + "' --arch llama --heads 4 --embd 12", "--embd"},
      {"lm train --out '" + out + "' --shape-previous 5", "--shape-steps"},
      {"lm train --out '" + out + "' --shape-steps 100", "--shape-previous"},
      {"lm train --out '" + out + "' --shape-previous -1 --shape-steps 10", "--shape-previous"},
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
  const int pid = test::spawn_cli(
      {"lm", "train", "--layers", "1", "--heads", "2", "--embd", "16", "--context", "16", "--batch",
       "4", "--steps", "100000000", "--eval-every", "5", "--out", out},
      log);
  ASSERT_GT(pid, 0);
  // Wait for the first checkpoint (step 0 is written before training starts), then Ctrl+C.
  ASSERT_TRUE(test::wait_for_file(pid, out + "/training.json"))
      << "training ended before its first checkpoint";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(test::signal_and_wait(pid, SIGINT), 130);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(out, m, error)) << error;
  const auto j = nlohmann::json::parse(slurp(out + "/training.json"));
  EXPECT_GT(j["steps_done"].get<long>(), 0);
  EXPECT_LT(j["steps_done"].get<long>(), 100000000);
  const auto r = run_cli("lm next --model '" + out + "' --text ' a b'");
  EXPECT_EQ(r.status, 0) << r.err;
}

// ---- issue 28: finite flags, no partial folders, sizes that cannot fit, temporaries after kill
// ----

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

TEST(LmTrainCli, NanAndInfiniteFloatFlagsAreRefusedNamingTheFlag) {
  const std::string out = temp_path("lm-train-nan");
  for (const char* flag : {"--weight-decay", "--init-std", "--min-lr", "--lr"})
    for (const char* bad : {"nan", "inf", "-inf", "-nan"}) {
      const std::string args = "lm train --out '" + out + "' " + kTiny + " " + flag + " " + bad;
      const auto r = run_cli(args);
      EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(std::string(flag) + ": expected a finite number"), std::string::npos)
          << args << "\n"
          << r.err;
      EXPECT_EQ(r.out, "") << args;
    }
  for (const char* bad : {"nan", "inf"}) {
    const auto r = run_cli("lm init --out '" + out + "' --std " + bad);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("--std"), std::string::npos) << r.err;
    const auto n = run_cli("lm next --model /no/such --text a --temperature " + std::string(bad));
    EXPECT_EQ(n.status, 2) << n.err;
    EXPECT_NE(n.err.find("--temperature"), std::string::npos) << n.err;
  }
  EXPECT_FALSE(exists(out));
  // The core check refuses NaN too (the app's trainer uses it directly).
  TrainOptions o;
  o.weight_decay = std::nan("");
  EXPECT_NE(check_train_options(o).find("weight_decay"), std::string::npos);
  o = TrainOptions{};
  o.init_std = std::nanf("");
  EXPECT_NE(check_train_options(o).find("init_std"), std::string::npos);
  o = TrainOptions{};
  o.min_lr_ratio = std::nan("");
  EXPECT_NE(check_train_options(o).find("min_lr_ratio"), std::string::npos);
}

TEST(LmTrainCli, ACorpusThatCannotBeUsedLeavesNoFolder) {
  const std::string dir = test::temp_dir("bad-corpora");
  const std::string empty = dir + "/empty.txt", binary = dir + "/binary.bin", fifo = dir + "/fifo",
                    folder = dir + "/folder", tiny = dir + "/short.txt";
  std::ofstream(empty).flush();
  std::ofstream(binary, std::ios::binary) << std::string("\xff\xfe\x00\x01\x80", 5);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(mkdir(folder.c_str(), 0700), 0);
  std::ofstream(tiny) << "ab";
  struct Case {
    const char* what;
    std::string corpus;
    bool init;  // lm init refuses it too (a short text is a fine corpus for merges)
  };
  const std::vector<Case> cases = {{"missing", dir + "/no-such.txt", true},
                                   {"empty", empty, true},
                                   {"binary", binary, true},
                                   {"fifo", fifo, true},
                                   {"folder", folder, true},
                                   {"too short", tiny, false}};
  for (const Case& c : cases) {
    // A nested --out: neither it nor its parent may appear.
    const std::string parent = temp_path("no-folder"), out = parent + "/model";
    const auto t =
        run_cli("lm train --data text --corpus '" + c.corpus + "' --out '" + out + "' " + kTiny);
    EXPECT_EQ(t.status, 2) << c.what << "\n" << t.err;
    EXPECT_NE(t.err.find("--corpus"), std::string::npos) << c.what << "\n" << t.err;
    EXPECT_FALSE(exists(parent)) << c.what << ": lm train left " << parent;
    if (!c.init) continue;
    const auto i = run_cli("lm init --corpus '" + c.corpus + "' --out '" + out + "'");
    EXPECT_EQ(i.status, 2) << c.what << "\n" << i.err;
    EXPECT_NE(i.err.find("--corpus"), std::string::npos) << c.what << "\n" << i.err;
    EXPECT_FALSE(exists(parent)) << c.what << ": lm init left " << parent;
  }
}

TEST(LmTrainCli, SizesThatCannotFitInMemoryAreRefusedBeforeAnything) {
  const std::string out = temp_path("lm-train-huge");
  const auto t = run_cli(
      "lm train --layers 48 --heads 64 --embd 4096 --context 4096 --batch "
      "4096 --steps 1 --out '" +
      out + "'");
  EXPECT_EQ(t.status, 2) << t.err;
  EXPECT_NE(t.err.find("training would need"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("at most 4.3 GB (4294967296 bytes)"), std::string::npos) << t.err;
  EXPECT_EQ(t.out, "");
  EXPECT_FALSE(exists(out));
  // The parameters alone: 48 layers of 12·4096² + 13·4096 and the embeddings, in float32, four
  // copies (weights, gradient, two moments) and one gradient per thread: already far beyond.
  const double C = 4096, params = 48 * (12 * C * C + 13 * C) + (4096 + 28) * C + 2 * C;
  EXPECT_GT(params * 4 * 5, 4294967296.0);
  const auto i = run_cli("lm init --layers 1024 --heads 16 --embd 65536 --out '" + out + "'");
  EXPECT_EQ(i.status, 2) << i.err;
  EXPECT_NE(i.err.find("bytes) are allowed"), std::string::npos) << i.err;
  EXPECT_FALSE(exists(out));
  // A size that fits still trains (the limit is not in the way of the documented runs).
  const auto ok = run_cli("lm train --out '" + out + "' " + kTiny);
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(exists(out + "/model.safetensors"));
}

// Runs `lm train` in a child with stdout and stderr to /dev/null; returns its pid.
int spawn_train(std::vector<std::string> args) {
  args.insert(args.begin(), {"lm", "train"});
  return test::spawn_cli(args);
}

TEST(LmTrainCli, SigintOrSigtermBeforeTheFirstCheckpointLeavesNoFolder) {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string out = temp_path("lm-train-early-signal");
    // A million stories take seconds to write and learn merges from: the signal comes first.
    const int pid = spawn_train({"--data", "stories", "--stories", "1000000", "--out", out});
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "lm train ended before the signal";
    EXPECT_FALSE(exists(out)) << "the folder exists before the first checkpoint";
    test::signal_and_wait(pid, sig);
    EXPECT_FALSE(exists(out)) << "signal " << sig << " left " << out;
  }
}

// The boot tag atomic_file.cpp writes in a temporary file's name: the first 8 hex digits of
// /proc/sys/kernel/random/boot_id, read here on its own.
std::string boot_tag() {
  std::string id = slurp("/proc/sys/kernel/random/boot_id"), tag;
  for (char c : id)
    if (std::isxdigit(static_cast<unsigned char>(c)) && tag.size() < 8) tag += c;
  return tag;
}

TEST(LmTrainCli, SigkillDuringCheckpointsLeavesNoTemporaryFileAfterTheNextWrite) {
  const std::string out = temp_path("lm-train-killed");
  const std::vector<std::string> args = {
      "--layers", "1", "--heads", "2",         "--embd",       "16", "--context", "16",
      "--batch",  "4", "--steps", "100000000", "--eval-every", "1",  "--out",     out};
  for (int run = 0; run < 5; ++run) {
    const int pid = spawn_train(args);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(test::wait_for_file(pid, out + "/training.json"));
    std::this_thread::sleep_for(std::chrono::milliseconds(7 + 31 * run));
    EXPECT_EQ(test::signal_and_wait(pid, SIGKILL), 128 + SIGKILL);
  }
  // A leftover of a dead writer for certain (the kills above leave one only now and then): a
  // child that has exited has a pid no process holds.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  const std::string planted =
      out + "/.config.json.attn-tmp-0123456789abcdef-" + std::to_string(dead) + "-" + boot_tag();
  std::ofstream(planted) << "half a config";
  // The next write to the folder sweeps what dead writers left.
  std::vector<std::string> again = args;
  again[11] = "2";  // --steps 2: runs to the end
  const int pid = spawn_train(again);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_FALSE(exists(planted));
  for (const std::string& name : test::dir_entries(out)) {
    EXPECT_EQ(name.find(".attn-tmp-"), std::string::npos) << name;
    EXPECT_EQ(name.find(".attn-bak-"), std::string::npos) << name;
  }
  Model m;
  std::string error;
  EXPECT_TRUE(load_model(out, m, error)) << error;
}

}  // namespace
}  // namespace attn::lm
