// `attention-lab compute`: attention on Q, K, V read from .npy files, output (and optionally the
// weights) written as float32 .npy; every input is checked before anything is written.
#include "backends/compute.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

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
  // Variants beyond masks (cli.md): Linformer's projections, the key–query convolution, head
  // mixing; "" when not given.
  std::string linformer_e, linformer_f, kq_conv, head_mix;
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
  if (starts("linformer.e")) return flag_file("--linformer-e", o.linformer_e) + ": " + message;
  if (starts("linformer.f")) return flag_file("--linformer-f", o.linformer_f) + ": " + message;
  if (starts("linformer")) return "--linformer-e/--linformer-f: " + message;
  if (starts("multi_token.kq_conv")) return flag_file("--kq-conv", o.kq_conv) + ": " + message;
  if (starts("multi_token.head_mix")) return flag_file("--head-mix", o.head_mix) + ": " + message;
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

// The mask flags given, by name ("--causal", ...), for the refusals that name them.
std::vector<std::string> mask_flags_given(const MaskFlags& m) {
  std::vector<std::string> out;
  if (!m.causal.empty()) out.push_back("--causal");
  if (m.window) out.push_back("--window");
  if (m.global) out.push_back("--global");
  if (m.key_length) out.push_back("--key-length");
  if (!m.mask_file.empty()) out.push_back("--mask");
  if (!m.bias_file.empty()) out.push_back("--bias");
  return out;
}

// Reads --linformer-e/-f, --kq-conv and --head-mix and checks their shapes against Q, K, V (H
// query heads, H_kv key/value heads, n_k keys), naming the flag, the file's own shape and the one
// expected. Throws CliError (exit 2).
VariantSpec load_variants(const ComputeOptions& o, int H, int H_kv, int n_k) {
  VariantSpec v;
  if (o.linformer_e.empty() != o.linformer_f.empty())
    usage_error(std::string("--linformer-e and --linformer-f go together; only ") +
                (o.linformer_e.empty() ? "--linformer-f" : "--linformer-e") + " was given");
  if (!o.linformer_e.empty()) {
    const std::vector<std::string> masks = mask_flags_given(o.mask);
    if (!masks.empty())
      usage_error(masks[0] +
                  " cannot be used with --linformer-e/--linformer-f: masks name key positions, "
                  "and each of Linformer's k projected keys mixes every position");
    if (!o.kq_conv.empty())
      usage_error(
          "--kq-conv cannot be used with --linformer-e/--linformer-f: the key–query "
          "convolution runs over keys in sequence order, and projected keys have none");
    int k = -1;
    for (const auto& [flag, path, out] : {std::tuple<const char*, const std::string&, HeadStack&>{
                                              "--linformer-e", o.linformer_e, v.linformer.e},
                                          {"--linformer-f", o.linformer_f, v.linformer.f}}) {
      NpyTensor t = read_npy_input(flag, path, NpyContent::kFloat);
      const std::string what = flag_file(flag, path) + " " + npy_shape_text(t.heads, t.rank);
      const int rows = static_cast<int>(t.heads[0].rows()),
                cols = static_cast<int>(t.heads[0].cols());
      if (t.rank == 3 && static_cast<int>(t.heads.size()) != H_kv)
        usage_error(what + ": expected (k, n_k) or (H_kv, k, n_k) with H_kv = " +
                    std::to_string(H_kv) + " key/value heads, as --k has");
      if (cols != n_k)
        usage_error(what + ": expected (k, n_k) or (H_kv, k, n_k) with n_k = " +
                    std::to_string(n_k) + ", the number of keys in --k");
      if (rows < 1) usage_error(what + ": k must be at least 1");
      if (k >= 0 && rows != k)
        usage_error(what + ": projects to k = " + std::to_string(rows) +
                    " rows but --linformer-e projects to k = " + std::to_string(k) +
                    "; E and F need the same k");
      k = rows;
      check_finite_input(t.heads, t.rank, flag_file(flag, path),
                         std::string(flag) == "--linformer-e" ? "E" : "F");
      out = std::move(t.heads);
    }
  }
  if (!o.kq_conv.empty()) {
    NpyTensor t = read_npy_input("--kq-conv", o.kq_conv, NpyContent::kFloat);
    const std::string what =
        flag_file("--kq-conv", o.kq_conv) + " " + npy_shape_text(t.heads, t.rank);
    if (t.rank == 3 && static_cast<int>(t.heads.size()) != H)
      usage_error(what +
                  ": expected θ of shape (c_q, c_k), shared by every head, or (H, c_q, c_k) "
                  "with H = " +
                  std::to_string(H) + " query heads");
    if (t.heads[0].rows() < 1 || t.heads[0].cols() < 1)
      usage_error(what + ": the kernel needs c_q >= 1 and c_k >= 1");
    check_finite_input(t.heads, t.rank, flag_file("--kq-conv", o.kq_conv), "θ");
    v.multi_token.kq_conv = std::move(t.heads);
  }
  if (!o.head_mix.empty()) {
    NpyTensor t = read_npy_input("--head-mix", o.head_mix, NpyContent::kFloat);
    const std::string what =
        flag_file("--head-mix", o.head_mix) + " " + npy_shape_text(t.heads, t.rank);
    const int G = static_cast<int>(t.heads.size());
    const int rows = static_cast<int>(t.heads[0].rows()),
              cols = static_cast<int>(t.heads[0].cols());
    if (t.rank != 3 || rows != cols || G * rows != H)
      usage_error(what + ": expected (G, c_h, c_h) with G·c_h = H = " + std::to_string(H) +
                  " query heads (groups of c_h consecutive heads, e.g. (1, " + std::to_string(H) +
                  ", " + std::to_string(H) + ") to mix them all)");
    check_finite_input(t.heads, t.rank, flag_file("--head-mix", o.head_mix), "M");
    v.multi_token.head_mix = std::move(t.heads);
  }
  return v;
}

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
  VariantSpec variants = load_variants(o, H, static_cast<int>(k.heads.size()), n_k);
  check_mask_against(o.mask, mask, H, n_q, n_k);
  if (o.scale && !std::isfinite(static_cast<float>(*o.scale)))
    usage_error("--scale: expected a finite number, got " + format_value(*o.scale));
  const float temperature = static_cast<float>(o.temperature);
  if (!(temperature > 0) || !std::isfinite(temperature))
    usage_error("--temperature: expected a finite number > 0, got " + format_value(o.temperature));
  const int rank = q.rank;
  // With Linformer the weights have one column per projected key.
  const int weight_cols = variants.linformer.enabled() ? variants.linformer.k() : n_k;
  if (weights_index >= 0) {
    const uint64_t bytes = npy_header(rank, static_cast<size_t>(H), n_q, weight_cols).size() +
                           uint64_t{4} * H * n_q * weight_cols;
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
  p.options.variants = std::move(variants);
  apply_score_flags(o.score, p.input.d_k(), p.options);
  const std::string invalid = validate_problem(p);
  if (!invalid.empty()) usage_error(with_flag(o, invalid));

  if (p.options.variants.any() && o.backend == "opencl")
    usage_error(
        "--backend opencl: Linformer, --kq-conv and --head-mix are computed by the "
        "staged CPU engine only; use --backend cpu (or auto)");
  if (p.options.additive && o.backend == "opencl")
    usage_error(
        "--backend opencl: the additive score (--score additive) runs on the CPU only; use "
        "--backend cpu or auto");
  std::unique_ptr<Backend> backend = make_backend_or_throw(o.backend, o.device);
  if (!backend->supports_outputs(p)) {
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
    files.write(weights_index, npy_header(rank, static_cast<size_t>(H), n_q, weight_cols));
    HeadStack out(static_cast<size_t>(H), Matrix(n_q, p.input.d_v()));
    std::string scratch;
    compute_weights_by_rows(p, *backend, weight_block_rows(weight_cols),
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
  cmd->add_option(
      "--linformer-e", o->linformer_e,
      "Linformer key projection E .npy: (k, n_k) or (H_kv, k, n_k); with --linformer-f");
  cmd->add_option(
      "--linformer-f", o->linformer_f,
      "Linformer value projection F .npy: (k, n_k) or (H_kv, k, n_k); with --linformer-e");
  cmd->add_option(
      "--kq-conv", o->kq_conv,
      "Multi-Token Attention key-query convolution kernel .npy: (c_q, c_k) or (H, c_q, c_k)");
  cmd->add_option("--head-mix", o->head_mix,
                  "Multi-Token Attention head mixing .npy: (G, c_h, c_h) with G*c_h = H");
  cmd->footer(
      "Heads: query head h uses key/value head h / (H / H_kv), so H must be a multiple of H_kv. "
      "A 2-D K/V with a 3-D Q is one key/value head shared by every query head (multi-query "
      "attention); (H_kv, n_k, d) with 1 < H_kv < H is grouped-query attention. Q's rank decides "
      "the rank of --out and --weights. Nothing is written unless every input is valid. "
      "Variants (cli.md, \"Variants beyond masks\"): with --linformer-e/-f the weights are "
      "(…, n_q, k) over k projected keys and no mask flag applies; --kq-conv convolves the masked "
      "scores before the softmax; --head-mix mixes the weights of groups of heads after it.");
  cmd->callback([&action, o] { action = [o] { return run_compute(*o); }; });
}

}  // namespace attn::cli
