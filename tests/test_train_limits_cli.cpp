// Training corpus limits (docs/robustness.md, "Limits"; issue 40): a corpus is checked against the
// stated training memory limit before it is read or written — exit 2 with the numbers, no folder.
// The limit is lowered with ATTN_TRAIN_MEMORY_LIMIT_MIB so a small generated corpus crosses it;
// the expected figures are worked out here from the file's size.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::run_cli;
using test::temp_path;

const char* kSmallModel =
    " --merges 40 --layers 1 --heads 1 --embd 8 --context 8 --batch 2 --steps 2 --attention-only";

// A generated corpus of about `bytes` bytes of ordinary sentences.
std::string write_corpus(const std::string& name, size_t bytes) {
  const std::string path = temp_path(name);
  std::string text;
  while (text.size() < bytes) text += "The teacher explains attention to the class again. ";
  std::ofstream(path) << text;
  return path;
}

TEST(TrainLimits, ACorpusOverTheMemoryLimitIsRefusedWithTheNumbers) {
  const std::string corpus = write_corpus("limit-corpus.txt", 1 << 20);  // 1 MiB and a little
  const long size = static_cast<long>(test::read_bytes(corpus).size());
  const std::string out = temp_path("limit-out");
  // 6 bytes per byte of corpus: about 6.3 MB, over a limit of 4 MiB whatever the tiny model takes.
  const auto r =
      run_cli("lm train --data text --corpus '" + corpus + "' --out '" + out + "'" + kSmallModel,
              "ATTN_TRAIN_MEMORY_LIMIT_MIB=4");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: --corpus: " + corpus + ": training would need ", 0), 0u) << r.err;
  EXPECT_NE(
      r.err.find(std::to_string(6 * size) + " for the corpus's " + std::to_string(size) + " bytes"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("at most 4194304 bytes (4.0 MiB) are allowed"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(out));
  // Under a limit it fits (6.3 MB of data and a model of a few KB within 8 MiB), the run goes on.
  const auto ok =
      run_cli("lm train --data text --corpus '" + corpus + "' --out '" + out + "'" + kSmallModel,
              "ATTN_TRAIN_MEMORY_LIMIT_MIB=8");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(file_exists(out + "/config.json"));
}

TEST(TrainLimits, StoriesAreCountedBeforeTheyAreWritten) {
  const std::string out = temp_path("limit-stories");
  const auto r = run_cli("lm train --data stories --stories 2000 --out '" + out + "'" + kSmallModel,
                         "ATTN_TRAIN_MEMORY_LIMIT_MIB=1");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: --stories: 2000 stories: training would need ", 0), 0u) << r.err;
  // The figures agree with each other: the data is 6 bytes per byte of the stories.
  std::smatch m;
  const std::regex figures("([0-9]+) for the corpus's ([0-9]+) bytes");
  ASSERT_TRUE(std::regex_search(r.err, m, figures)) << r.err;
  const double data = std::stod(m[1]), bytes = std::stod(m[2]);
  EXPECT_EQ(data, 6 * bytes);
  // 2000 stories of a few sentences each: between 100 and 2000 bytes a story.
  EXPECT_GT(bytes, 2000 * 100.0);
  EXPECT_LT(bytes, 2000 * 2000.0);
  EXPECT_FALSE(file_exists(out));
}

}  // namespace
}  // namespace attn
