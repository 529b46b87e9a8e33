// Every backend (CPU, OpenCL, auto) against the double-precision reference: every stage of the
// trace and the fused outputs-only path, for every mask kind, non-square shapes, d_k != d_v,
// sizes that are no multiple of any tile, n = 1, MQA/GQA, scale and temperature.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "attention/engine.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/opencl_backend.h"
#include "opencl_skip.h"
#include "reference.h"

namespace attn {
namespace {

using test::max_abs_diff;
using test::RefMat;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Case {
  std::string name;
  int heads, kv_heads, n_q, n_k, d_k, d_v;
  std::function<void(AttentionProblem&, std::mt19937&)> setup = nullptr;
};

AttentionProblem make(const Case& c, unsigned seed) {
  std::mt19937 rng(seed);
  AttentionProblem p;
  p.input.q = test::random_heads(c.heads, c.n_q, c.d_k, rng);
  p.input.k = test::random_heads(c.kv_heads, c.n_k, c.d_k, rng);
  p.input.v = test::random_heads(c.kv_heads, c.n_k, c.d_v, rng);
  if (c.setup) c.setup(p, rng);
  return p;
}

// A 0/1 mask with roughly `keep` of the cells visible, and row 1 fully hidden.
Matrix random_mask(int n_q, int n_k, std::mt19937& rng, float keep = 0.6f) {
  std::uniform_real_distribution<float> u(0, 1);
  Matrix m(n_q, n_k);
  for (int i = 0; i < n_q; ++i)
    for (int j = 0; j < n_k; ++j) m(i, j) = (u(rng) < keep && i != 1) ? 1.0f : 0.0f;
  return m;
}

// Finite bias in [-2, 2] with some -inf cells (and row 0 fully -inf when it has few keys).
Matrix random_bias(int n_q, int n_k, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0, 1);
  Matrix b(n_q, n_k);
  for (int i = 0; i < n_q; ++i)
    for (int j = 0; j < n_k; ++j) b(i, j) = u(rng) < 0.2f ? kNegInf : 4 * u(rng) - 2;
  for (int j = 0; j < n_k; ++j) b(0, j) = kNegInf;
  return b;
}

std::vector<Case> cases() {
  return {
      {"dense_non_square", 1, 1, 5, 7, 3, 4},
      {"single_token", 1, 1, 1, 1, 1, 1},
      {"single_query_many_keys", 2, 2, 1, 33, 5, 2},
      {"causal_top_left", 2, 2, 70, 70, 8, 12,
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.causal = CausalAlign::kTopLeft; }},
      {"causal_top_left_more_queries", 1, 1, 40, 17, 6, 6,  // rows past n_k see every key
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.causal = CausalAlign::kTopLeft; }},
      {"causal_lower_right", 2, 2, 20, 75, 9, 5,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.mask.causal = CausalAlign::kLowerRight;
       }},
      {"causal_lower_right_empty_rows", 1, 1, 30, 12, 4, 7,  // the first 18 rows see nothing
       [](AttentionProblem& p, std::mt19937&) {
         p.options.mask.causal = CausalAlign::kLowerRight;
       }},
      {"window", 2, 2, 67, 67, 7, 3,
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.window = 5; }},
      {"causal_window", 1, 1, 81, 81, 16, 16,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.mask.causal = CausalAlign::kTopLeft;
         p.options.mask.window = 3;
       }},
      {"window_global", 2, 2, 40, 40, 5, 6,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.mask.window = 2;
         p.options.mask.global = {0, 10, 39};
       }},
      {"causal_window_global", 1, 1, 29, 29, 4, 4,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.mask.causal = CausalAlign::kTopLeft;
         p.options.mask.window = 1;
         p.options.mask.global = {3, 20};
       }},
      {"padding", 2, 2, 33, 50, 6, 8,
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.key_length = 30; }},
      {"padding_everything", 1, 1, 4, 6, 3, 3,  // every row empty: zeros, never NaN
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.key_length = 0; }},
      {"custom_shared", 2, 2, 19, 23, 5, 7,
       [](AttentionProblem& p, std::mt19937& rng) {
         p.options.mask.custom = {random_mask(19, 23, rng)};
       }},
      {"custom_per_head", 3, 3, 18, 9, 4, 5,
       [](AttentionProblem& p, std::mt19937& rng) {
         for (int h = 0; h < 3; ++h) p.options.mask.custom.push_back(random_mask(18, 9, rng));
       }},
      {"bias_shared", 2, 2, 21, 26, 6, 3,
       [](AttentionProblem& p, std::mt19937& rng) {
         p.options.mask.bias = {random_bias(21, 26, rng)};
       }},
      {"bias_per_head_causal", 2, 2, 24, 24, 5, 5,
       [](AttentionProblem& p, std::mt19937& rng) {
         p.options.mask.causal = CausalAlign::kTopLeft;
         for (int h = 0; h < 2; ++h) p.options.mask.bias.push_back(random_bias(24, 24, rng));
       }},
      {"mqa", 4, 1, 17, 29, 8, 6},
      {"gqa_causal", 6, 2, 37, 37, 8, 10,
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.causal = CausalAlign::kTopLeft; }},
      {"scale_and_temperature", 2, 2, 13, 22, 9, 4,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.scale = 0.7f;
         p.options.temperature = 0.4f;
       }},
      {"hot_temperature_window", 1, 1, 50, 45, 3, 9,
       [](AttentionProblem& p, std::mt19937&) {
         p.options.temperature = 3.0f;
         p.options.mask.window = 7;
       }},
      {"every_mask_at_once", 2, 1, 45, 52, 7, 5,
       [](AttentionProblem& p, std::mt19937& rng) {
         p.options.mask.causal = CausalAlign::kLowerRight;
         p.options.mask.window = 9;
         p.options.mask.global = {2};
         p.options.mask.key_length = 48;
         p.options.mask.custom = {random_mask(45, 52, rng, 0.8f)};
         p.options.mask.bias = {random_bias(45, 52, rng), random_bias(45, 52, rng)};
       }},
      // Crosses the CPU fused blocks (128 x 256) and the OpenCL tiles (64) unevenly.
      {"large_causal", 2, 2, 300, 290, 64, 40,
       [](AttentionProblem& p, std::mt19937&) { p.options.mask.causal = CausalAlign::kTopLeft; }},
      {"large_dense_wide_head", 1, 1, 130, 260, 96, 33},
  };
}

using test::opencl_skipped;

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& name = GetParam();
    std::string why;
    if ((name == "opencl" || name == "auto") && opencl_skipped(why)) GTEST_SKIP() << why;
    std::string error;
    backend_ = make_backend(name, error);
    ASSERT_TRUE(backend_) << error;
  }
  std::unique_ptr<Backend> backend_;
};

// Tolerances against the double reference: stages are float sums of up to 96 products of
// numbers in [-1, 1]; weights and outputs are bounded by 1.
constexpr double kStageTol = 2e-5, kWeightTol = 1e-5;

TEST_P(BackendTest, EveryStageMatchesReference) {
  unsigned seed = 1;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    AttentionProblem p = make(c, seed++);
    ASSERT_EQ(validate_problem(p), "");
    const test::RefResult ref = test::reference_attention(p);
    ASSERT_TRUE(backend_->supports_trace(p));
    AttentionTrace t = compute_trace(p, *backend_);
    for (int h = 0; h < c.heads; ++h) {
      SCOPED_TRACE("head " + std::to_string(h));
      EXPECT_LE(max_abs_diff(t.head(StageId::kScores, h), ref.scores[h]), kStageTol);
      EXPECT_LE(max_abs_diff(t.head(StageId::kScaled, h), ref.scaled[h]), kStageTol);
      EXPECT_LE(max_abs_diff(t.head(StageId::kMasked, h), ref.masked[h]), kStageTol);
      EXPECT_LE(max_abs_diff(t.head(StageId::kWeights, h), ref.weights[h]), kWeightTol);
      EXPECT_LE(max_abs_diff(t.head(StageId::kOutput, h), ref.output[h]), kWeightTol);
      EXPECT_EQ(t.step(StageId::kOutput).kv_head[h], h / (c.heads / c.kv_heads));
      ASSERT_EQ(t.empty_row[h].size(), ref.empty_row[h].size());
      for (int i = 0; i < c.n_q; ++i) {
        EXPECT_EQ(t.empty_row[h][i], ref.empty_row[h][i]) << "row " << i;
        for (int j = 0; j < c.n_k; ++j)
          ASSERT_EQ(t.hidden_of(h)(i, j) != 0, std::isinf(ref.masked[h](i, j))) << i << "," << j;
      }
    }
  }
}

TEST_P(BackendTest, FusedOutputMatchesReferenceAndStaged) {
  unsigned seed = 100;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    AttentionProblem p = make(c, seed++);
    const test::RefResult ref = test::reference_attention(p);
    HeadStack out = backend_->run_output(p);
    AttentionTrace staged = compute_trace(p, *backend_);
    ASSERT_EQ(static_cast<int>(out.size()), c.heads);
    for (int h = 0; h < c.heads; ++h) {
      SCOPED_TRACE("head " + std::to_string(h));
      EXPECT_LE(max_abs_diff(out[h], ref.output[h]), kWeightTol);
      EXPECT_LE((out[h] - staged.head(StageId::kOutput, h)).cwiseAbs().maxCoeff(), 1e-5f);
      EXPECT_TRUE(out[h].allFinite());
      for (int i = 0; i < c.n_q; ++i)
        if (ref.empty_row[h][i]) {
          EXPECT_EQ(out[h].row(i).cwiseAbs().maxCoeff(), 0.0f) << i;
        }
    }
  }
}

// Logits near the top of float's range (about 1e29 here, below the 1e38 validate_problem allows):
// weights and outputs stay finite and match the reference (the max is subtracted from the same
// rounded values it was taken from).
TEST_P(BackendTest, HugeLogitsStayFinite) {
  AttentionProblem p = make(Case{"huge", 2, 1, 23, 31, 8, 5}, 77);
  for (Matrix& m : p.input.q) m *= 3e14f;
  for (Matrix& m : p.input.k) m *= 3e14f;
  p.options.mask.causal = CausalAlign::kTopLeft;
  ASSERT_EQ(validate_problem(p), "");
  const test::RefResult ref = test::reference_attention(p);
  AttentionTrace t = compute_trace(p, *backend_);
  HeadStack out = backend_->run_output(p);
  for (int h = 0; h < 2; ++h) {
    EXPECT_TRUE(t.head(StageId::kWeights, h).allFinite());
    EXPECT_LE(max_abs_diff(t.head(StageId::kWeights, h), ref.weights[h]), kWeightTol);
    EXPECT_LE(max_abs_diff(t.head(StageId::kOutput, h), ref.output[h]), kWeightTol);
    EXPECT_LE(max_abs_diff(out[h], ref.output[h]), kWeightTol);
  }
}

// The same problem computed twice on one backend object gives the same numbers (programs and
// buffers cached between calls do not leak state), and a changed d rebuilds correctly.
TEST_P(BackendTest, RepeatedCallsAndShapeChanges) {
  for (int round = 0; round < 2; ++round)
    for (const Case& c : {Case{"a", 2, 1, 9, 11, 4, 6}, Case{"b", 1, 1, 12, 5, 10, 3}}) {
      AttentionProblem p = make(c, 7);
      const test::RefResult ref = test::reference_attention(p);
      HeadStack out = backend_->run_output(p);
      for (int h = 0; h < c.heads; ++h) EXPECT_LE(max_abs_diff(out[h], ref.output[h]), kWeightTol);
    }
}

// The fused kernel in the configurations other devices get (scalar floats and one row per
// work-item as on most GPUs, small tiles as on devices with little local memory, odd vector
// widths), forced on whatever device is here: every one must give the same numbers.
TEST(OpenClFused, EveryKernelConfiguration) {
  std::string why;
  if (opencl_skipped(why)) GTEST_SKIP() << why;
  const std::vector<Case> all = cases();
  for (const char* tuning : {"1,1,64", "4,1,16", "2,4,8", "16,2,32", "8,8,128"}) {
    SCOPED_TRACE(tuning);
    ::setenv("ATTN_OPENCL_FUSED", tuning, 1);
    std::string error;
    std::unique_ptr<Backend> b = make_backend("opencl", error);
    ::unsetenv("ATTN_OPENCL_FUSED");
    ASSERT_TRUE(b) << error;
    unsigned seed = 500;
    for (Case c : all) {
      // One head size (d_v not a multiple of any vector width) keeps kernel builds few.
      c.d_k = 8;
      c.d_v = 5;
      SCOPED_TRACE(c.name);
      AttentionProblem p = make(c, seed++);
      const test::RefResult ref = test::reference_attention(p);
      HeadStack out = b->run_output(p);
      for (int h = 0; h < c.heads; ++h) {
        EXPECT_LE(max_abs_diff(out[h], ref.output[h]), kWeightTol) << "head " << h;
        EXPECT_TRUE(out[h].allFinite());
      }
    }
  }
}

// A problem whose stages exceed what the device can allocate is refused by run_stages with a
// clear message (not a crash), and the trace is left untouched.
TEST(OpenClErrors, TooLargeForTheDeviceIsAClearError) {
  std::string why;
  if (opencl_skipped(why)) GTEST_SKIP() << why;
  std::string error;
  std::unique_ptr<Backend> b = make_backend("opencl", error);
  ASSERT_TRUE(b) << error;
  AttentionProblem p;
  const int n = 46341;  // n² floats = 8 GB per stage: beyond any device's single allocation here
  p.input.q = {Matrix::Constant(n, 1, 0.5f)};
  p.input.k = {Matrix::Constant(n, 1, 0.5f)};
  p.input.v = {Matrix::Constant(n, 1, 0.5f)};
  // The fused path holds no (n_q, n_k) matrix: outputs are fine, the staged trace is not.
  EXPECT_TRUE(b->supports_outputs(p));
  EXPECT_FALSE(b->supports_trace(p));
  AttentionTrace t;
  try {
    b->run_stages(p, t);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(t.steps.empty());
}

// A kernel that does not compile: "opencl" reports the build log, "auto" falls back to the CPU.
TEST(OpenClErrors, FailedBuildIsReportedAndAutoFallsBack) {
  std::string why;
  if (opencl_skipped(why)) GTEST_SKIP() << why;
  const std::string dir = test::temp_path("bad_kernels");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  {
    FILE* f = std::fopen((dir + "/attention.cl").c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("__kernel void attention_scores(__global float* x) { x[0] = undeclared_name; }\n",
               f);
    std::fclose(f);
  }
  ::setenv("ATTN_SHADER_DIR", dir.c_str(), 1);
  std::string error;
  std::unique_ptr<Backend> opencl = make_backend("opencl", error);
  std::string auto_error;
  std::unique_ptr<Backend> fallback = make_backend("auto", auto_error);
  ::unsetenv("ATTN_SHADER_DIR");
  EXPECT_EQ(opencl, nullptr);
  EXPECT_NE(error.find("kernel build failed"), std::string::npos) << error;
  EXPECT_NE(error.find("undeclared_name"), std::string::npos) << error;  // the build log
  ASSERT_TRUE(fallback);
  EXPECT_EQ(fallback->name(), "cpu");
  AttentionProblem p = make(Case{"small", 2, 2, 6, 5, 3, 4}, 3);
  const test::RefResult ref = test::reference_attention(p);
  HeadStack out = fallback->run_output(p);
  for (int h = 0; h < 2; ++h) EXPECT_LE(max_abs_diff(out[h], ref.output[h]), kWeightTol);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, ::testing::Values("cpu", "opencl", "auto"),
                         [](const auto& info) { return info.param; });

TEST(BackendRegistry, NamesAndErrors) {
  std::string error;
  EXPECT_EQ(make_backend("gpu", error), nullptr);
  EXPECT_NE(error.find("unknown backend 'gpu'"), std::string::npos) << error;
  auto cpu = make_backend("cpu", error);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->name(), "cpu");
  std::vector<std::string> names = available_backends();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "cpu");
  // auto always gives a working backend, OpenCL or not.
  EXPECT_TRUE(make_backend("auto", error));
}

TEST(BackendRegistry, BadDeviceIndexIsAnError) {
  std::string why;
  if (opencl_skipped(why)) GTEST_SKIP() << why;
  std::string error;
  EXPECT_EQ(make_backend("opencl", error, 63), nullptr);
  EXPECT_NE(error.find("device 63 does not exist"), std::string::npos) << error;
  std::vector<OpenClDeviceInfo> devices = list_opencl_devices(error);
  ASSERT_FALSE(devices.empty());
  EXPECT_FALSE(devices[0].name.empty());
  auto b = make_backend("opencl", error, 0);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(b->name().rfind("opencl", 0), 0u);
}

// Without any OpenCL driver (an empty ICD folder), asking for OpenCL exits 1 with a clear
// message, and nothing crashes.
TEST(BackendCli, OpenClWithoutPlatformExitsOne) {
  if (std::getenv("ATTN_SKIP_OPENCL")) GTEST_SKIP() << "ATTN_SKIP_OPENCL is set (sanitizer run)";
  const std::string empty = test::temp_path("no_icd");
  ASSERT_EQ(std::system(("mkdir -p '" + empty + "'").c_str()), 0);
  const std::string env = "OCL_ICD_VENDORS='" + empty + "' OPENCL_VENDOR_PATH='" + empty + "'";
  const test::CliResult r =
      test::run_cli("bench --backend opencl --n 8 --heads 1 --d 4 --runs 1 --memory-n 0", env);
  EXPECT_EQ(r.status, 1);
  const std::string& err = r.err;
  EXPECT_EQ(err.rfind("error: --backend opencl: ", 0), 0u) << err;
#ifdef ATTN_HAVE_OPENCL
  EXPECT_NE(err.find("no OpenCL platform"), std::string::npos) << err;
#else
  EXPECT_NE(err.find("not built into this binary"), std::string::npos) << err;
#endif
}

// bench prints every figure: the limit, each backend's time and fraction, the causal speed-up,
// the peak memory from a fresh process and the trace recompute time.
TEST(BenchCli, JsonHasEveryFigure) {
  test::CliResult r = test::run_cli(
      "bench --backend all --n 70 --heads 2 --kv-heads 1 --d 8 --runs 1 --memory-n 100 "
      "--memory-heads 2 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["limit"]["gflops"].get<double>(), 0);
  EXPECT_EQ(j["problem"]["n_q"], 70);
  // 4·H·n_q·n_k·d for a dense problem.
  EXPECT_NEAR(j["problem"]["gflop"].get<double>(), 4.0 * 2 * 70 * 70 * 8 / 1e9, 1e-12);
  bool saw_cpu = false;
  for (const auto& b : j["backends"]) {
    if (b.contains("note")) continue;  // e.g. opencl unavailable
    EXPECT_GT(b["ms"].get<double>(), 0) << b.dump();
    EXPECT_GT(b["fraction_of_limit"].get<double>(), 0) << b.dump();
    if (b["backend"] == "cpu") {
      saw_cpu = true;
      EXPECT_GT(b["causal_speedup"].get<double>(), 0);
    }
  }
  EXPECT_TRUE(saw_cpu);
  EXPECT_GT(j["peak_memory"]["peak_mb"].get<double>(), 0);
  EXPECT_GE(j["peak_memory"]["peak_mb"].get<double>(), j["peak_memory"]["inputs_mb"].get<double>());
  EXPECT_EQ(j["peak_memory"]["n"], 100);
  ASSERT_FALSE(j["trace"].empty());
  EXPECT_GT(j["trace"][0]["ms"].get<double>(), 0);
}

TEST(BenchCli, CausalCountsOnlyVisiblePairsAndBadFlagsAreUsageErrors) {
  test::CliResult r = test::run_cli(
      "bench --backend cpu --n 10 --heads 1 --d 4 --runs 1 --memory-n 0 --causal --json");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  // 10 queries see 1 + 2 + ... + 10 = 55 keys: 4·55·4 flops.
  EXPECT_NEAR(j["problem"]["gflop"].get<double>(), 4.0 * 55 * 4 / 1e9, 1e-12);
  r = test::run_cli("bench --heads 8 --kv-heads 3 --memory-n 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--kv-heads: 3 does not divide --heads 8"), std::string::npos) << r.err;
  r = test::run_cli("bench --backend gpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace attn
