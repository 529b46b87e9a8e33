// The colour scale of a stage and its colour-bar ticks (see color_scale.h).
#include "render/color_scale.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/format.h"
#include "render/ticks.h"

namespace attn {

namespace {

// The smallest and largest finite values of m (inf, −inf when there is none) in one pass: at 4096
// tokens a stage is 16 million cells, and this runs on the UI thread once per new trace. Sixteen
// independent lanes so the compiler turns the loop into vector min/max instructions (a single
// running minimum is a dependency chain it may not reorder).
void finite_range(const Matrix& m, double& mn, double& mx) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kMax = std::numeric_limits<float>::max();
  constexpr int kLanes = 16;
  float lo[kLanes], hi[kLanes];
  std::fill(lo, lo + kLanes, kInf);
  std::fill(hi, hi + kLanes, -kInf);
  auto take = [&](int lane, float x) {
    const bool finite = std::fabs(x) <= kMax;  // false for ±∞ and NaN
    const float for_lo = finite ? x : kInf, for_hi = finite ? x : -kInf;
    lo[lane] = for_lo < lo[lane] ? for_lo : lo[lane];
    hi[lane] = for_hi > hi[lane] ? for_hi : hi[lane];
  };
  const float* d = m.data();
  const Eigen::Index size = m.size();
  Eigen::Index k = 0;
  for (; k + kLanes <= size; k += kLanes)
    for (int lane = 0; lane < kLanes; ++lane) take(lane, d[k + lane]);
  for (; k < size; ++k) take(0, d[k]);
  mn = *std::min_element(lo, lo + kLanes);
  mx = *std::max_element(hi, hi + kLanes);
}

}  // namespace

ColorScale color_scale_for(StageId step_id, const Matrix& m, const ColormapChoice& maps) {
  double mn = 0, mx = 0;
  finite_range(m, mn, mx);
  if (!(mn <= mx)) return {maps.sequential, 0.0, 1.0};
  if (mn < 0 || is_diverging(maps.sequential)) {
    const std::string& map = mn < 0 ? maps.diverging : maps.sequential;
    const double a = std::max(std::fabs(mn), std::fabs(mx));
    return {map, a > 0 ? -a : -1.0, a > 0 ? a : 1.0};
  }
  if (step_id == StageId::kWeights)
    return {maps.sequential, 0.0, m.cols() <= 32 || !(mx > 0) ? 1.0 : mx};
  if (mx - mn < 1e-9 * std::max(1.0, std::fabs(mx))) return {maps.sequential, mn - 0.5, mx + 0.5};
  return {maps.sequential, mn, mx};
}

namespace {

// Decimals for three significant digits of the larger end (at least 0, at most 6).
int end_decimals(double lo, double hi) {
  const double a = std::max(std::fabs(lo), std::fabs(hi));
  if (!(a > 0)) return 0;
  return std::clamp(2 - static_cast<int>(std::floor(std::log10(a))), 0, 6);
}

std::string trimmed(double v, int decimals) {
  std::string s = format_fixed(v, decimals, true);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "−0" ? "0" : s;
}

}  // namespace

std::vector<ColorTick> colorbar_ticks(const ColorScale& scale, int max_ticks) {
  const double lo = scale.lo, hi = scale.hi, span = hi - lo;
  int d_end = end_decimals(lo, hi);
  // Ends that round to the same text need more decimals (e.g. 0.6541 .. 0.6547).
  while (d_end < 9 && trimmed(lo, d_end) == trimmed(hi, d_end)) ++d_end;
  std::vector<ColorTick> ticks{{lo, trimmed(lo, d_end)}};
  const int inner_max = std::max(0, max_ticks - 2);
  if (inner_max > 0 && span > 0) {
    // The largest round step (1, 2, 2.5 or 5 × 10^k) with at most inner_max values inside the
    // range, each at least 12% of the range away from the ends: every round step from a
    // hundredth of the range's magnitude to five times it, smallest first.
    const double mag = std::pow(10.0, std::floor(std::log10(span)));
    std::vector<double> best;
    double best_step = 0;
    for (double step = nice_step(0.01 * mag, true); step <= 5 * mag * (1 + 1e-9);
         step = nice_step(step * (1 + 1e-6), true)) {
      // 2.5 × 10^k: the one step whose next smaller round step without 2.5 is not itself.
      const bool quarter = std::fabs(nice_step(step * (1 - 1e-6)) - step) > 1e-9 * step;
      std::vector<double> inner;
      for (double k = std::ceil(lo / step); k * step < hi && inner.size() <= 20; ++k) {
        const double v = std::fabs(k) < 1e-12 ? 0.0 : k * step;
        if (v - lo > 0.12 * span && hi - v > 0.12 * span) inner.push_back(v);
      }
      if (inner.empty() || static_cast<int>(inner.size()) > inner_max) continue;
      // Prefer more ticks, then steps that need no extra decimal (2.5).
      const bool better = best.empty() || inner.size() > best.size() ||
                          (inner.size() == best.size() && !quarter && step > best_step);
      if (better) {
        best = inner;
        best_step = step;
      }
    }
    int d = 0;
    while (d < 9 && std::fabs(best_step * std::pow(10.0, d) -
                              std::round(best_step * std::pow(10.0, d))) > 1e-6)
      ++d;
    for (double v : best) ticks.push_back({v, trimmed(v, d)});
  }
  ticks.push_back({hi, trimmed(hi, d_end)});
  return ticks;
}

}  // namespace attn
