// Standard output that cannot be written (docs/robustness.md, "Standard output"; issue 40): a
// command whose output does not arrive — a full disk (/dev/full) or a closed descriptor (>&-) — is
// exit 1 with `error: cannot write to standard output: …`, never exit 0. `lm init --vocab` below
// the byte-level tokenizer's size is exit 2 and writes no folder.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "lm_fixture.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::run_cli;
using test::temp_path;

// Runs the CLI with standard output redirected as `redirect` says ("> /dev/full", ">&-").
test::CliResult run_redirected(const std::string& args, const std::string& redirect) {
  const std::string err = temp_path("stdout-errors.err");
  const std::string cmd = std::string("'") + ATTN_CLI_PATH + "' " + args + " " + redirect + " 2>'" +
                          err + "' </dev/null";
  const int raw = std::system(cmd.c_str());
  test::CliResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.err = test::read_bytes(err);
  std::remove(err.c_str());
  return r;
}

TEST(StdoutErrors, EveryWriterOfStandardOutputChecksIt) {
  const test::TestModel m = test::make_test_model(test::TestModelSpec{});
  const std::string dir = temp_path("stdout-model");
  test::write_test_model(m, dir);
  const std::string model = " --model '" + dir + "' --text 'the teacher explains'";
  const std::vector<std::string> commands = {"lm generate" + model + " --tokens 3",
                                             "lm tokens" + model,
                                             "lm next" + model,
                                             "trace" + model,
                                             "explain" + model + " --query 1",
                                             "trace --example fear-is",
                                             "examples"};
  for (const std::string& args : commands) {
    SCOPED_TRACE(args);
    // Each writes something when it can (so the failures below are about the output).
    const auto ok = run_cli(args);
    ASSERT_EQ(ok.status, 0) << ok.err;
    ASSERT_FALSE(ok.out.empty());
    const auto full = run_redirected(args, ">/dev/full");
    EXPECT_EQ(full.status, 1) << full.err;
    EXPECT_NE(full.err.find("error: cannot write to standard output: No space left on device"),
              std::string::npos)
        << full.err;
    const auto closed = run_redirected(args, ">&-");
    EXPECT_EQ(closed.status, 1) << closed.err;
    EXPECT_NE(closed.err.find("error: cannot write to standard output: it is closed"),
              std::string::npos)
        << closed.err;
  }
}

TEST(StdoutErrors, ACommandThatWritesNothingThereIsNotAffected) {
  // An error already reported keeps its own status and message.
  const auto bad = run_redirected("trace --example no-such-example", ">/dev/full");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(bad.err.find("standard output"), std::string::npos) << bad.err;
  // Output to a file only: a closed standard output is no error.
  const std::string out = temp_path("stdout-errors.json");
  const auto file = run_redirected("trace --example fear-is -o '" + out + "'", ">&-");
  EXPECT_EQ(file.status, 0) << file.err;
  EXPECT_TRUE(file_exists(out));
  std::remove(out.c_str());
}

TEST(InitVocab, ALlamaVocabularyBelowTheTokenizersIsRefused) {
  const std::string dir = temp_path("init-vocab-10");
  const auto r =
      run_cli("lm init --arch llama --vocab 10 --layers 1 --heads 2 --embd 16 --out '" + dir + "'");
  EXPECT_EQ(r.status, 2) << r.err;
  // 256 bytes and the end of text: 257 tokens (no corpus, no merges).
  EXPECT_NE(r.err.find("--vocab: 10 is fewer than the byte-level tokenizer's 257 tokens"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(file_exists(dir));
  // At the tokenizer's size it is written.
  const auto ok = run_cli(
      "lm init --arch llama --vocab 257 --layers 1 --heads 2 --embd 16 --out '" + dir + "'");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(file_exists(dir + "/config.json"));
}

}  // namespace
}  // namespace attn
