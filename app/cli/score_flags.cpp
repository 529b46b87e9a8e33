// --score and the additive score's weight files (score_flags.h).
#include "cli/score_flags.h"

#include <CLI/CLI.hpp>

#include "attention/additive.h"
#include "cli/cli.h"
#include "cli/mask_flags.h"

namespace attn::cli {

void add_score_flags(CLI::App& cmd, ScoreFlags& f) {
  cmd.add_option("--score", f.score,
                 "score function: dot (scaled dot product, the default) or additive "
                 "(Bahdanau: v^T tanh(W_q q + W_k k), with --additive-wq/-wk/-v)")
      ->check(CLI::IsMember({"dot", "additive"}));
  cmd.add_option("--additive-wq", f.wq, "with --score additive: W_q .npy of shape (d_a, d_k)");
  cmd.add_option("--additive-wk", f.wk, "with --score additive: W_k .npy of shape (d_a, d_k)");
  cmd.add_option("--additive-v", f.v, "with --score additive: v .npy of shape (1, d_a)");
}

void apply_score_flags(const ScoreFlags& f, int d_k, AttentionOptions& options) {
  const bool files = !f.wq.empty() || !f.wk.empty() || !f.v.empty();
  if (f.score != "additive") {
    if (files)
      throw CliError{kExitUsage, "--additive-wq/--additive-wk/--additive-v: need --score additive"};
    if (f.score == "dot") options.additive.reset();
    return;
  }
  if (f.wq.empty() || f.wk.empty() || f.v.empty())
    throw CliError{kExitUsage,
                   "--score additive: needs --additive-wq WQ.npy, --additive-wk WK.npy and "
                   "--additive-v V.npy (W_q, W_k of shape (d_a, d_k), v of shape (1, d_a))"};
  auto one = [](const char* flag, const std::string& path) {
    NpyTensor t = read_npy_input(flag, path, NpyContent::kFloat);
    if (t.rank != 2)
      throw CliError{kExitUsage, std::string(flag) + " " + path + ": has shape " +
                                     npy_shape_text(t.heads, t.rank) + "; expected a 2-D array"};
    return t.heads[0];
  };
  AdditiveScore a;
  a.w_q = one("--additive-wq", f.wq);
  a.w_k = one("--additive-wk", f.wk);
  const Matrix v = one("--additive-v", f.v);
  if (v.rows() != 1)
    throw CliError{kExitUsage, "--additive-v " + f.v + ": has shape (" + std::to_string(v.rows()) +
                                   ", " + std::to_string(v.cols()) +
                                   "); expected (1, d_a) (save v as v[None, :])"};
  a.v = v.row(0);
  const std::string e = validate_additive(a, d_k);
  if (!e.empty()) throw CliError{kExitUsage, "--score additive: " + e};
  options.additive = std::move(a);
}

int scenario_d_k(const Scenario& s) {
  return s.use_projection
             ? static_cast<int>(s.projection.w_q.empty() ? 0 : s.projection.w_q[0].cols())
             : s.qkv.d_k();
}

}  // namespace attn::cli
