// Number formatting for narration, CLI and exports.
#include "attention/format.h"

#include <cmath>
#include <cstdio>

namespace attn {

std::string format_value(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string format_fixed(double x, int decimals, bool unicode) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? (unicode ? "−∞" : "-inf") : (unicode ? "∞" : "inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  // Avoid "-0.000": a value that rounds to zero is shown as zero.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  if (unicode && !s.empty() && s[0] == '-') s.replace(0, 1, "−");
  return s;
}

}  // namespace attn
