// `attention-lab compute`: attention on Q, K, V read from .npy files, output (and optionally the
// weights) written as float32 .npy; every input is checked before anything is written.
#include "backends/compute.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "attention/engine.h"
#include "attention/format.h"
#include "backends/backend.h"
#include "cli/cli.h"
#include "cli/mask_flags.h"
#include "cli/options.h"
#include "cli/score_flags.h"
#include "io/atomic_file.h"
#include "io/npy.h"

namespace attn::cli {
namespace {

struct ComputeOptions {
  std::string q, k, v, out, weights;
  MaskFlags mask;
  ScoreFlags score;
  std::optional<double> scale;
  double temperature = 1.0;
  std::string backend = "cpu";
  int device = 0;
};

[[noreturn]] void usage_error(const std::string& message) { throw CliError{kExitUsage, message}; }

std::string flag_file(const char* flag, const std::string& path) { return flag + (" " + path); }

// Shapes of Q, K, V against each other, quoting each file's own shape; runs before
// validate_problem so the messages can name both files involved.
void check_qkv_shapes(const ComputeOptions& o, const NpyTensor& q, const NpyTensor& k,
                      const NpyTensor& v) {
  const std::string qs = flag_file("--q", o.q) + " " + npy_shape_text(q.heads, q.rank);
  const std::string ks = flag_file("--k", o.k) + " " + npy_shape_text(k.heads, k.rank);
  const std::string vs = flag_file("--v", o.v) + " " + npy_shape_text(v.heads, v.rank);
  if (k.heads.size() != v.heads.size())
    usage_error(vs + " has " + std::to_string(v.heads.size()) + " key/value heads but " + ks +
                " has " + std::to_string(k.heads.size()) + "; K and V need the same head count");
  if (q.heads.size() % k.heads.size() != 0)
    usage_error(qs + " has H = " + std::to_string(q.heads.size()) + " heads, not a multiple of " +
                ks + "'s H_kv = " + std::to_string(k.heads.size()) + " key/value heads");
  if (k.heads[0].cols() != q.heads[0].cols())
    usage_error(ks + ": K has d_k = " + std::to_string(k.heads[0].cols()) + " columns but " + qs +
                " has d_k = " + std::to_string(q.heads[0].cols()) +
                "; Q and K need the same last dimension");
  if (v.heads[0].rows() != k.heads[0].rows())
    usage_error(vs + ": V has n_k = " + std::to_string(v.heads[0].rows()) + " rows but " + ks +
                " has n_k = " + std::to_string(k.heads[0].rows()) +
                "; K and V need one row per key");
}

// validate_problem names the tensor ("Q[0, 1, 2] is nan", "window must be >= 0", ...); put the
// flag and file in front. The explicit checks above catch nearly everything first.
std::string with_flag(const ComputeOptions& o, const std::string& message) {
  auto starts = [&](const char* p) { return message.rfind(p, 0) == 0; };
  if (starts("mask")) return flag_file("--mask", o.mask.mask_file) + ": " + message;
  if (starts("bias")) return flag_file("--bias", o.mask.bias_file) + ": " + message;
  if (starts("window")) return "--window: " + message;
  if (starts("key length")) return "--key-length: " + message;
  if (starts("global")) return "--global: " + message;
  if (starts("scale")) return "--scale: " + message;
  if (starts("temperature")) return "--temperature: " + message;
  if (starts("Q")) return flag_file("--q", o.q) + ": " + message;
  if (starts("K")) return flag_file("--k", o.k) + ": " + message;
  if (starts("V")) return flag_file("--v", o.v) + ": " + message;
  if (starts("logits")) return "--q/--k: " + message;
  return message;
}

// The last guard: inputs passed every check, but the float computation still produced a NaN or
// infinity (float32 arithmetic breaking down on huge logits). Not the user's input: exit 1.
// `first_row` places a block of rows in the whole result.
void check_result(const Matrix& m, int head, int first_row, int rank, const std::string& backend,
                  const char* what) {
  // x·0 is 0 for every finite x and NaN otherwise, so one vectorised sum clears the matrix; the
  // loop below only runs to name the cell.
  if (std::isfinite((m.array() * 0.0f).sum())) return;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      if (!std::isfinite(m(i, j))) {
        std::ostringstream s;
        s << "the " << backend << " backend computed " << what << "[";
        if (rank == 3) s << head << ", ";
        s << first_row + i << ", " << j << "] = " << format_value(m(i, j))
          << " from finite inputs, so nothing was written; the logits (scale·q·k + bias) / T "
             "are too large for float32: scale the inputs down or raise --temperature";
        throw CliError{kExitRuntime, s.str()};
      }
}

void check_result(const HeadStack& heads, int rank, const std::string& backend, const char* what) {
  for (size_t h = 0; h < heads.size(); ++h)
    check_result(heads[h], static_cast<int>(h), 0, rank, backend, what);
}

// The most bytes a --weights file may hold (docs/robustness.md): 4 GiB, e.g. one head of
// 32,000 × 32,000. Its rows are streamed to the file as they are computed, so memory stays small;
// the limit is on the file itself.
constexpr uint64_t kMaxWeightsFileBytes = uint64_t{4} << 30;

// Rows per block when the weights are streamed: about 4 million cells (16 MB) per stage.
int weight_block_rows(int n_k) { return std::max(1, (1 << 22) / std::max(1, n_k)); }

int run_compute(const ComputeOptions& o) {
  // The outputs are checked, and their temporary files created, before any input is read: a
  // path that cannot be written fails at once, and --weights naming the --out file (by any
  // name) is refused.
  OutputFiles files;
  const int out_index = files.add("--out", o.out);
  const int weights_index = o.weights.empty() ? -1 : files.add("--weights", o.weights);
  NpyTensor q = read_npy_input("--q", o.q, NpyContent::kFloat);
  NpyTensor k = read_npy_input("--k", o.k, NpyContent::kFloat);
  NpyTensor v = read_npy_input("--v", o.v, NpyContent::kFloat);
  LoadedMask mask = load_mask_flags(o.mask);
  check_qkv_shapes(o, q, k, v);
  check_finite_input(q.heads, q.rank, flag_file("--q", o.q), "Q");
  check_finite_input(k.heads, k.rank, flag_file("--k", o.k), "K");
  check_finite_input(v.heads, v.rank, flag_file("--v", o.v), "V");
  const int H = static_cast<int>(q.heads.size());
  const int n_q = static_cast<int>(q.heads[0].rows()), n_k = static_cast<int>(k.heads[0].rows());
  check_mask_against(o.mask, mask, H, n_q, n_k);
  if (o.scale && !std::isfinite(static_cast<float>(*o.scale)))
    usage_error("--scale: expected a finite number, got " + format_value(*o.scale));
  const float temperature = static_cast<float>(o.temperature);
  if (!(temperature > 0) || !std::isfinite(temperature))
    usage_error("--temperature: expected a finite number > 0, got " + format_value(o.temperature));
  const int rank = q.rank;
  if (weights_index >= 0) {
    const uint64_t bytes =
        npy_header(rank, static_cast<size_t>(H), n_q, n_k).size() + uint64_t{4} * H * n_q * n_k;
    if (bytes > kMaxWeightsFileBytes)
      usage_error("--weights: the weights of H·n_q·n_k = " + std::to_string(H) + "·" +
                  std::to_string(n_q) + "·" + std::to_string(n_k) + " cells would be a file of " +
                  byte_size_text(bytes) + "; at most " + byte_size_text(kMaxWeightsFileBytes) +
                  " are written (docs/robustness.md); --out alone has no such limit");
  }

  AttentionProblem p;
  p.input.q = std::move(q.heads);
  p.input.k = std::move(k.heads);
  p.input.v = std::move(v.heads);
  p.options.mask = std::move(mask.spec);
  if (o.scale) p.options.scale = static_cast<float>(*o.scale);
  p.options.temperature = temperature;
  apply_score_flags(o.score, p.input.d_k(), p.options);
  const std::string invalid = validate_problem(p);
  if (!invalid.empty()) usage_error(with_flag(o, invalid));

  if (p.options.additive && o.backend == "opencl")
    usage_error(
        "--backend opencl: the additive score (--score additive) runs on the CPU only; use "
        "--backend cpu or auto");
  std::unique_ptr<Backend> backend = make_backend_or_throw(o.backend, o.device);
  if (!backend->supports(p)) {
    if (o.backend != "auto")
      throw CliError{kExitRuntime, "--backend " + o.backend + ": " + backend->name() +
                                       " cannot compute this problem (size or mask kind)"};
    backend = make_cpu_backend();
  }

  if (weights_index < 0) {
    HeadStack out = backend->run_output(p);
    check_result(out, rank, backend->name(), "output");
    files.write(out_index, npy_bytes(out, rank));
  } else {
    // The weights go to their file block by block as they are computed: memory holds a block of
    // rows, never the whole (H, n_q, n_k).
    files.write(weights_index, npy_header(rank, static_cast<size_t>(H), n_q, n_k));
    HeadStack out(static_cast<size_t>(H), Matrix(n_q, p.input.d_v()));
    std::string scratch;
    compute_weights_by_rows(p, *backend, weight_block_rows(n_k),
                            [&](int h, int first, const Matrix& weights, const Matrix& output) {
                              check_result(weights, h, first, rank, backend->name(), "weights");
                              const std::string_view bytes = npy_data_view(weights, scratch);
                              files.write(weights_index, bytes.data(), bytes.size());
                              out[static_cast<size_t>(h)].middleRows(first, output.rows()) = output;
                            });
    check_result(out, rank, backend->name(), "output");
    files.write(out_index, npy_bytes(out, rank));
  }
  files.commit();
  return kExitOk;
}

}  // namespace

void register_compute(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compute", "Attention on Q, K, V from .npy files");
  auto o = std::make_shared<ComputeOptions>();
  cmd->add_option("--q", o->q, "queries .npy: (n_q, d_k) or (H, n_q, d_k)")->required();
  cmd->add_option("--k", o->k, "keys .npy: (n_k, d_k) or (H_kv, n_k, d_k)")->required();
  cmd->add_option("--v", o->v, "values .npy: (n_k, d_v) or (H_kv, n_k, d_v)")->required();
  add_mask_flags(*cmd, o->mask);
  add_score_flags(*cmd, o->score);
  cmd->add_option("--scale", o->scale, "score scale (default 1/sqrt(d_k))")
      ->check(finite_in(-3.4e38, 3.4e38));
  cmd->add_option("--temperature", o->temperature, "softmax temperature T > 0 (default 1)")
      ->check(finite_positive());
  cmd->add_option("--backend", o->backend, "cpu, opencl or auto (default cpu)");
  cmd->add_option("--device", o->device, "OpenCL device index (bench --backend opencl lists it)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", o->out, "output .npy, float32, with Q's rank")->required();
  cmd->add_option("--weights", o->weights, "also write the attention weights .npy");
  cmd->footer(
      "Heads: query head h uses key/value head h / (H / H_kv), so H must be a multiple of H_kv. "
      "A 2-D K/V with a 3-D Q is one key/value head shared by every query head (multi-query "
      "attention); (H_kv, n_k, d) with 1 < H_kv < H is grouped-query attention. Q's rank decides "
      "the rank of --out and --weights. Nothing is written unless every input is valid.");
  cmd->callback([&action, o] { action = [o] { return run_compute(*o); }; });
}

}  // namespace attn::cli
