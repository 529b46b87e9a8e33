// Independent double-precision reference for attention, written as plain loops (no Eigen
// products), plus helpers tests share: random matrices, running the CLI, temp paths.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn::test {

// Row-major double tensor of one head.
struct RefMat {
  int rows = 0, cols = 0;
  std::vector<double> a;
  double& operator()(int i, int j) { return a[static_cast<size_t>(i) * cols + j]; }
  double operator()(int i, int j) const { return a[static_cast<size_t>(i) * cols + j]; }
};

struct RefResult {
  std::vector<RefMat> scores, scaled, masked, weights, output;  // per query head
  std::vector<std::vector<bool>> empty_row;
};

// Attention per cli.md's semantics, computed in double from the float inputs, with the mask
// rules re-derived here (not shared with the engine).
RefResult reference_attention(const AttentionProblem& p);

Matrix random_matrix(int rows, int cols, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f);
HeadStack random_heads(int heads, int rows, int cols, std::mt19937& rng);

// Max |a - b| over all cells; -inf equal to -inf counts as 0, any other mismatch of infinities as
// inf.
double max_abs_diff(const Matrix& a, const RefMat& b);

// Runs build/bin/attention-lab with the given arguments (a shell-quoted string), capturing
// stdout and stderr. Returns the exit status (or 128+signal when killed by a signal).
struct CliResult {
  int status = -1;
  std::string out, err;
};
// `env` is prepended to the command, e.g. "OCL_ICD_VENDORS=/empty".
CliResult run_cli(const std::string& args, const std::string& env = "");
// Whether this build runs under AddressSanitizer.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
// run_cli with the command's address space capped at `mib` MiB. Plain builds only: sanitizer
// builds reserve terabytes of address space, so there it runs uncapped (the tests still check
// every exit status and file).
CliResult run_capped(const std::string& args, int mib);

// The program started in a child process with `args` (as argv, no shell), its stdout written to
// `stdout_path` and its stderr to /dev/null; the child's pid.
int spawn_cli(const std::vector<std::string>& args, const std::string& stdout_path = "/dev/null");
// Waits until `path` exists while the child `pid` still runs, at most `seconds`. False when the
// child ended first or time ran out.
bool wait_for_file(int pid, const std::string& path, int seconds = 60);
// Sends `signal` to the child `pid` and waits for it to end: its exit status, or 128 + N when
// signal N killed it.
int signal_and_wait(int pid, int signal);

// A fresh path under the test temp folder.
std::string temp_path(const std::string& name);
// A fresh empty folder under the test temp folder.
std::string temp_dir(const std::string& name);
// The names in a folder (without "." and ".."), sorted.
std::vector<std::string> dir_entries(const std::string& dir);

}  // namespace attn::test
