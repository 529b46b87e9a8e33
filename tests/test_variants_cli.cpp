// `attention-lab compute --linformer-e/-f`, `--kq-conv` and `--head-mix` end to end: random
// problems written as hand-built .npy files, computed by the real binary, compared with the
// double-precision reference of tests/support/variant_reference (cli.md's formulas); and every
// refusal: exit 2, `error: …` naming the flag and shape, nothing written.
#include <gtest/gtest.h>

#include <random>

#include "attention/engine.h"
#include "io/npy.h"
#include "npy_fixture.h"
#include "variant_reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::run_cli;
using test::temp_path;

constexpr double kTolerance = 1e-5;

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string write_stack(const std::string& name, const HeadStack& heads, int rank) {
  std::vector<double> v;
  for (const Matrix& m : heads)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) v.push_back(m(i, j));
  std::vector<long long> shape;
  if (rank == 3) shape.push_back(static_cast<long long>(heads.size()));
  shape.push_back(heads[0].rows());
  shape.push_back(heads[0].cols());
  const std::string path = temp_path(name);
  EXPECT_TRUE(test::write_bytes(path, test::npy_fixture("<f4", shape, v)));
  return path;
}

void expect_file(const std::string& path, int rank, const std::vector<test::RefMat>& ref) {
  std::string error;
  std::optional<NpyTensor> t = read_npy(path, NpyContent::kFloat, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, rank);
  ASSERT_EQ(t->heads.size(), ref.size());
  for (size_t h = 0; h < ref.size(); ++h) {
    ASSERT_EQ(t->heads[h].cols(), ref[h].cols);
    EXPECT_LE(test::max_abs_diff(t->heads[h], ref[h]), kTolerance) << path << " head " << h;
  }
}

struct Inputs {
  AttentionProblem p;
  std::string args;  // --q --k --v
};

Inputs random_inputs(std::mt19937& rng, int H, int H_kv, int n_q, int n_k) {
  Inputs in;
  std::uniform_int_distribution<int> dim(1, 5);
  const int d_k = dim(rng);
  in.p.input.q = test::random_heads(H, n_q, d_k, rng);
  in.p.input.k = test::random_heads(H_kv, n_k, d_k, rng);
  in.p.input.v = test::random_heads(H_kv, n_k, dim(rng), rng);
  in.args = "compute --q " + q(write_stack("q.npy", in.p.input.q, 3)) + " --k " +
            q(write_stack("k.npy", in.p.input.k, 3)) + " --v " +
            q(write_stack("v.npy", in.p.input.v, 3));
  return in;
}

void run_and_compare(const Inputs& in, const std::string& extra) {
  const std::string out = temp_path("out.npy"), w = temp_path("w.npy");
  const test::VariantRef ref = test::reference_variants(in.p);
  const std::string args = in.args + extra + " --out " + q(out);
  test::CliResult r = run_cli(args + " --weights " + q(w));
  ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
  expect_file(out, 3, ref.output);
  expect_file(w, 3, ref.weights);
  // Without --weights: the outputs-only path takes the staged engine for a variant.
  r = run_cli(args);
  ASSERT_EQ(r.status, 0) << r.err;
  expect_file(out, 3, ref.output);
}

TEST(VariantsCli, LinformerMatchesTheReferenceSharedPerHeadAndGrouped) {
  std::mt19937 rng(160);
  const int layouts[][3] = {{1, 1, 2}, {2, 2, 3}, {4, 2, 3}, {3, 1, 2}};
  for (const auto& l : layouts) {
    std::uniform_int_distribution<int> len(2, 9);
    Inputs in = random_inputs(rng, l[0], l[1], len(rng), len(rng));
    const int n_k = in.p.input.n_k(), k = std::uniform_int_distribution<int>(1, n_k)(rng);
    const int rank = l[2], heads = rank == 3 ? l[1] : 1;
    in.p.options.variants.linformer.e = test::random_heads(heads, k, n_k, rng);
    in.p.options.variants.linformer.f = test::random_heads(heads, k, n_k, rng);
    run_and_compare(in, " --linformer-e " +
                            q(write_stack("e.npy", in.p.options.variants.linformer.e, rank)) +
                            " --linformer-f " +
                            q(write_stack("f.npy", in.p.options.variants.linformer.f, rank)));
  }
}

TEST(VariantsCli, KqConvAndHeadMixMatchTheReferenceCausalAndNot) {
  std::mt19937 rng(2025);
  for (int trial = 0; trial < 6; ++trial) {
    const int H = trial % 2 ? 4 : 2, c_h = trial % 3 == 0 ? H : 2;
    std::uniform_int_distribution<int> len(2, 8), ker(1, 3);
    const int n = len(rng);
    Inputs in = random_inputs(rng, H, trial % 2 ? 2 : 1, n, n);
    std::string extra;
    if (trial % 2 == 0) {
      in.p.options.mask.causal = CausalAlign::kTopLeft;
      extra += " --causal";
    }
    if (trial != 5) {
      const bool per_head = trial % 3 == 1;
      in.p.options.variants.multi_token.kq_conv =
          test::random_heads(per_head ? H : 1, ker(rng), ker(rng), rng);
      extra += " --kq-conv " +
               q(write_stack("t.npy", in.p.options.variants.multi_token.kq_conv, per_head ? 3 : 2));
    }
    if (trial != 4) {
      in.p.options.variants.multi_token.head_mix = test::random_heads(H / c_h, c_h, c_h, rng);
      extra +=
          " --head-mix " + q(write_stack("m.npy", in.p.options.variants.multi_token.head_mix, 3));
    }
    SCOPED_TRACE(extra);
    run_and_compare(in, extra);
  }
}

// Every refusal: exit 2, one `error: …` line that names `needle`, and no output file.
void expect_refused(const std::string& args, const std::string& needle) {
  const std::string out = temp_path("refused.npy");
  const test::CliResult r = run_cli(args + " --out " + q(out));
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "wanted: " << needle << "\ngot: " << r.err;
  EXPECT_FALSE(file_exists(out));
}

TEST(VariantsCli, BadShapesAndCombinationsAreRefused) {
  std::mt19937 rng(3);
  const Inputs in = random_inputs(rng, 4, 2, 5, 6);
  auto npy = [&](const char* name, int heads, int rows, int cols, int rank) {
    return q(write_stack(name, test::random_heads(heads, rows, cols, rng), rank));
  };
  const std::string e = npy("e.npy", 1, 3, 6, 2), f = npy("f.npy", 1, 3, 6, 2);
  const std::string lin = " --linformer-e " + e + " --linformer-f " + f;
  expect_refused(in.args + " --linformer-e " + e, "--linformer-e and --linformer-f go together");
  expect_refused(in.args + " --linformer-f " + f, "only --linformer-f was given");
  expect_refused(in.args + " --linformer-e " + npy("e5.npy", 1, 3, 5, 2) + " --linformer-f " + f,
                 "(3, 5): expected (k, n_k) or (H_kv, k, n_k) with n_k = 6");
  expect_refused(in.args + " --linformer-e " + e + " --linformer-f " + npy("f2.npy", 1, 2, 6, 2),
                 "--linformer-f");
  expect_refused(in.args + " --linformer-e " + npy("e3.npy", 3, 3, 6, 3) + " --linformer-f " + f,
                 "(3, 3, 6): expected (k, n_k) or (H_kv, k, n_k) with H_kv = 2");
  expect_refused(in.args + lin + " --causal", "--causal cannot be used with --linformer-e");
  expect_refused(in.args + lin + " --window 2", "--window cannot be used with --linformer-e");
  expect_refused(in.args + lin + " --key-length 3", "--key-length cannot be used");
  expect_refused(in.args + lin + " --kq-conv " + npy("t.npy", 1, 1, 3, 2),
                 "--kq-conv cannot be used with --linformer-e");
  expect_refused(in.args + lin + " --backend opencl", "--backend opencl: Linformer");
  expect_refused(in.args + " --kq-conv " + npy("t3.npy", 3, 1, 3, 3),
                 "(3, 1, 3): expected θ of shape (c_q, c_k), shared by every head, or (H, c_q, "
                 "c_k) with H = 4");
  expect_refused(in.args + " --head-mix " + npy("m.npy", 1, 3, 3, 3), "--head-mix ");
  expect_refused(in.args + " --head-mix " + npy("m1.npy", 1, 3, 3, 3),
                 "(1, 3, 3): expected (G, c_h, c_h) with G·c_h = H = 4");
  expect_refused(in.args + " --head-mix " + npy("m2.npy", 1, 4, 4, 2), "expected (G, c_h, c_h)");
  expect_refused(in.args + " --head-mix " + npy("m3.npy", 2, 2, 3, 3), "expected (G, c_h, c_h)");
  expect_refused(in.args + " --head-mix " + q(temp_path("missing.npy")), "--head-mix");
  // The additive score reshapes what these variants act on: the two are refused together.
  const int d_k = static_cast<int>(in.p.input.q[0].cols());
  const std::string additive = " --score additive --additive-wq " + npy("wq.npy", 1, 2, d_k, 2) +
                               " --additive-wk " + npy("wk.npy", 1, 2, d_k, 2) + " --additive-v " +
                               npy("av.npy", 1, 1, 2, 2);
  const test::CliResult alone = run_cli(in.args + additive + " --out " + q(temp_path("a.npy")));
  EXPECT_EQ(alone.status, 0) << alone.err;  // alone, the additive score is accepted
  expect_refused(in.args + lin + additive, "do not combine");
  expect_refused(in.args + additive + " --kq-conv " + npy("ta.npy", 1, 1, 3, 2), "do not combine");
  // A non-finite value, named by its index.
  HeadStack bad = test::random_heads(1, 1, 3, rng);
  bad[0](0, 1) = NAN;
  expect_refused(in.args + " --kq-conv " + q(write_stack("nan.npy", bad, 2)), "θ[0, 1] is nan");
}

// explain --online-softmax narrates plain attention's row: a variant's trace is refused, with the
// reason, and a plain one is narrated.
TEST(VariantsCli, OnlineSoftmaxRefusesVariantScenarios) {
  for (const char* example : {"linformer", "multi-token", "head-mixing"}) {
    const test::CliResult r =
        run_cli(std::string("explain --example ") + example + " --query 1 --online-softmax 2");
    EXPECT_EQ(r.status, 2) << example << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("Linformer or Multi-Token Attention"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const test::CliResult ok = run_cli("explain --example fear-is-the --query 1 --online-softmax 2");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(ok.out.find("block"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace attn
