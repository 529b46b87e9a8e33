// `attention-lab compute` end to end: random problems of every head layout and mask kind,
// written as hand-built .npy files, computed by the real binary and compared with the
// double-precision reference; and every bad input giving exit 2, a clear error, and no file.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "attention/engine.h"
#include "backends/backend.h"
#include "io/npy.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::npy_fixture;
using test::run_cli;
using test::temp_path;
using test::write_bytes;

constexpr double kTolerance = 1e-5;
const float kNegInf = -std::numeric_limits<float>::infinity();

std::string q(const std::string& s) { return "'" + s + "'"; }

// The values of a stack in file order, and its shape as (H, n, d) or (n, d).
std::vector<double> flatten(const HeadStack& heads) {
  std::vector<double> v;
  for (const Matrix& m : heads)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) v.push_back(m(i, j));
  return v;
}
std::vector<long long> shape_of(const HeadStack& heads, int rank) {
  std::vector<long long> s;
  if (rank == 3) s.push_back(static_cast<long long>(heads.size()));
  s.push_back(heads[0].rows());
  s.push_back(heads[0].cols());
  return s;
}

// Writes a stack as a .npy fixture built byte by byte (not with the code under test).
std::string write_stack(const std::string& name, const HeadStack& heads, int rank,
                        const std::string& descr = "<f4", int major = 1) {
  const std::string path = temp_path(name);
  EXPECT_TRUE(write_bytes(path, npy_fixture(descr, shape_of(heads, rank), flatten(heads), major)));
  return path;
}

std::string float_text(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

// One end-to-end case, built fluently so each reads as what it tests.
struct Case {
  std::string name;
  int H = 1, H_kv = 1, q_rank = 2, kv_rank = 2;
  int n_q = 3, n_k = 5, d_k = 4, d_v = 2;
  std::string causal_spelling;  // "", "--causal", "--causal=top-left", "--causal=lower-right"
  CausalAlign causal = CausalAlign::kNone;
  int window = -1, key_length = -1;
  std::vector<int> global;
  int mask_rank = 0, mask_heads = 0, bias_rank = 0, bias_heads = 0;
  std::string mask_dtype = "|b1", bias_dtype = "<f8", qkv_dtype = "<f4";
  int hidden_row = -1;  // a query row that the mask (or bias) hides completely
  float scale = 0.0f, temperature = 1.0f;
  bool weights = true;
  std::string backend;

  explicit Case(std::string n) : name(std::move(n)) {}
  Case& heads(int h, int h_kv, int qr, int kvr) {
    H = h, H_kv = h_kv, q_rank = qr, kv_rank = kvr;
    return *this;
  }
  Case& dims(int nq, int nk, int dk, int dv) {
    n_q = nq, n_k = nk, d_k = dk, d_v = dv;
    return *this;
  }
  Case& with_causal(CausalAlign a, std::string spelling) {
    causal = a, causal_spelling = std::move(spelling);
    return *this;
  }
  Case& with_window(int w) { return window = w, *this; }
  Case& with_global(std::vector<int> g) { return global = std::move(g), *this; }
  Case& with_key_length(int l) { return key_length = l, *this; }
  Case& with_mask(int rank, int heads, std::string dtype) {
    mask_rank = rank, mask_heads = heads, mask_dtype = std::move(dtype);
    return *this;
  }
  Case& with_bias(int rank, int heads, std::string dtype) {
    bias_rank = rank, bias_heads = heads, bias_dtype = std::move(dtype);
    return *this;
  }
  Case& hide_row(int r) { return hidden_row = r, *this; }
  Case& with_scale(float s) { return scale = s, *this; }
  Case& with_temperature(float t) { return temperature = t, *this; }
  Case& without_weights() { return weights = false, *this; }
  Case& inputs_as(std::string dtype) { return qkv_dtype = std::move(dtype), *this; }
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

HeadStack random_mask(int heads, int n_q, int n_k, int hidden_row, std::mt19937& rng) {
  std::bernoulli_distribution visible(0.7);
  HeadStack s;
  for (int h = 0; h < heads; ++h) {
    Matrix m(n_q, n_k);
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j) m(i, j) = (i != hidden_row && visible(rng)) ? 1.0f : 0.0f;
    s.push_back(m);
  }
  return s;
}

HeadStack random_bias(int heads, int n_q, int n_k, int hidden_row, std::mt19937& rng) {
  std::bernoulli_distribution minus_inf(0.15);
  HeadStack s = test::random_heads(heads, n_q, n_k, rng);
  for (Matrix& m : s)
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j)
        if (i == hidden_row || minus_inf(rng)) m(i, j) = kNegInf;
  return s;
}

void expect_matches(const std::string& path, int rank, const std::vector<test::RefMat>& ref,
                    const char* what) {
  std::string error;
  std::optional<NpyTensor> t = read_npy(path, NpyContent::kFloat, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, rank) << what;
  ASSERT_EQ(t->heads.size(), ref.size()) << what;
  for (size_t h = 0; h < ref.size(); ++h)
    EXPECT_LE(test::max_abs_diff(t->heads[h], ref[h]), kTolerance) << what << " head " << h;
}

class ComputeCli : public ::testing::TestWithParam<Case> {};

TEST_P(ComputeCli, MatchesReference) {
  const Case& c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>()(c.name)));
  AttentionProblem p;
  p.input.q = test::random_heads(c.H, c.n_q, c.d_k, rng);
  p.input.k = test::random_heads(c.H_kv, c.n_k, c.d_k, rng);
  p.input.v = test::random_heads(c.H_kv, c.n_k, c.d_v, rng);
  MaskSpec& m = p.options.mask;
  m.causal = c.causal;
  if (c.window >= 0) m.window = c.window;
  m.global = c.global;
  if (c.key_length >= 0) m.key_length = c.key_length;
  if (c.mask_rank) m.custom = random_mask(c.mask_heads, c.n_q, c.n_k, c.hidden_row, rng);
  if (c.bias_rank)
    m.bias = random_bias(c.bias_heads, c.n_q, c.n_k, c.mask_rank ? -1 : c.hidden_row, rng);
  if (c.scale != 0.0f) p.options.scale = c.scale;
  p.options.temperature = c.temperature;
  ASSERT_EQ(validate_problem(p), "") << "the case itself is invalid";

  std::string args = "compute --q " + q(write_stack("q.npy", p.input.q, c.q_rank, c.qkv_dtype)) +
                     " --k " + q(write_stack("k.npy", p.input.k, c.kv_rank, c.qkv_dtype, 2)) +
                     " --v " + q(write_stack("v.npy", p.input.v, c.kv_rank, c.qkv_dtype));
  if (!c.causal_spelling.empty()) args += " " + c.causal_spelling;
  if (c.window >= 0) args += " --window " + std::to_string(c.window);
  if (!c.global.empty()) args += " --global " + join(c.global);
  if (c.key_length >= 0) args += " --key-length " + std::to_string(c.key_length);
  if (c.mask_rank)
    args += " --mask " + q(write_stack("m.npy", m.custom, c.mask_rank, c.mask_dtype));
  if (c.bias_rank) args += " --bias " + q(write_stack("b.npy", m.bias, c.bias_rank, c.bias_dtype));
  if (c.scale != 0.0f) args += " --scale " + float_text(c.scale);
  if (c.temperature != 1.0f) args += " --temperature " + float_text(c.temperature);
  if (!c.backend.empty()) args += " --backend " + c.backend;
  const std::string out = temp_path("out.npy"), weights = temp_path("w.npy");
  args += " --out " + q(out);
  if (c.weights) args += " --weights " + q(weights);

  const test::CliResult r = run_cli(args);
  ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "");
  const test::RefResult ref = test::reference_attention(p);
  expect_matches(out, c.q_rank, ref.output, "output");
  if (c.weights) expect_matches(weights, c.q_rank, ref.weights, "weights");
  EXPECT_EQ(file_exists(weights), c.weights);

  // A fully hidden row must come out as exact zeros (the reference says which rows are empty).
  if (c.hidden_row >= 0) {
    std::string error;
    auto o = read_npy(out, NpyContent::kFloat, error);
    ASSERT_TRUE(o) << error;
    for (int h = 0; h < c.H; ++h) {
      ASSERT_TRUE(ref.empty_row[h][c.hidden_row]) << "case should hide row " << c.hidden_row;
      for (int j = 0; j < c.d_v; ++j) EXPECT_EQ(o->heads[h](c.hidden_row, j), 0.0f);
    }
  }
}

std::vector<Case> cases() {
  const auto TL = CausalAlign::kTopLeft;
  const auto LR = CausalAlign::kLowerRight;
  std::vector<Case> v;
  // Head layouts without masks; n_q != n_k and d_k != d_v everywhere.
  v.push_back(Case("single_head_2d").dims(4, 7, 5, 3));
  v.push_back(Case("single_head_3d_keeps_rank").heads(1, 1, 3, 3).dims(6, 2, 3, 5));
  v.push_back(Case("mha").heads(3, 3, 3, 3).dims(5, 7, 4, 6));
  v.push_back(Case("mqa_2d_kv").heads(4, 1, 3, 2).dims(5, 6, 3, 2));
  v.push_back(Case("mqa_3d_kv").heads(4, 1, 3, 3).dims(3, 8, 2, 4));
  v.push_back(Case("gqa_6_2").heads(6, 2, 3, 3).dims(4, 5, 3, 7));
  v.push_back(Case("gqa_4_2_f64_inputs").heads(4, 2, 3, 3).dims(5, 4, 6, 2).inputs_as("<f8"));
  v.push_back(Case("output_only").heads(2, 1, 3, 3).dims(3, 4, 2, 3).without_weights());
  // Causal, both alignments and both spellings of the default.
  v.push_back(Case("causal_bare").heads(2, 2, 3, 3).dims(6, 4, 3, 2).with_causal(TL, "--causal"));
  v.push_back(Case("causal_top_left").dims(4, 6, 3, 5).with_causal(TL, "--causal=top-left"));
  v.push_back(Case("causal_lower_right_decode")
                  .heads(2, 1, 3, 2)
                  .dims(3, 8, 4, 2)
                  .with_causal(LR, "--causal=lower-right"));
  // n_q > n_k with lower-right: the first queries sit before every key and see nothing.
  v.push_back(Case("causal_lower_right_empty_rows")
                  .dims(7, 4, 2, 3)
                  .with_causal(LR, "--causal=lower-right")
                  .hide_row(1));
  // Windows and global tokens.
  v.push_back(Case("window").heads(2, 2, 3, 3).dims(6, 9, 3, 4).with_window(1));
  v.push_back(Case("window_causal").dims(8, 8, 4, 3).with_causal(TL, "--causal").with_window(2));
  v.push_back(
      Case("window_global").heads(3, 1, 3, 2).dims(9, 9, 2, 3).with_window(1).with_global({0, 5}));
  v.push_back(Case("window_global_causal_lower_right")
                  .dims(5, 9, 3, 2)
                  .with_causal(LR, "--causal=lower-right")
                  .with_window(1)
                  .with_global({2, 7}));
  v.push_back(Case("window_zero").dims(5, 5, 3, 2).with_window(0));
  // Padding.
  v.push_back(Case("key_length").heads(2, 2, 3, 3).dims(4, 6, 3, 5).with_key_length(3));
  v.push_back(Case("key_length_zero_all_empty").dims(3, 4, 2, 2).with_key_length(0).hide_row(2));
  // Custom masks: 2-D shared, 3-D per head, 3-D with one head (shared), several dtypes.
  v.push_back(Case("mask_2d_bool_hidden_row")
                  .heads(3, 3, 3, 3)
                  .dims(5, 6, 3, 2)
                  .with_mask(2, 1, "|b1")
                  .hide_row(2));
  v.push_back(
      Case("mask_3d_per_head_int8").heads(4, 2, 3, 3).dims(4, 7, 2, 3).with_mask(3, 4, "<i1"));
  v.push_back(
      Case("mask_3d_one_head_f4").heads(2, 2, 3, 3).dims(3, 5, 4, 4).with_mask(3, 1, "<f4"));
  v.push_back(Case("mask_2d_int64_single").dims(6, 3, 2, 5).with_mask(2, 1, "<i8"));
  // Additive bias with -inf, 2-D and 3-D.
  v.push_back(Case("bias_2d_neg_inf_hidden_row")
                  .heads(2, 1, 3, 2)
                  .dims(4, 6, 3, 3)
                  .with_bias(2, 1, "<f8")
                  .hide_row(3));
  v.push_back(
      Case("bias_3d_per_head_f4").heads(3, 3, 3, 3).dims(5, 4, 2, 6).with_bias(3, 3, "<f4"));
  // Scale and temperature.
  v.push_back(Case("scale").heads(2, 2, 3, 3).dims(3, 5, 4, 2).with_scale(0.37f));
  v.push_back(Case("temperature_low").dims(4, 5, 3, 3).with_temperature(0.5f));
  v.push_back(Case("scale_and_temperature")
                  .heads(2, 1, 3, 2)
                  .dims(5, 3, 6, 2)
                  .with_scale(1.7f)
                  .with_temperature(2.5f));
  // Everything at once.
  v.push_back(Case("combined_gqa")
                  .heads(4, 2, 3, 3)
                  .dims(7, 9, 3, 5)
                  .with_causal(LR, "--causal=lower-right")
                  .with_window(3)
                  .with_global({1})
                  .with_key_length(8)
                  .with_mask(3, 4, "|b1")
                  .with_bias(2, 1, "<f8")
                  .with_scale(0.8f)
                  .with_temperature(0.7f));
  v.push_back(Case("combined_mqa_hidden_row")
                  .heads(3, 1, 3, 2)
                  .dims(6, 6, 2, 4)
                  .with_causal(TL, "--causal")
                  .with_key_length(5)
                  .with_mask(2, 1, "|u1")
                  .with_bias(3, 3, "<f4")
                  .hide_row(4));
  // The backend auto picks OpenCL when present; the answer must be the same.
  Case a("backend_auto");
  a.heads(2, 1, 3, 3).dims(5, 6, 3, 4).with_causal(TL, "--causal");
  a.backend = "auto";
  v.push_back(a);
  // Every case again on each other backend without --weights (the output-only path, fused on
  // OpenCL, which compute uses by default), and a few with --weights (the staged path).
  const size_t n_cpu_cases = v.size();
  for (const std::string& b : available_backends()) {
    if (b == "cpu") continue;
    for (size_t i = 0; i < n_cpu_cases; ++i) {
      if (!v[i].backend.empty()) continue;
      Case c = v[i];
      c.name += "_" + b;
      c.backend = b;
      const bool staged_too = c.name.rfind("combined", 0) == 0 || c.name.rfind("mask_2d", 0) == 0;
      if (staged_too) v.push_back(c);
      c.name += "_output_only";
      c.weights = false;
      v.push_back(c);
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(EndToEnd, ComputeCli, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// ---- errors ----------------------------------------------------------------------------------

// A valid problem on disk: Q (2, 3, 4), K/V (1, 5, 4)/(1, 5, 2) (MQA), plus output paths.
struct Files {
  std::string q, k, v, out, weights;
  Files() {
    std::mt19937 rng(3);
    q = write_stack("eq.npy", test::random_heads(2, 3, 4, rng), 3);
    k = write_stack("ek.npy", test::random_heads(1, 5, 4, rng), 3);
    v = write_stack("ev.npy", test::random_heads(1, 5, 2, rng), 3);
    out = temp_path("eout.npy");
    weights = temp_path("ew.npy");
  }
  std::string args(const std::string& extra = "") const {
    return "compute --q " + q + " --k " + k + " --v " + v + " --out " + out + " --weights " +
           weights + " " + extra;
  }
};

// Exit 2, stderr starting with `start` and containing `what`, and neither output file written.
void expect_usage_error(const Files& f, const std::string& args, const std::string& what,
                        const std::string& start = "error: ") {
  const test::CliResult r = run_cli(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind(start, 0), 0u) << r.err << "\nwanted at the start: " << start;
  EXPECT_NE(r.err.find(what), std::string::npos) << "stderr: " << r.err << "\nwanted: " << what;
  EXPECT_FALSE(file_exists(f.out)) << args;
  EXPECT_FALSE(file_exists(f.weights)) << args;
}

TEST(ComputeCliErrors, ValidFilesWork) {
  Files f;
  const test::CliResult r = run_cli(f.args());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(f.out));
  EXPECT_TRUE(file_exists(f.weights));
}

// Every malformed-file kind, given as each input flag in turn.
TEST(ComputeCliErrors, MalformedNpyNamesTheFlagAndFile) {
  const std::string d24 = test::npy_data("<f4", std::vector<double>(6, 0.5));
  std::string good = npy_fixture("<f4", {2, 3}, std::vector<double>(6, 0.5));
  std::string truncated = good.substr(0, good.size() - 3);
  std::string bad_version = good;
  bad_version[6] = 7;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"", "only 0 bytes"},
      {"hello, world: not numpy at all", "magic"},
      {bad_version, "unsupported .npy format version 7.0"},
      {test::npy_file(1, "{'descr': '<f4', 'shape': (2, 3)", d24), "not a valid Python dict"},
      {test::npy_file(1, "{'descr': '<f4', 'fortran_order': False}", d24), "no 'shape' key"},
      {test::npy_file(1, test::npy_header(">f4", {2, 3}), d24), "big-endian"},
      {test::npy_file(1, test::npy_header("<f4", {2, 3}, true), d24), "fortran_order is True"},
      {test::npy_file(1, test::npy_header("<c8", {2, 3}), d24 + d24), "unsupported dtype '<c8'"},
      {npy_fixture("<f4", {6}, std::vector<double>(6, 1)), "rank 1"},
      {npy_fixture("<f4", {1, 1, 2, 3}, std::vector<double>(6, 1)), "rank 4"},
      {npy_fixture("<f4", {2, 0}, {}), "zero dimension"},
      {truncated, "truncated data"},
      {good + "junk", "trailing garbage"},
      {test::npy_file(1, test::npy_header("<f8", {2147483647, 2147483647, 2147483647}), d24),
       "truncated data"},
      {npy_fixture("<f8", {1, 2}, {1e39, 0}), "outside float32's range"},
  };
  Files f;
  const std::string bad = temp_path("bad.npy");
  for (const auto& [bytes, what] : files) {
    ASSERT_TRUE(write_bytes(bad, bytes));
    expect_usage_error(f, "compute --q " + bad + " --k " + f.k + " --v " + f.v + " --out " + f.out,
                       what, "error: --q " + bad + ": ");
    expect_usage_error(f, f.args("--bias " + bad), what, "error: --bias " + bad + ": ");
  }
  // One of each kind for the other inputs.
  ASSERT_TRUE(write_bytes(bad, truncated));
  expect_usage_error(f, "compute --q " + f.q + " --k " + bad + " --v " + f.v + " --out " + f.out,
                     "error: --k " + bad + ": truncated data");
  expect_usage_error(f, "compute --q " + f.q + " --k " + f.k + " --v " + bad + " --out " + f.out,
                     "error: --v " + bad + ": truncated data");
  expect_usage_error(f, f.args("--mask " + bad), "error: --mask " + bad + ": truncated data");
}

// Randomly corrupted inputs through the real binary: a result or exit 2, never a crash or hang,
// and no output file on error.
TEST(ComputeCliErrors, CorruptedFilesNeverCrash) {
  Files f;
  const std::string good = test::read_bytes(f.q);
  ASSERT_FALSE(good.empty());
  const std::string bad = temp_path("fuzz.npy");
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    std::string bytes = good;
    if (trial % 4 == 0) bytes.resize(rng() % bytes.size());
    const int flips = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < flips && !bytes.empty(); ++i)
      bytes[rng() % std::min<size_t>(bytes.size(), 160)] = static_cast<char>(rng() & 0xff);
    ASSERT_TRUE(write_bytes(bad, bytes));
    std::remove(f.out.c_str());
    const test::CliResult r =
        run_cli("compute --q " + bad + " --k " + f.k + " --v " + f.v + " --out " + f.out);
    ASSERT_TRUE(r.status == 0 || r.status == 2) << "status " << r.status << ": " << r.err;
    if (r.status == 2) {
      EXPECT_EQ(r.err.rfind("error: --", 0), 0u) << r.err;
      EXPECT_FALSE(file_exists(f.out));
    }
  }
}

TEST(ComputeCliErrors, UnreadableFiles) {
  Files f;
  expect_usage_error(f, "compute --q /no/such/q.npy --k " + f.k + " --v " + f.v + " --out " + f.out,
                     "error: --q /no/such/q.npy: cannot read");
  expect_usage_error(f,
                     "compute --q " + f.q + " --k " ATTN_TEST_TMP " --v " + f.v + " --out " + f.out,
                     "error: --k " ATTN_TEST_TMP ": cannot read");
  expect_usage_error(f, f.args("--mask /no/such/m.npy"), "error: --mask /no/such/m.npy");
}

TEST(ComputeCliErrors, NonFiniteInputsNameTensorAndIndex) {
  Files f;
  std::mt19937 rng(5);
  HeadStack qs = test::random_heads(2, 3, 4, rng);
  qs[1](2, 0) = std::nanf("");
  const std::string qp = write_stack("nan_q.npy", qs, 3);
  expect_usage_error(f, "compute --q " + qp + " --k " + f.k + " --v " + f.v + " --out " + f.out,
                     "error: --q " + qp + ": Q[1, 2, 0] is nan; expected a finite number");

  HeadStack ks = test::random_heads(1, 5, 4, rng);
  ks[0](3, 1) = std::numeric_limits<float>::infinity();
  const std::string kp = write_stack("inf_k.npy", ks, 2);
  expect_usage_error(f, "compute --q " + f.q + " --k " + kp + " --v " + f.v + " --out " + f.out,
                     "error: --k " + kp + ": K[3, 1] is inf");

  HeadStack vs = test::random_heads(1, 5, 2, rng);
  vs[0](4, 1) = kNegInf;
  const std::string vp = write_stack("inf_v.npy", vs, 3, "<f8");
  expect_usage_error(f, "compute --q " + f.q + " --k " + f.k + " --v " + vp + " --out " + f.out,
                     "error: --v " + vp + ": V[0, 4, 1] is -inf");

  HeadStack bs = test::random_heads(2, 3, 5, rng);
  bs[0](1, 1) = std::numeric_limits<float>::infinity();
  const std::string bp = write_stack("inf_b.npy", bs, 3);
  expect_usage_error(f, f.args("--bias " + bp), "error: --bias " + bp + ": bias[0, 1, 1] is inf");
  bs[0](1, 1) = std::nanf("");
  const std::string bp2 = write_stack("nan_b.npy", bs, 3, "<f8");
  expect_usage_error(f, f.args("--bias " + bp2), "bias[0, 1, 1] is nan");

  HeadStack ms = {Matrix::Ones(3, 5)};
  ms[0](2, 4) = std::nanf("");
  const std::string mp = write_stack("nan_m.npy", ms, 2);
  expect_usage_error(f, f.args("--mask " + mp), "error: --mask " + mp + ": mask[2, 4] is nan");
}

TEST(ComputeCliErrors, ShapesThatDoNotFit) {
  Files f;
  std::mt19937 rng(9);
  const std::string q3 = write_stack("q3.npy", test::random_heads(3, 3, 4, rng), 3);
  const std::string k2 = write_stack("k2.npy", test::random_heads(2, 5, 4, rng), 3);
  const std::string v2 = write_stack("v2.npy", test::random_heads(2, 5, 2, rng), 3);
  expect_usage_error(f, "compute --q " + q3 + " --k " + k2 + " --v " + v2 + " --out " + f.out,
                     "--q " + q3 + " (3, 3, 4) has H = 3 heads, not a multiple of --k " + k2 +
                         " (2, 5, 4)'s H_kv = 2");
  // K and V head counts differ.
  expect_usage_error(f, "compute --q " + f.q + " --k " + k2 + " --v " + f.v + " --out " + f.out,
                     "K and V need the same head count");
  // d_k differs.
  const std::string k_dk = write_stack("k_dk.npy", test::random_heads(1, 5, 3, rng), 2);
  expect_usage_error(
      f, "compute --q " + f.q + " --k " + k_dk + " --v " + f.v + " --out " + f.out,
      "--k " + k_dk + " (5, 3): K has d_k = 3 columns but --q " + f.q + " (2, 3, 4) has d_k = 4");
  // n_k differs between K and V.
  const std::string v_nk = write_stack("v_nk.npy", test::random_heads(1, 6, 2, rng), 2);
  expect_usage_error(f, "compute --q " + f.q + " --k " + f.k + " --v " + v_nk + " --out " + f.out,
                     "V has n_k = 6 rows but --k " + f.k + " (1, 5, 4) has n_k = 5");
  // Masks of the wrong shape or head count (H = 2, n_q = 3, n_k = 5).
  const std::string m_t = write_stack("m_t.npy", {Matrix::Ones(5, 3)}, 2, "|b1");
  expect_usage_error(f, f.args("--mask " + m_t),
                     "--mask " + m_t + ": mask has shape (5, 3); expected (n_q, n_k) = (3, 5)");
  const std::string m_h = write_stack("m_h.npy", HeadStack(3, Matrix::Ones(3, 5)), 3, "|b1");
  expect_usage_error(f, f.args("--mask " + m_h), "mask has shape (3, 3, 5)");
  const std::string b_h = write_stack("b_h.npy", HeadStack(4, Matrix::Zero(3, 5)), 3);
  expect_usage_error(f, f.args("--bias " + b_h), "--bias " + b_h + ": bias has shape (4, 3, 5)");
}

TEST(ComputeCliErrors, BadFlags) {
  Files f;
  expect_usage_error(f, f.args("--bogus"), "--bogus");
  expect_usage_error(f, "compute --q " + f.q + " --k " + f.k + " --v " + f.v, "--out");
  expect_usage_error(f, "compute --k " + f.k + " --v " + f.v + " --out " + f.out, "--q");
  expect_usage_error(f, f.args("--causal=sideways"), "--causal: expected top-left or lower-right");
  expect_usage_error(f, f.args("--window -1"), "--window");
  expect_usage_error(f, f.args("--window two"), "--window");
  expect_usage_error(f, f.args("--key-length 6"), "--key-length: 6 is more than n_k = 5");
  expect_usage_error(f, f.args("--key-length -2"), "--key-length");
  expect_usage_error(f, f.args("--global 0,x"), "--global: entry 1 'x' is not a position");
  expect_usage_error(f, f.args("--global 1,"), "--global");
  expect_usage_error(f, f.args("--global ''"), "--global: expected a comma-separated list");
  expect_usage_error(f, f.args("--global 0,5"), "--global: position 5 (entry 1) is outside 0..4");
  expect_usage_error(f, f.args("--temperature 0"), "--temperature: expected a finite number > 0");
  expect_usage_error(f, f.args("--temperature -1"), "--temperature");
  expect_usage_error(f, f.args("--temperature nan"), "--temperature");
  expect_usage_error(f, f.args("--scale nan"), "--scale: expected a finite number");
  expect_usage_error(f, f.args("--scale 1e300"), "--scale");
  expect_usage_error(f, f.args("--backend gpu"), "--backend: unknown backend 'gpu'");
  expect_usage_error(f,
                     "compute --q " + f.q + " --k " + f.k + " --v " + f.v + " --out " + f.out +
                         " --weights " + f.out,
                     "--weights");
}

TEST(ComputeCliErrors, ScoresOverflowingFloat32AreReportedNotWritten) {
  Files f;
  // Finite inputs whose logits (4 terms of 1e40, times 1/sqrt(4)) exceed float32.
  const std::string big = write_stack("big.npy", {Matrix::Constant(3, 4, 1e20f)}, 2);
  const std::string v3 = write_stack("v3.npy", {Matrix::Ones(3, 2)}, 2);
  expect_usage_error(f, "compute --q " + big + " --k " + big + " --v " + v3 + " --out " + f.out,
                     "may reach 2e+40, which would overflow float32");
  // Fine inputs, but a temperature so small that logits / T overflow.
  expect_usage_error(f, f.args("--temperature 1e-39"), "would overflow float32");
  // Large but safe values pass (the exact per-cell bound, not only the cheap one).
  HeadStack qs = {Matrix::Zero(3, 4)};
  qs[0](0, 0) = 1e19f;
  qs[0](1, 1) = 1e19f;
  HeadStack ks = {Matrix::Zero(3, 4)};
  ks[0](0, 1) = 1e19f;  // q0·k0 = 0 and q1·k0 = 1e38 * 0.5: inside float32
  ks[0](1, 0) = 1e-19f;
  const std::string qp = write_stack("bigq.npy", qs, 2), kp = write_stack("bigk.npy", ks, 2);
  const test::CliResult r =
      run_cli("compute --q " + qp + " --k " + kp + " --v " + v3 + " --out " + f.out);
  EXPECT_EQ(r.status, 0) << r.err;
}

// An empty ICD folder hides every OpenCL driver, so this runs wherever the tests run.
TEST(ComputeCliErrors, OpenclWithoutPlatformIsARuntimeFailure) {
  const std::string empty = temp_path("no_icd");
  ASSERT_EQ(::mkdir(empty.c_str(), 0755), 0);
  Files f;
  const test::CliResult r =
      run_cli(f.args("--backend opencl"),
              "OCL_ICD_VENDORS='" + empty + "' OPENCL_VENDOR_PATH='" + empty + "'");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: --backend opencl", 0), 0u) << r.err;
  EXPECT_FALSE(file_exists(f.out));
  EXPECT_FALSE(file_exists(f.weights));
}

TEST(ComputeCliErrors, AnErrorLeavesAnExistingOutputUntouched) {
  Files f;
  ASSERT_TRUE(write_bytes(f.out, "previous result"));
  const test::CliResult r = run_cli(f.args("--window -3"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::read_bytes(f.out), "previous result");
}

// When the second file cannot be written, the first must not appear either, and no temporary
// files may be left beside it. The path is checked before any work: exit 2, as in every command
// (docs/robustness.md).
TEST(ComputeCliErrors, UnwritableWeightsWritesNoOutput) {
  Files f;
  const std::string dir = temp_path("outdir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string out = dir + "/o.npy";
  const test::CliResult r = run_cli("compute --q " + f.q + " --k " + f.k + " --v " + f.v +
                                    " --out " + out + " --weights /no/such/dir/w.npy");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err,
            "error: --weights: cannot write '/no/such/dir/w.npy': folder '/no/such/dir' "
            "does not exist\n");
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  std::vector<std::string> left;
  while (dirent* e = ::readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") left.push_back(e->d_name);
  ::closedir(d);
  EXPECT_TRUE(left.empty()) << left.size() << " files left, e.g. " << left[0];
}

}  // namespace
}  // namespace attn
