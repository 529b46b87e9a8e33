// Double-precision reference attention and small test utilities. The mask rules are written out
// again here from cli.md, independently of core/mask.cpp, so a mistake in one shows in the other.
#include "reference.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

namespace attn::test {
namespace {

bool visible(const AttentionProblem& p, int h, int i, int j) {
  const MaskSpec& m = p.options.mask;
  const int n_q = p.input.n_q(), n_k = p.input.n_k();
  const int pos = m.causal == CausalAlign::kLowerRight ? i + n_k - n_q : i;
  auto is_global = [&](int x) {
    for (int g : m.global)
      if (g == x) return true;
    return false;
  };
  if (m.causal != CausalAlign::kNone && j > pos) return false;
  if (m.window) {
    const long long w = *m.window, d = static_cast<long long>(pos) - j;  // no int overflow
    bool inside = (m.causal != CausalAlign::kNone) ? (d <= w && j <= pos) : (d <= w && -d <= w);
    if (!inside && !is_global(pos) && !is_global(j)) return false;  // global = listed position
  }
  if (m.key_length && j >= *m.key_length) return false;
  if (!m.custom.empty()) {
    const Matrix& c = m.custom.size() == 1 ? m.custom[0] : m.custom[h];
    if (c(i, j) == 0.0f) return false;
  }
  if (!m.bias.empty()) {
    const Matrix& b = m.bias.size() == 1 ? m.bias[0] : m.bias[h];
    if (b(i, j) == -std::numeric_limits<float>::infinity()) return false;
  }
  return true;
}

RefMat make(int r, int c) {
  RefMat m;
  m.rows = r;
  m.cols = c;
  m.a.assign(static_cast<size_t>(r) * c, 0.0);
  return m;
}

}  // namespace

RefResult reference_attention(const AttentionProblem& p) {
  const AttentionInput& in = p.input;
  const int H = static_cast<int>(in.q.size()), G = static_cast<int>(in.k.size());
  const int n_q = static_cast<int>(in.q[0].rows()), n_k = static_cast<int>(in.k[0].rows());
  const int d_k = static_cast<int>(in.q[0].cols()), d_v = static_cast<int>(in.v[0].cols());
  const double scale =
      p.options.scale ? static_cast<double>(*p.options.scale) : 1.0 / std::sqrt(double(d_k));
  const double T = p.options.temperature;
  const double ninf = -std::numeric_limits<double>::infinity();
  RefResult r;
  for (int h = 0; h < H; ++h) {
    const int g = h / (H / G);
    RefMat S = make(n_q, n_k), Sc = make(n_q, n_k), M = make(n_q, n_k), W = make(n_q, n_k),
           O = make(n_q, d_v);
    std::vector<bool> empty(n_q, false);
    for (int i = 0; i < n_q; ++i) {
      for (int j = 0; j < n_k; ++j) {
        double dot = 0;
        for (int a = 0; a < d_k; ++a) dot += double(in.q[h](i, a)) * double(in.k[g](j, a));
        S(i, j) = dot;
        Sc(i, j) = dot * scale;
        double b = 0;
        if (!p.options.mask.bias.empty())
          b = (p.options.mask.bias.size() == 1 ? p.options.mask.bias[0] : p.options.mask.bias[h])(
              i, j);
        M(i, j) = visible(p, h, i, j) ? Sc(i, j) + b : ninf;
      }
      double mx = ninf;
      for (int j = 0; j < n_k; ++j) mx = std::max(mx, M(i, j) / T);
      if (mx == ninf) {
        empty[i] = true;
        continue;
      }
      double sum = 0;
      for (int j = 0; j < n_k; ++j) sum += (M(i, j) == ninf) ? 0.0 : std::exp(M(i, j) / T - mx);
      for (int j = 0; j < n_k; ++j)
        W(i, j) = (M(i, j) == ninf) ? 0.0 : std::exp(M(i, j) / T - mx) / sum;
      for (int c = 0; c < d_v; ++c) {
        double acc = 0;
        for (int j = 0; j < n_k; ++j) acc += W(i, j) * double(in.v[g](j, c));
        O(i, c) = acc;
      }
    }
    r.scores.push_back(S);
    r.scaled.push_back(Sc);
    r.masked.push_back(M);
    r.weights.push_back(W);
    r.output.push_back(O);
    r.empty_row.push_back(empty);
  }
  return r;
}

Matrix random_matrix(int rows, int cols, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  Matrix m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = d(rng);
  return m;
}

HeadStack random_heads(int heads, int rows, int cols, std::mt19937& rng) {
  HeadStack s;
  for (int h = 0; h < heads; ++h) s.push_back(random_matrix(rows, cols, rng));
  return s;
}

double max_abs_diff(const Matrix& a, const RefMat& b) {
  if (a.rows() != b.rows || a.cols() != b.cols) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (int i = 0; i < b.rows; ++i)
    for (int j = 0; j < b.cols; ++j) {
      double x = a(i, j), y = b(i, j);
      if (std::isinf(x) || std::isinf(y)) {
        if (x != y) return std::numeric_limits<double>::infinity();
        continue;
      }
      if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, std::abs(x - y));
    }
  return worst;
}

std::string temp_path(const std::string& name) {
  // One fresh folder per test process (mkdtemp): a pid alone is reused across runs, and a file
  // left by an earlier process with the same pid made "was it written?" checks flaky.
  static const std::string dir = [] {
    std::string templ = std::string(ATTN_TEST_TMP) + "/run-XXXXXX";
    if (!::mkdtemp(templ.data())) std::abort();
    return templ;
  }();
  static int counter = 0;
  std::ostringstream s;
  s << dir << "/" << counter++ << "_" << name;
  return s.str();
}

std::string temp_dir(const std::string& name) {
  const std::string dir = temp_path(name);
  if (::mkdir(dir.c_str(), 0755) != 0) std::abort();
  return dir;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

static std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

CliResult run_capped(const std::string& args, int mib) {
  return run_cli(args, kSanitized ? "" : "ulimit -v " + std::to_string(mib * 1024) + ";");
}

CliResult run_cli(const std::string& args, const std::string& env) {
  CliResult r;
  std::string out = temp_path("stdout.txt"), err = temp_path("stderr.txt");
  std::string cmd =
      env + " '" + ATTN_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "' </dev/null";
  int raw = std::system(cmd.c_str());
  if (raw == -1) return r;
  // system() runs /bin/sh; a child killed by a signal shows as 128+N from the shell.
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

int spawn_cli(const std::vector<std::string>& args, const std::string& stdout_path) {
  std::vector<char*> argv = {const_cast<char*>(ATTN_CLI_PATH)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(stdout_path.c_str(), "w", stdout) || !freopen("/dev/null", "w", stderr))
      _exit(126);
    execv(ATTN_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

bool wait_for_file(int pid, const std::string& path, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (access(path.c_str(), F_OK) != 0) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != 0 || std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int signal_and_wait(int pid, int signal) {
  kill(pid, signal);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace attn::test
