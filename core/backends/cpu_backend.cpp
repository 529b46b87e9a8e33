// The CPU backend: the engine's staged computation, and the fused path for outputs only.
#include "attention/engine.h"
#include "backends/backend.h"
#include "backends/fused.h"

namespace attn {
namespace {

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool supports_trace(const AttentionProblem&) const override { return true; }
  bool supports_outputs(const AttentionProblem&) const override { return true; }

  void run_stages(const AttentionProblem& p, AttentionTrace& t) override {
    compute_stages_cpu(p, t);
  }

  // Weights and output only: the staged blocks without keeping scores, scaled and masked.
  void run_weights(const AttentionProblem& p, HeadStack& weights, HeadStack& output) override {
    std::vector<std::vector<bool>> empty_row;
    compute_weights_cpu(p, weights, output, empty_row);
  }

  // Output only: the fused tiled online softmax, which never holds an (n_q, n_k) matrix. The
  // variants (attention/variants.h) change the stages it fuses, and the additive score has no
  // fused kernel: both take the staged path.
  HeadStack run_output(const AttentionProblem& p) override {
    if (p.options.variants.any()) {
      AttentionTrace t;
      compute_stages_cpu(p, t);
      return std::move(t.find(StageId::kOutput)->heads);
    }
    if (!p.options.additive) return fused_attention_cpu(p);
    HeadStack weights, output;
    std::vector<std::vector<bool>> empty_row;
    compute_weights_cpu(p, weights, output, empty_row);
    return output;
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace attn
