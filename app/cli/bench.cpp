// `attention-lab bench`: times each backend's outputs-only path against this machine's practical
// limit (an Eigen matrix product on every core), the trace recompute of a small example, and the
// peak memory of the fused path in a fresh process.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "attention/engine.h"
#include "attention/parallel.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/fused.h"
#include "backends/score_compare.h"
#include "cli/cli.h"

namespace attn::cli {
namespace {

struct BenchArgs {
  int n = 2048, n_k = 0, d = 64, heads = 8, kv_heads = 0, window = -1, runs = 5, device = 0;
  // The peak-memory run: by default the long-sequence case the fused path exists for.
  int memory_n = 16384, memory_heads = 4;
  // The trace-recompute run: an edit of one value of this example, then its whole trace.
  int trace_n = 64, trace_heads = 4;
  bool trace_dense = false;
  bool causal = false, json = false, trace_only = false, peak_child = false;
  bool compare_scores = false;
  std::string backend = "all";
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One warm-up call, then the median of `runs` timed calls (fewer when one call takes > 2 s).
double median_seconds(const std::function<void()>& f, int runs) {
  auto t0 = Clock::now();
  f();
  const double warm = seconds_since(t0);
  if (warm > 2.0) runs = std::min(runs, 3);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    t0 = Clock::now();
    f();
    times.push_back(seconds_since(t0));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Two functions timed alternately (one warm-up each, then the medians), so a busy machine slows
// both alike and their ratio stays meaningful.
std::pair<double, double> median_seconds_paired(const std::function<void()>& f,
                                                const std::function<void()>& g, int runs) {
  auto t0 = Clock::now();
  f();
  g();
  if (seconds_since(t0) > 4.0) runs = std::min(runs, 3);
  std::vector<double> tf, tg;
  for (int r = 0; r < runs; ++r) {
    t0 = Clock::now();
    f();
    tf.push_back(seconds_since(t0));
    t0 = Clock::now();
    g();
    tg.push_back(seconds_since(t0));
  }
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

AttentionProblem make_problem(int heads, int kv_heads, int n_q, int n_k, int d, bool causal,
                              int window) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto stack = [&](int count, int rows) {
    HeadStack s;
    for (int h = 0; h < count; ++h) {
      Matrix m(rows, d);
      for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = dist(rng);
      s.push_back(std::move(m));
    }
    return s;
  };
  AttentionProblem p;
  p.input.q = stack(heads, n_q);
  p.input.k = stack(kv_heads, n_k);
  p.input.v = stack(kv_heads, n_k);
  if (causal) p.options.mask.causal = CausalAlign::kTopLeft;
  if (window >= 0) p.options.mask.window = window;
  return p;
}

// Peak resident memory of this process so far, in KiB (VmHWM), or -1 when unknown.
long peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// The practical limit: C = A·B in single precision, rows split across every core.
double eigen_gemm_seconds(int s, int runs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  Matrix a(s, s), b(s, s), c(s, s);
  for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = dist(rng), b.data()[i] = dist(rng);
  return median_seconds(
      [&] {
        run_shards(s, thread_count(0), [&](int, int r0, int r1) {
          c.middleRows(r0, r1 - r0).noalias() = a.middleRows(r0, r1 - r0) * b;
        });
      },
      runs);
}

// Runs the fused CPU path once in this (fresh) process and prints its peak memory.
int run_peak_child(const BenchArgs& a) {
  AttentionProblem p = make_problem(a.heads, a.kv_heads, a.n, a.n_k, a.d, a.causal, a.window);
  const long inputs = peak_rss_kib();
  HeadStack out = fused_attention_cpu(p);
  std::cout << "inputs_kib=" << inputs << " peak_kib=" << peak_rss_kib() << "\n";
  return out.empty() ? kExitRuntime : kExitOk;
}

// Re-invokes this executable to measure the fused path's peak memory untouched by this process's
// earlier allocations. Returns {peak KiB, KiB after creating the inputs} or {-1, -1}.
std::pair<long, long> measure_peak_in_child(const BenchArgs& a, int n, int heads) {
  char exe[4096];
  const ssize_t len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) return {-1, -1};
  exe[len] = 0;
  std::ostringstream cmd;
  // MHA stays MHA at another head count; MQA/GQA keep their K/V heads when they divide.
  const int kv = a.kv_heads == a.heads ? heads : (heads % a.kv_heads == 0 ? a.kv_heads : heads);
  cmd << "'" << exe << "' bench --peak-child --n " << n << " --d " << a.d << " --heads " << heads
      << " --kv-heads " << kv << (a.causal ? " --causal" : "");
  if (a.window >= 0) cmd << " --window " << a.window;
  FILE* f = ::popen(cmd.str().c_str(), "r");
  if (!f) return {-1, -1};
  long inputs = -1, peak = -1;
  if (std::fscanf(f, "inputs_kib=%ld peak_kib=%ld", &inputs, &peak) != 2) inputs = peak = -1;
  if (::pclose(f) != 0) return {-1, -1};
  return {peak, inputs};
}

std::string fixed(double x, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

// Milliseconds with enough digits for small problems.
std::string ms(double seconds) { return fixed(seconds * 1e3, seconds < 0.01 ? 3 : 1); }

// --compare-scores: the scores stage as the dot product and as the additive score, for growing n
// and d, printed as a table (or JSON).
int run_compare_scores(const BenchArgs& a) {
  std::vector<ScoreTiming> rows;
  for (const ScoreCompareCase& c : default_score_cases())
    rows.push_back(time_score_functions(c, a.runs, 16));
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ScoreTiming& t : rows)
      out.push_back({{"n", t.c.n},
                     {"d", t.c.d},
                     {"d_a", t.d_a},
                     {"d_a_equal_flops", t.d_a_equal},
                     {"dot_seconds", t.dot_seconds},
                     {"additive_seconds", t.additive_seconds},
                     {"additive_equal_flops_seconds", t.equal_seconds},
                     {"dot_flops", t.dot_flops},
                     {"additive_flops", t.additive_flops}});
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "Scores stage of one head, n_q = n_k = n, one thread, median of " << a.runs
            << " runs:\n"
            << "  dot: Q·Kᵀ (one matrix product, 2·n²·d FLOPs)\n"
            << "  additive: vᵀ tanh(W_q q + W_k k) with d_a = d, and with d_a chosen for the "
               "same FLOP count\n\n";
  std::printf("%6s %5s %10s %12s %8s %6s %12s %8s\n", "n", "d", "dot ms", "additive ms", "×dot",
              "d_a=", "same-FLOP ms", "×dot");
  for (const ScoreTiming& t : rows)
    std::printf("%6d %5d %10.3f %12.3f %8.1f %6d %12.3f %8.1f\n", t.c.n, t.c.d, t.dot_seconds * 1e3,
                t.additive_seconds * 1e3, t.additive_seconds / std::max(t.dot_seconds, 1e-12),
                t.d_a_equal, t.equal_seconds * 1e3,
                t.equal_seconds / std::max(t.dot_seconds, 1e-12));
  int slower = 0, slower_equal = 0;
  for (const ScoreTiming& t : rows) {
    slower += t.additive_seconds > t.dot_seconds ? 1 : 0;
    slower_equal += t.equal_seconds > t.dot_seconds ? 1 : 0;
  }
  std::cout << "\n×dot: how many times longer than the dot product took. The additive score was "
               "slower in "
            << slower << " of " << rows.size() << " cases with d_a = d, and in " << slower_equal
            << " of " << rows.size()
            << " with the same FLOP count:\nits tanh per pair and unit, and pairs that are not "
               "one matrix product, which the dot product is.\n";
  return kExitOk;
}

// Refuses sizes that cannot run: K/V heads that do not divide the heads, inputs larger than this
// machine's memory, and traces over kMaxTraceCells. Checked before anything is allocated, so an
// impossible size is a clear exit 2, not a failure after minutes of timing.
void check_bench_sizes(const BenchArgs& a) {
  if (a.heads % a.kv_heads != 0)
    throw CliError{kExitUsage, "--kv-heads: " + std::to_string(a.kv_heads) +
                                   " does not divide --heads " + std::to_string(a.heads)};
  // What the runs hold (Q, K, V and the output, float32).
  const double ram = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE);
  auto check_fits = [ram](const char* flags, double heads, double kv_heads, double n_q, double n_k,
                          int d) {
    const double bytes = 4.0 * d * (2 * heads * n_q + 2 * kv_heads * n_k);
    if (ram > 0 && bytes > 0.8 * ram)
      throw CliError{kExitUsage, std::string(flags) + ": the inputs and output alone need " +
                                     fixed(bytes / 1e9, 1) + " GB; this machine has " +
                                     fixed(ram / 1e9, 1) + " GB"};
  };
  if (!a.trace_only) check_fits("--n/--heads/--d", a.heads, a.kv_heads, a.n, a.n_k, a.d);
  if (a.memory_n > 0) {
    const int kv = a.kv_heads == a.heads
                       ? a.memory_heads
                       : (a.memory_heads % a.kv_heads == 0 ? a.kv_heads : a.memory_heads);
    check_fits("--memory-n/--memory-heads", a.memory_heads, kv, a.memory_n, a.memory_n, a.d);
  }
  if (static_cast<long long>(a.trace_heads) * a.trace_n * a.trace_n > kMaxTraceCells)
    throw CliError{kExitUsage, "--trace-n/--trace-heads: H·n·n = " + std::to_string(a.trace_heads) +
                                   "·" + std::to_string(a.trace_n) + "·" +
                                   std::to_string(a.trace_n) + " cells; at most " +
                                   std::to_string(kMaxTraceCells) + " are traced"};
}

// The problem every backend is timed on, its flop count and the machine's limit to compare with.
struct BenchProblem {
  AttentionProblem p;
  std::optional<AttentionProblem> causal;  // the same inputs under a causal mask, if unmasked
  double flop = 0, limit = 0;              // per run; GFLOP/s of an Eigen matrix product
};

// Times one backend on the problem: a line of the table (or a note why it did not run), the
// causal speed-up in `speedups`, and its entry of the JSON report.
nlohmann::json time_backend(const BenchArgs& a, const std::string& name, const BenchProblem& bp,
                            std::ostringstream& text, std::ostringstream& speedups) {
  const AttentionProblem& p = bp.p;
  std::function<void()> f;
  std::unique_ptr<Backend> b;
  std::string label = name, note;
  if (name == "naive") {
    // The staged path stores scores and weights, (n_q, n_k) each per head: skip sizes that
    // would not fit comfortably.
    if (double(a.heads) * a.n * a.n_k * 4 * 2 > 4e9) {
      note = "skipped: the staged path would hold more than 4 GB";
    } else {
      b = make_cpu_backend();
      label = "naive (cpu staged)";
      f = [&] {
        AttentionTrace t;
        b->run_stages(p, t);
      };
    }
  } else {
    std::string error;
    b = make_backend(name, error, a.device);
    if (!b) {
      if (a.backend != "all") throw CliError{kExitRuntime, "--backend " + name + ": " + error};
      note = "unavailable: " + error;
    } else {
      label = name + " (fused)";
      if (name == "opencl") speedups << "opencl device: " << b->name() << "\n";
      f = [&] { b->run_output(p); };
    }
  }
  nlohmann::json entry{{"backend", name}, {"label", label}};
  if (b) entry["device"] = b->name();
  if (f) {
    try {
      double sec = 0;
      if (name != "naive" && bp.causal) {
        // The causal speed-up of the fused path, measured on the same inputs in the same run.
        double causal_sec = 0;
        std::tie(sec, causal_sec) = median_seconds_paired(
            f, [&] { b->run_output(*bp.causal); }, a.runs);
        speedups << "causal speed-up, " << label << ": " << ms(sec) << " ms dense vs "
                 << ms(causal_sec) << " ms causal = " << fixed(sec / causal_sec, 2) << "x\n";
        entry["causal_ms"] = causal_sec * 1e3;
        entry["causal_speedup"] = sec / causal_sec;
      } else {
        sec = median_seconds(f, a.runs);
      }
      const double gflops = bp.flop / sec / 1e9;
      text << std::left << std::setw(28) << label << std::right << std::setw(12) << ms(sec)
           << std::setw(12) << fixed(gflops, 1) << std::setw(11)
           << fixed(100 * gflops / bp.limit, 1) << "%\n";
      entry["ms"] = sec * 1e3;
      entry["gflops"] = gflops;
      entry["fraction_of_limit"] = gflops / bp.limit;
    } catch (const std::exception& e) {
      if (a.backend != "all") throw CliError{kExitRuntime, name + ": " + e.what()};
      note = std::string("failed: ") + e.what();
    }
  }
  if (!note.empty()) {
    text << std::left << std::setw(28) << label << "  " << note << "\n";
    entry["note"] = note;
  }
  return entry;
}

// Peak memory of the fused CPU path at --memory-n, measured in a fresh process.
void report_peak_memory(const BenchArgs& a, nlohmann::json& report, std::ostringstream& text) {
  const int mem_n = a.memory_n, mem_heads = a.memory_heads;
  auto [peak, inputs] = measure_peak_in_child(a, mem_n, mem_heads);
  if (peak > 0) {
    text << "peak memory, fused cpu path in a fresh process (H=" << mem_heads << ", n=" << mem_n
         << ", d=" << a.d << "): " << fixed(peak / 1024.0, 1) << " MB (inputs alone "
         << fixed(inputs / 1024.0, 1) << " MB)\n";
    report["peak_memory"] = {{"heads", mem_heads},
                             {"n", mem_n},
                             {"d", a.d},
                             {"peak_mb", peak / 1024.0},
                             {"inputs_mb", inputs / 1024.0}};
  } else {
    throw CliError{kExitRuntime, "--memory-n: the peak-memory run (H=" + std::to_string(mem_heads) +
                                     ", n=" + std::to_string(mem_n) +
                                     ") failed; nothing was measured"};
  }
}

// The timing table: the problem, the machine's limit, each backend's time and rate, the causal
// speed-ups, then the peak memory if asked for.
void time_backends(const BenchArgs& a, const std::vector<std::string>& backends,
                   nlohmann::json& report, std::ostringstream& text) {
  BenchProblem bp{make_problem(a.heads, a.kv_heads, a.n, a.n_k, a.d, a.causal, a.window), {}, 0, 0};
  const double pairs = static_cast<double>(visible_pairs(bp.p)) * a.heads;
  bp.flop = 2.0 * pairs * (a.d + a.d);        // Q·Kᵀ and weights·V, 2 flops per multiply-add
  const int s = std::clamp(a.n, 1024, 2048);  // large enough to reach the machine's rate
  const double gemm_s = eigen_gemm_seconds(s, a.runs);
  bp.limit = 2.0 * s * double(s) * s / gemm_s / 1e9;
  const int cores = thread_count(0);
  text << "problem: H=" << a.heads << " (H_kv=" << a.kv_heads << "), n_q=" << a.n
       << ", n_k=" << a.n_k << ", d=" << a.d << (a.causal ? ", causal" : ", non-causal");
  if (a.window >= 0) text << ", window " << a.window;
  text << "; " << fixed(bp.flop / 1e9, 2) << " GFLOP per run (visible pairs only)\n";
  text << "limit: Eigen float matrix product " << s << "x" << s << "x" << s << " on " << cores
       << " threads: " << fixed(gemm_s * 1e3, 1) << " ms, " << fixed(bp.limit, 1) << " GFLOP/s\n";
  text << std::left << std::setw(28) << "backend" << std::right << std::setw(12) << "ms"
       << std::setw(12) << "GFLOP/s" << std::setw(12) << "of limit"
       << "\n";
  report["problem"] = {
      {"heads", a.heads}, {"kv_heads", a.kv_heads}, {"n_q", a.n},         {"n_k", a.n_k},
      {"d", a.d},         {"causal", a.causal},     {"window", a.window}, {"gflop", bp.flop / 1e9}};
  report["limit"] = {{"size", s}, {"threads", cores}, {"ms", gemm_s * 1e3}, {"gflops", bp.limit}};
  report["backends"] = nlohmann::json::array();
  // Without masks, the same inputs under a causal mask too, for the causal speed-up.
  if (!a.causal && a.window < 0) {
    bp.causal = bp.p;
    bp.causal->options.mask.causal = CausalAlign::kTopLeft;
  }
  std::ostringstream speedups;
  for (const std::string& name : backends)
    report["backends"].push_back(time_backend(a, name, bp, text, speedups));
  text << speedups.str();
  if (a.memory_n > 0) report_peak_memory(a, report, text);
}

// Editing one value of a 64-token, 4-head causal example and recomputing the whole trace.
void time_trace_recompute(const BenchArgs& a, const std::vector<std::string>& backends,
                          nlohmann::json& report, std::ostringstream& text) {
  report["trace"] = nlohmann::json::array();
  for (const std::string& name : backends) {
    if (name == "naive") continue;
    std::string error;
    std::unique_ptr<Backend> b = make_backend(name, error, a.device);
    if (!b) {
      if (a.backend != "all") throw CliError{kExitRuntime, "--backend " + name + ": " + error};
      continue;
    }
    const int n = a.trace_n, heads = a.trace_heads;
    AttentionProblem p = make_problem(heads, heads, n, n, 16, !a.trace_dense, -1);
    int edit = 0;
    const double sec = median_seconds(
        [&] {
          p.input.q[static_cast<size_t>(heads - 1)](edit % n, edit % 16) += 0.01f;
          ++edit;
          AttentionTrace t = compute_trace(p, *b);
        },
        std::max(a.runs, n <= 256 ? 21 : 5));
    text << "trace recompute after editing one value (" << n << " tokens, " << heads
         << (heads == 1 ? " head" : " heads") << ", d=16, "
         << (a.trace_dense ? "unmasked" : "causal") << "), " << b->name() << ": "
         << fixed(sec * 1e3, 3) << " ms\n";
    report["trace"].push_back({{"backend", b->name()},
                               {"n", n},
                               {"heads", heads},
                               {"causal", !a.trace_dense},
                               {"ms", sec * 1e3}});
  }
}

int run_bench(BenchArgs a) {
  if (a.compare_scores) return run_compare_scores(a);
  if (a.kv_heads <= 0) a.kv_heads = a.heads;
  if (a.n_k <= 0) a.n_k = a.n;
  check_bench_sizes(a);
  if (a.peak_child) return run_peak_child(a);

  std::vector<std::string> backends;
  if (a.backend == "all")
    backends = {"cpu", "naive", "opencl"};
  else
    backends = {a.backend};

  nlohmann::json report;
  std::ostringstream text;
  // Which code runs: tuned to the CPU it was built on, or the baseline a package uses.
  const std::string target = ATTN_CPU_TARGET;
  text << "build: attention-lab " << ATTN_VERSION << ", " << target
       << (target == "native" ? " (-march=native" : " (x86-64 baseline")
       << "; Eigen vectorises with " << Eigen::SimdInstructionSetsInUse() << ")\n";
  report["build"] = {{"version", ATTN_VERSION},
                     {"cpu_target", target},
                     {"simd", Eigen::SimdInstructionSetsInUse()}};
  if (!a.trace_only) time_backends(a, backends, report, text);
  time_trace_recompute(a, backends, report, text);
  if (a.json)
    std::cout << report.dump(2) << "\n";
  else
    std::cout << text.str();
  return kExitOk;
}

}  // namespace

void register_bench(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("bench", "Time each backend against this machine's practical limit");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--n", a->n, "queries (and keys unless --n-k)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--n-k", a->n_k, "keys (default: --n)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--d", a->d, "d_k = d_v")->check(CLI::Range(1, 4096));
  cmd->add_option("--heads", a->heads, "query heads H")->check(CLI::Range(1, 1024));
  cmd->add_option("--kv-heads", a->kv_heads, "key/value heads (default: H)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--causal", a->causal, "causal mask (top-left)");
  cmd->add_option("--window", a->window, "sliding window W")->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--backend", a->backend, "cpu, opencl, naive (CPU staged) or all")
      ->check(CLI::IsMember({"cpu", "opencl", "naive", "all"}));
  cmd->add_option("--device", a->device, "OpenCL device index (see clinfo -l)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--runs", a->runs, "timed runs after the warm-up (median reported)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--memory-n", a->memory_n, "n for the peak-memory run (0 = skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--memory-heads", a->memory_heads, "H for the peak-memory run")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--trace", a->trace_only, "only time the trace recompute of an example");
  cmd->add_option("--trace-n", a->trace_n, "tokens of the trace-recompute example (default 64)")
      ->check(CLI::Range(1, 8192));
  cmd->add_option("--trace-heads", a->trace_heads,
                  "heads of the trace-recompute example (default 4)")
      ->check(CLI::Range(1, 64));
  cmd->add_flag("--trace-dense", a->trace_dense, "no causal mask in the trace-recompute example");
  cmd->add_flag("--json", a->json, "print the figures as JSON");
  cmd->add_flag("--compare-scores", a->compare_scores,
                "time the scores stage as the dot product and as the additive score (Bahdanau) "
                "for growing n and d, with d_a = d and with the same FLOP count");
  cmd->add_flag("--peak-child", a->peak_child, "internal: one fused run, print peak memory")
      ->group("");
  cmd->callback([&action, a] { action = [a] { return run_bench(*a); }; });
}

}  // namespace attn::cli
