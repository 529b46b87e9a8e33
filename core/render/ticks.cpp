// Round steps and ticks (see ticks.h).
#include "render/ticks.h"

#include <algorithm>
#include <cmath>

namespace attn {

double nice_step(double at_least, bool with_2_5) {
  if (!(at_least > 0) || !std::isfinite(at_least)) return 1.0;
  // log10 may land just below an exact power of ten (log10(1000) < 3): the loop then reaches
  // 10 × mag, the same value.
  const double mag = std::pow(10.0, std::floor(std::log10(at_least)));
  // A relative slack so a step computed as 0.1 + 0.2 still counts as 0.3's round step.
  const double want = at_least * (1 - 1e-12);
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m == 2.5 && !with_2_5) continue;
    if (m * mag >= want) return m * mag;
  }
  return 10 * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) return {lo};
  const double step = nice_step((hi - lo) / std::max(1, count));
  std::vector<double> out;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && out.size() < 1000;
       ++k)
    out.push_back(std::fabs(k * step) < step * 1e-9 ? 0.0 : k * step);
  return out;
}

}  // namespace attn
