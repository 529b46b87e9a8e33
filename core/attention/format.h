// Number formatting shared by the narration, the CLI and the exporters, so every view agrees.
#pragma once

#include <string>

namespace attn {

// Shortest round-trip-ish text for a value: "0.31", "-inf", "inf", "nan", "1e+04".
std::string format_value(double x);
// Fixed number of decimals, with −∞ written as "-inf" (or "−∞" when unicode is true).
std::string format_fixed(double x, int decimals, bool unicode = false);

}  // namespace attn
