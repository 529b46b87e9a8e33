// AdamW (Loshchilov & Hutter 2019) over a model's flat parameter buffer, with global-norm gradient
// clipping, weight decay on the weight matrices and embeddings only (not on biases or layer norms,
// as nanoGPT and most GPT-2 training does), tensors that can be frozen, and the learning-rate
// schedule: linear warm-up, then cosine or linear decay to a floor.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "lm/model.h"

namespace attn::lm {

enum class LrSchedule { kCosine, kLinear, kConstant };
// "cosine", "linear", "constant"; false for another name.
bool parse_lr_schedule(const std::string& name, LrSchedule& out);
const char* lr_schedule_name(LrSchedule s);

// The learning rate of step `step` (0-based) of `total`: lr·(step+1)/warmup during the first
// `warmup` steps, then from lr down to lr·min_ratio at the last step along a half cosine or a
// straight line (or constant).
double scheduled_lr(long step, long total, long warmup, double lr, double min_ratio,
                    LrSchedule schedule);

struct AdamW {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.1;
  double clip = 1.0;  // global gradient norm cap (0 = none)
  // Tensors that never change (e.g. the zero MLP of an attention-only model).
  std::array<bool, kNumParams> frozen{};
  long steps = 0;
  std::vector<float> m, v;  // the moment estimates, laid out like the parameters

  // One update with learning rate `lr`: decoupled decay p −= lr·wd·p on the decayed tensors, then
  // p −= lr·m̂/(√v̂ + eps) with bias-corrected moments of the clipped gradient. Returns the
  // gradient's global norm before clipping.
  double step(Parameters& params, const Parameters& grad, double lr);
};

// True for the tensors AdamW decays: the matrices of the products and the two embeddings.
bool param_is_decayed(Param p);

}  // namespace attn::lm
