// `attention-lab seq2seq …` end to end: train a tiny model, translate, draw, evaluate, compare;
// the errors of cli.md (exit 2 naming the flag); Ctrl+C keeping the last complete checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

#include "reference.h"
#include "seq2seq/model_io.h"

namespace attn::s2s {
namespace {

using test::run_cli;
using test::temp_path;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

const std::string& tiny_model() {
  static const std::string path = [] {
    const std::string p = temp_path("cli_tiny.s2s");
    const auto r = run_cli(
        "seq2seq train --score bahdanau --epochs 1 --train-size 64 --hidden 8 "
        "--embed 4 --batch 16 --heldout-size 20 --out '" +
        p + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("epoch 1/1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("held-out exact"), std::string::npos) << r.out;
    return p;
  }();
  return path;
}

TEST(Seq2SeqCli, TrainTranslateAlignEvalCompare) {
  const std::string& m = tiny_model();
  Model loaded;
  std::string error;
  ASSERT_TRUE(load_model(m, loaded, error)) << error;
  EXPECT_NE(loaded.info.find("seq2seq train --score bahdanau"), std::string::npos) << loaded.info;

  auto r = run_cli("seq2seq translate --model '" + m + "' --input 'nov 22 26'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("output: "), std::string::npos);
  EXPECT_NE(r.out.find("alignment"), std::string::npos);
  r = run_cli("seq2seq translate --model '" + m + "' --input 'nov 22 26' --step 2");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 2: emits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a_tj"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("context c_t"), std::string::npos) << r.out;
  r = run_cli("seq2seq translate --model '" + m + "' --input 'nov 22 26' --step 2 --position 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("input position 4 ('2')"), std::string::npos) << r.out;

  const std::string svg = temp_path("align.svg"), png = temp_path("align.png");
  r = run_cli("seq2seq align --model '" + m + "' --input '22.11.2026' --out '" + svg + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string s = slurp(svg);
  EXPECT_EQ(s.rfind("<?xml", 0), 0u);
  EXPECT_NE(s.find(">.</text>"), std::string::npos);  // the input's dots label columns
  r = run_cli("seq2seq align --model '" + m + "' --input '22.11.2026' --out '" + png + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(png).substr(0, 4), "\x89PNG");
  const std::string pdf = temp_path("align.pdf");
  r = run_cli("seq2seq align --model '" + m +
              "' --input '22.11.2026' --colormap grayscale --out '" + pdf + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(pdf).substr(0, 5), "%PDF-");
  r = run_cli("seq2seq align --model '" + m + "' --input '22.11.2026' --colormap jet --out '" +
              pdf + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--colormap"), std::string::npos) << r.err;
  // Two models on the same input: two titled plots in one image.
  r = run_cli("seq2seq align --model '" + m + "' --model '" + m + "' --input '22.11.2026' --out '" +
              svg + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string two = slurp(svg);
  size_t titles = 0;
  for (size_t at = two.find("bahdanau: "); at != std::string::npos;
       at = two.find("bahdanau: ", at + 1))
    ++titles;
  EXPECT_EQ(titles, 2u);

  r = run_cli("seq2seq eval --model '" + m + "' --count 40");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nall "), std::string::npos) << r.out;
  r = run_cli("seq2seq compare --model '" + m + "' --model '" + m + "' --count 40");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bahdanau   bahdanau"), std::string::npos) << r.out;
}

TEST(Seq2SeqCli, WatchDrawsTheAlignmentAsItLearns) {
  const std::string dir = temp_path("watch");
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
  const auto r = run_cli(
      "seq2seq train --score dot --epochs 2 --train-size 64 --hidden 8 --embed 4 "
      "--batch 16 --heldout-size 10 --watch 'nov 22 26' --watch-dir '" +
      dir + "' --watch-every 3 --out '" + temp_path("watch.s2s") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("watch: nov 22 26 -> "), std::string::npos) << r.out;
  // 8 batches in all: images after 0, 3 and 6 batches.
  for (const char* n : {"000000", "000003", "000006"})
    EXPECT_EQ(slurp(dir + "/align-" + n + ".png").substr(0, 4), "\x89PNG") << n;
  EXPECT_TRUE(slurp(dir + "/align-000009.png").empty());
}

TEST(Seq2SeqCli, DatesPrintsTheTask) {
  const auto a = run_cli("seq2seq dates --count 5 --seed 3 --split heldout");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(std::count(a.out.begin(), a.out.end(), '\n'), 5);
  EXPECT_NE(a.out.find('\t'), std::string::npos);
  EXPECT_EQ(run_cli("seq2seq dates --count 5 --seed 3 --split heldout").out, a.out);
  const auto bad = run_cli("seq2seq dates --min-length 150");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--min-length"), std::string::npos) << bad.err;
}

TEST(Seq2SeqCli, ErrorsNameTheFlag) {
  const std::string& m = tiny_model();
  struct Case {
    std::string args, flag;
  } cases[] = {
      {"seq2seq train --score cosine --out '" + temp_path("x.s2s") + "'", "--score"},
      {"seq2seq train --score dot --hidden 7 --out '" + temp_path("x.s2s") + "'", "--hidden"},
      {"seq2seq train --score dot --out /nonexistent-dir/x.s2s", "--out"},
      {"seq2seq train --score dot --out /tmp", "--out"},
      {"seq2seq train --score dot --watch-dir /tmp --out '" + temp_path("x.s2s") + "'",
       "--watch-dir"},
      {"seq2seq train --score dot --watch 'Nov 1' --out '" + temp_path("x.s2s") + "'", "--watch"},
      {"seq2seq train --score dot --watch 'nov 1' --watch-dir /nonexistent --out '" +
           temp_path("x.s2s") + "'",
       "--watch-dir"},
      {"seq2seq translate --model '" + m + "' --input '22 Nov 2026'", "--input"},
      {"seq2seq translate --model '" + temp_path("missing.s2s") + "' --input x", "--model"},
      {"seq2seq align --model '" + m + "' --input 'nov 1 99' --out '" + temp_path("a.jpg") + "'",
       "--out"},
      {"seq2seq eval --model '" + m + "' --count 0", "--count"},
      {"seq2seq translate --model '" + m + "' --input 'nov 1 99' --step 40", "--step"},
      {"seq2seq translate --model '" + m + "' --input 'nov 1 99' --step 1 --position 8",
       "--position"},
      {"seq2seq translate --model '" + m + "' --input 'nov 1 99' --position 1", "--position"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
  }
  // A truncated model file is refused, and the tool does not crash on it.
  const std::string bytes = slurp(m), cut = temp_path("cut.s2s");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const auto r = run_cli("seq2seq eval --model '" + cut + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
}

TEST(Seq2SeqCli, InterruptKeepsTheLastCompleteCheckpoint) {
  const std::string out = temp_path("interrupted.s2s");
  std::remove(out.c_str());
  const int pid =
      test::spawn_cli({"seq2seq", "train", "--score", "dot", "--epochs", "10000", "--train-size",
                       "32", "--heldout-size", "8", "--hidden", "8", "--embed", "4", "--out", out});
  ASSERT_GT(pid, 0);
  // Wait for the first checkpoint, then press Ctrl+C.
  ASSERT_TRUE(test::wait_for_file(pid, out)) << "training ended before its first checkpoint";
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_EQ(test::signal_and_wait(pid, SIGINT), 130);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(out, m, error)) << error;
  EXPECT_NE(m.info.find("epoch "), std::string::npos);
}

}  // namespace
}  // namespace attn::s2s

namespace attn::s2s {
namespace {

// The translate table agrees with each step's weights (printed to 4 decimals by --step): a cell is
// '.' exactly when the weight is below 5% (4.85% too), and otherwise its percentage rounded to a
// whole number, 100 included (never capped at 99).
TEST(Seq2SeqCli, TranslateTableRoundsTheWeightsItShows) {
  const std::string model = std::string(ATTN_SOURCE_DIR) + "/assets/models/bahdanau.s2s";
  const std::string input = "22 nov 2026";
  const auto table = run_cli("seq2seq translate --model '" + model + "' --input '" + input + "'");
  ASSERT_EQ(table.status, 0) << table.err;
  std::istringstream lines(table.out.substr(table.out.find("'.' below 5%")));
  std::string line;
  std::getline(lines, line);  // the legend
  std::getline(lines, line);  // the input characters
  int checked = 0;
  for (int step = 0; std::getline(lines, line) && line.size() > 5; ++step) {
    std::vector<std::string> cells;
    for (size_t at = 5; at + 4 <= line.size(); at += 4) {
      std::string c = line.substr(at, 4);
      c.erase(0, c.find_first_not_of(' '));
      cells.push_back(c);
    }
    ASSERT_EQ(cells.size(), input.size()) << line;
    const auto r = run_cli("seq2seq translate --model '" + model + "' --input '" + input +
                           "' --step " + std::to_string(step));
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream rows(r.out.substr(r.out.find("e_tj      a_tj")));
    std::string row;
    std::getline(rows, row);
    for (size_t j = 0; j < input.size(); ++j) {
      ASSERT_TRUE(std::getline(rows, row));
      std::istringstream f(row);
      int index = 0;
      std::string ch;
      double e = 0, a = 0;
      f >> index >> ch >> e >> a;
      ASSERT_EQ(index, static_cast<int>(j)) << row;
      const double pct = 100 * a;
      // Too close to a boundary to tell from 4 decimals: skip.
      if (std::fabs(pct - 5) < 0.01 || std::fabs(pct - std::floor(pct) - 0.5) < 0.01) continue;
      const std::string want = pct < 5 ? "." : std::to_string(std::lround(pct));
      EXPECT_EQ(cells[j], want) << "step " << step << " position " << j << " weight " << a;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace attn::s2s
