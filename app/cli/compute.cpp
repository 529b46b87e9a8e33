// `attention-lab compute`: attention on Q, K, V read from .npy files, output (and optionally the
// weights) written as float32 .npy; every input is checked before anything is written.
#include "backends/compute.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "attention/engine.h"
#include "attention/format.h"
#include "backends/backend.h"
#include "cli/cli.h"
#include "cli/mask_flags.h"
#include "io/atomic_file.h"
#include "io/npy.h"

namespace attn::cli {
namespace {

struct ComputeOptions {
  std::string q, k, v, out, weights;
  MaskFlags mask;
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
void check_result(const HeadStack& heads, int rank, const std::string& backend, const char* what) {
  for (size_t h = 0; h < heads.size(); ++h)
    for (Eigen::Index i = 0; i < heads[h].rows(); ++i)
      for (Eigen::Index j = 0; j < heads[h].cols(); ++j)
        if (!std::isfinite(heads[h](i, j))) {
          std::ostringstream s;
          s << "the " << backend << " backend computed " << what << "[";
          if (rank == 3) s << h << ", ";
          s << i << ", " << j << "] = " << format_value(heads[h](i, j))
            << " from finite inputs, so nothing was written; the logits (scale·q·k + bias) / T "
               "are too large for float32: scale the inputs down or raise --temperature";
          throw CliError{kExitRuntime, s.str()};
        }
}

struct OutputFile {
  std::string flag, path, bytes;
};

// Writes every file or none: each is first written atomically beside its target, and only
// renamed into place once all of them exist.
void write_all(const std::vector<OutputFile>& files) {
  std::vector<std::string> staged;
  auto fail = [&](const OutputFile& f, const std::string& tmp, std::string why) {
    for (const std::string& s : staged) std::remove(s.c_str());
    // write_file_atomically says "cannot write '<tmp>': <reason>"; name the user's path instead.
    const std::string prefix = "cannot write '" + tmp + "': ";
    if (why.compare(0, prefix.size(), prefix) == 0) why = why.substr(prefix.size());
    throw CliError{kExitRuntime, f.flag + " " + f.path + ": cannot write: " + why};
  };
  for (const OutputFile& f : files) {
    const std::string tmp =
        files.size() == 1 ? f.path : f.path + ".staged-" + std::to_string(::getpid());
    std::string error;
    if (!write_file_atomically(tmp, f.bytes, error)) fail(f, tmp, error);
    if (tmp != f.path) staged.push_back(tmp);
  }
  for (size_t i = 0; i < staged.size(); ++i)
    if (std::rename(staged[i].c_str(), files[i].path.c_str()) != 0)
      fail(files[i], staged[i], std::strerror(errno));
}

int run_compute(const ComputeOptions& o) {
  if (!o.weights.empty() && o.weights == o.out)
    usage_error("--weights: '" + o.weights + "' is also the --out file; give two different paths");
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

  AttentionProblem p;
  p.input.q = std::move(q.heads);
  p.input.k = std::move(k.heads);
  p.input.v = std::move(v.heads);
  p.options.mask = std::move(mask.spec);
  if (o.scale) p.options.scale = static_cast<float>(*o.scale);
  p.options.temperature = temperature;
  const std::string invalid = validate_problem(p);
  if (!invalid.empty()) usage_error(with_flag(o, invalid));

  std::unique_ptr<Backend> backend = make_backend_or_throw(o.backend, o.device);
  if (!backend->supports(p)) {
    if (o.backend != "auto")
      throw CliError{kExitRuntime, "--backend " + o.backend + ": " + backend->name() +
                                       " cannot compute this problem (size or mask kind)"};
    backend = make_cpu_backend();
  }

  const int rank = q.rank;
  std::vector<OutputFile> files;
  if (o.weights.empty()) {
    HeadStack out = backend->run_output(p);
    check_result(out, rank, backend->name(), "output");
    files.push_back({"--out", o.out, npy_bytes(out, rank)});
  } else {
    AttentionTrace t = compute_trace(p, *backend);
    const HeadStack& out = t.step("output").heads;
    const HeadStack& weights = t.step("weights").heads;
    check_result(out, rank, backend->name(), "output");
    check_result(weights, rank, backend->name(), "weights");
    files.push_back({"--out", o.out, npy_bytes(out, rank)});
    files.push_back({"--weights", o.weights, npy_bytes(weights, rank)});
  }
  write_all(files);
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
  cmd->add_option("--scale", o->scale, "score scale (default 1/sqrt(d_k))");
  cmd->add_option("--temperature", o->temperature, "softmax temperature T > 0 (default 1)");
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
