// Round numbers for axes, colour bars and sparse labels: steps of 1, 2 or 5 × 10^k, so a scale
// reads 0, 50, 100 rather than 0, 37, 74. One routine for the exporter's charts and the app's.
#pragma once

#include <vector>

namespace attn {

// The smallest step >= at_least of the form 1, 2 or 5 × 10^k (also 2.5 × 10^k when with_2_5);
// 1 when at_least is not a positive finite number.
double nice_step(double at_least, bool with_2_5 = false);

// Tick values covering [lo, hi]: every multiple of nice_step((hi − lo) / count) within the range
// (0 written as exactly 0), at most 1000 of them; {lo} when the range is empty.
std::vector<double> nice_ticks(double lo, double hi, int count);

}  // namespace attn
