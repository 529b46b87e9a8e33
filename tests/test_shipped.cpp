// Shipped data by short name (io/shipped.h) and where it is found (io/data_dir.h): a data folder
// built here and named by ATTN_DATA_DIR, the build folder's own share/attention-lab, and the
// CLI's `--model NAME` with its error listing the names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "io/data_dir.h"
#include "io/shipped.h"
#include "reference.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}

std::vector<std::string> names(const std::vector<ShippedItem>& items) {
  std::vector<std::string> out;
  for (const ShippedItem& i : items) out.push_back(i.name);
  return out;
}

// Sets ATTN_DATA_DIR for one test and restores the environment afterwards.
class DataDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("ATTN_DATA_DIR");
    had_old = old != nullptr;
    if (old) saved = old;
    root = test::temp_path("data");
    fs::create_directories(root);
    setenv("ATTN_DATA_DIR", (root + "/").c_str(), 1);  // a trailing slash is dropped
  }
  void TearDown() override {
    if (had_old)
      setenv("ATTN_DATA_DIR", saved.c_str(), 1);
    else
      unsetenv("ATTN_DATA_DIR");
  }
  std::string root, saved;
  bool had_old = false;
};

TEST_F(DataDir, ListsFilesByPathWithoutExtensionAndFoldersByTheirMarker) {
  touch(root + "/models/b.s2s");
  touch(root + "/models/bottleneck/a-max40.s2s");
  touch(root + "/models/notes.txt");
  touch(root + "/models/.s2s");  // no name
  touch(root + "/models/lm/tiny/config.json");
  touch(root + "/models/lm/tiny/inner/config.json");  // part of tiny, not a model of its own
  touch(root + "/models/lm/family/small/config.json");
  fs::create_directories(root + "/models/lm/empty");
  EXPECT_EQ(data_dir(), root);
  EXPECT_EQ(names(list_shipped(kSeq2seqModels)),
            (std::vector<std::string>{"b", "bottleneck/a-max40"}));
  EXPECT_EQ(names(list_shipped(kLmModels)), (std::vector<std::string>{"family/small", "tiny"}));
  const std::vector<ShippedItem> items = list_shipped(kSeq2seqModels);
  EXPECT_EQ(items[1].path, root + "/models/bottleneck/a-max40.s2s");
  EXPECT_EQ(list_shipped(kLmModels)[1].path, root + "/models/lm/tiny");
}

TEST_F(DataDir, ResolvesNamesWithOrWithoutExtensionAndTakesExistingPathsAsThey) {
  touch(root + "/models/bahdanau.s2s");
  touch(root + "/models/bottleneck/none-max40.s2s");
  touch(root + "/models/lm/tiny/config.json");
  const std::string own = test::temp_path("own.s2s");
  touch(own);
  std::string error;
  EXPECT_EQ(resolve_shipped(kSeq2seqModels, "bahdanau", error), root + "/models/bahdanau.s2s");
  EXPECT_EQ(resolve_shipped(kSeq2seqModels, "bahdanau.s2s", error), root + "/models/bahdanau.s2s");
  EXPECT_EQ(resolve_shipped(kSeq2seqModels, "bottleneck/none-max40", error),
            root + "/models/bottleneck/none-max40.s2s");
  EXPECT_EQ(resolve_shipped(kSeq2seqModels, own, error), own);
  EXPECT_EQ(resolve_shipped(kLmModels, "tiny", error), root + "/models/lm/tiny");
  EXPECT_EQ(resolve_shipped(kLmModels, "tiny/", error), root + "/models/lm/tiny");
  EXPECT_EQ(error, "");
}

TEST_F(DataDir, AnUnknownNameListsTheShippedOnesAndWhereTheyAre) {
  touch(root + "/models/bahdanau.s2s");
  touch(root + "/models/dot.s2s");
  std::string error;
  EXPECT_FALSE(resolve_shipped(kSeq2seqModels, "bahdanu", error));
  EXPECT_EQ(error,
            "'bahdanu' is neither a file nor the name of a shipped seq2seq model; shipped seq2seq "
            "models: bahdanau, dot (in " +
                root + "/models)");
  error.clear();
  EXPECT_FALSE(resolve_shipped(kLmModels, "gpt2", error));
  EXPECT_EQ(error,
            "'gpt2' is neither a folder nor the name of a shipped language model; no shipped "
            "language models in " +
                root + "/models/lm");
  error.clear();
  EXPECT_FALSE(resolve_shipped(kSeq2seqModels, "", error));
  EXPECT_NE(error.find("expected a seq2seq model file or the name of a shipped one"),
            std::string::npos)
      << error;
}

TEST_F(DataDir, AMissingDataFolderSaysWhereItLooked) {
  setenv("ATTN_DATA_DIR", (root + "/nowhere").c_str(), 1);
  EXPECT_EQ(data_dir_description(), "$ATTN_DATA_DIR (" + root + "/nowhere)");
  std::string error;
  EXPECT_FALSE(resolve_shipped(kSeq2seqModels, "bahdanau", error));
  EXPECT_NE(error.find("no shipped seq2seq models in " + root + "/nowhere/models"),
            std::string::npos)
      << error;
}

// Without ATTN_DATA_DIR, a program in build/bin finds build/share/attention-lab, the build
// folder's link to assets/, exactly as an installed one finds PREFIX/share/attention-lab.
TEST(DataDirBuildTree, IsBesideTheExecutableAndHoldsTheShippedModels) {
  const char* old = std::getenv("ATTN_DATA_DIR");
  const std::string saved = old ? old : "";
  unsetenv("ATTN_DATA_DIR");
  const std::string exe = executable_dir();
  const std::string dir = data_dir();
  const std::vector<std::string> shipped = names(list_shipped(kSeq2seqModels));
  if (old) setenv("ATTN_DATA_DIR", saved.c_str(), 1);
  EXPECT_EQ(dir, fs::path(exe).parent_path().string() + "/share/attention-lab");
  EXPECT_TRUE(fs::equivalent(dir, std::string(ATTN_SOURCE_DIR) + "/assets"));
  for (const char* name : {"bahdanau", "none", "bottleneck/none-max40", "local-m"})
    EXPECT_NE(std::find(shipped.begin(), shipped.end(), name), shipped.end()) << name;
}

TEST(ModelFlag, TakesAShortNameAndListsTheNamesWhenItIsUnknown) {
  test::CliResult r = test::run_cli("seq2seq translate --model bahdanau --input 'nov 22 26'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("output: 2026-11-22\n"), std::string::npos) << r.out;
  r = test::run_cli("seq2seq eval --model bahdanu --count 5");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("error: --model: 'bahdanu' is neither a file nor the name of a shipped "
                        "seq2seq model; shipped seq2seq models: bahdanau, bottleneck/",
                        0),
            0u)
      << r.err;
  r = test::run_cli("seq2seq models");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bottleneck/none-max40\tnone, hidden 64, embed 16; inputs of at most 40 "
                       "characters; epoch 6 of 6, held-out exact "),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace attn
