// The one interface every compute backend (CPU, OpenCL) implements, and how to pick one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

class Backend {
 public:
  virtual ~Backend() = default;
  // Short name for traces and indicators: "cpu", or "opencl" plus the device.
  virtual std::string name() const = 0;
  // Two questions, as ggml asks per operation (shape limits, mask kinds, memory): can this backend
  // compute every stage of `p` (run_stages, which holds four (H, n_q, n_k) matrices)…
  virtual bool supports_trace(const AttentionProblem& p) const = 0;
  // … and can it compute its outputs (run_output, run_weights), which may need far less.
  virtual bool supports_outputs(const AttentionProblem& p) const = 0;
  // Computes the attention stages for every query head into `trace`: steps with ids scores,
  // scaled, masked, weights, output (in that order), plus hidden/empty_row. The input steps and
  // metadata are filled by compute_trace().
  virtual void run_stages(const AttentionProblem& p, AttentionTrace& trace) = 0;
  // Output only (one (n_q, d_v) matrix per query head), without keeping the stages.
  virtual HeadStack run_output(const AttentionProblem& p) = 0;
  // The weights and output of every query head (what compute --weights writes). The default
  // takes them from run_stages; a backend may skip keeping the other stages.
  virtual void run_weights(const AttentionProblem& p, HeadStack& weights, HeadStack& output);
};

// The CPU backend (Eigen). Always available.
std::unique_ptr<Backend> make_cpu_backend();

// Creates a backend by name: "cpu", "opencl" or "auto" (OpenCL when a device exists, else CPU).
// On failure returns null and sets `error` (e.g. "no OpenCL platform found").
std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error, int device = 0);

// Names of the backends this build can create, e.g. {"cpu", "opencl"}.
std::vector<std::string> available_backends();

}  // namespace attn
