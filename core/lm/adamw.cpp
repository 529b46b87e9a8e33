// AdamW with clipping and the learning-rate schedule (see adamw.h).
#include "lm/adamw.h"

#include <cmath>

namespace attn::lm {

bool parse_lr_schedule(const std::string& name, LrSchedule& out) {
  for (LrSchedule s : {LrSchedule::kCosine, LrSchedule::kLinear, LrSchedule::kConstant})
    if (name == lr_schedule_name(s)) {
      out = s;
      return true;
    }
  return false;
}

const char* lr_schedule_name(LrSchedule s) {
  switch (s) {
    case LrSchedule::kLinear:
      return "linear";
    case LrSchedule::kConstant:
      return "constant";
    default:
      return "cosine";
  }
}

double scheduled_lr(long step, long total, long warmup, double lr, double min_ratio,
                    LrSchedule schedule) {
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (schedule == LrSchedule::kConstant || total - 1 <= warmup) return lr;
  const double progress =
      std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(total - 1 - warmup));
  const double floor = lr * min_ratio;
  const double f =
      schedule == LrSchedule::kCosine ? 0.5 * (1.0 + std::cos(M_PI * progress)) : 1.0 - progress;
  return floor + (lr - floor) * f;
}

bool param_is_decayed(Param p) {
  return p == kWte || p == kWpe || p == kQkvW || p == kAttProjW || p == kFcW || p == kFcProjW;
}

double AdamW::step(Parameters& params, const Parameters& grad, double lr) {
  if (m.size() != params.total()) {
    m.assign(params.total(), 0.0f);
    v.assign(params.total(), 0.0f);
  }
  ++steps;
  double norm2 = 0;
  for (int pi = 0; pi < kNumParams; ++pi) {
    if (frozen[static_cast<size_t>(pi)]) continue;
    const float* g = grad.ptr(static_cast<Param>(pi));
    for (size_t i = 0; i < grad.count[static_cast<size_t>(pi)]; ++i)
      norm2 += static_cast<double>(g[i]) * g[i];
  }
  const double norm = std::sqrt(norm2);
  const auto factor = static_cast<float>(clip > 0 && norm > clip ? clip / norm : 1.0);
  const auto b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const auto c1 = static_cast<float>(1.0 - std::pow(beta1, static_cast<double>(steps)));
  const auto c2 = static_cast<float>(1.0 - std::pow(beta2, static_cast<double>(steps)));
  const auto rate = static_cast<float>(lr), e = static_cast<float>(eps);
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto t = static_cast<Param>(pi);
    if (frozen[static_cast<size_t>(pi)]) continue;
    const auto decay = static_cast<float>(param_is_decayed(t) ? lr * weight_decay : 0.0);
    float* p = params.ptr(t);
    const float* g = grad.ptr(t);
    float* mt = m.data() + params.offset[static_cast<size_t>(pi)];
    float* vt = v.data() + params.offset[static_cast<size_t>(pi)];
    for (size_t i = 0; i < params.count[static_cast<size_t>(pi)]; ++i) {
      const float gi = g[i] * factor;
      mt[i] = b1 * mt[i] + (1 - b1) * gi;
      vt[i] = b2 * vt[i] + (1 - b2) * gi * gi;
      p[i] -= decay * p[i] + rate * (mt[i] / c1) / (std::sqrt(vt[i] / c2) + e);
    }
  }
  return norm;
}

}  // namespace attn::lm
