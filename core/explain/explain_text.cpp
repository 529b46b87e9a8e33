// Text layout helpers for the narration: symbols, compact numbers, columns and wrapped equations.
#include "explain/explain_text.h"

#include <cmath>

#include "attention/format.h"

namespace attn::explain_text {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

}  // namespace

const Symbols& symbols(bool unicode) {
  static const Symbols kUnicode{"×", "·", "√", "−", "−∞", "Σ", "→",
                                "÷", "≤", "≥", "≈", "…",  "—", "ℓ"};
  static const Symbols kAscii{"x", ".",  "sqrt", "-", "-inf", "sum", "->",
                              "/", "<=", ">=",   "~", "...",  "--",  "l"};
  return unicode ? kUnicode : kAscii;
}

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;  // count lead bytes only: one column per code point
  return w;
}

std::string pad_right(const std::string& s, size_t width) {
  size_t w = display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

std::string pad_left(const std::string& s, size_t width) {
  size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

std::string ascii_only(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x80)
      out += static_cast<char>(c);
    else if ((c & 0xC0) != 0x80)
      out += '?';  // one '?' per code point, dropping continuation bytes
  }
  return out;
}

std::string unicode_reason(const std::string& s) {
  std::string out = s;
  replace_all(out, "-inf", "−∞");
  replace_all(out, ">=", "≥");
  replace_all(out, "<=", "≤");
  replace_all(out, " - ", " − ");
  return out;
}

std::string compact(double x, int precision, bool unicode) {
  int decimals = precision;
  // With no decimals a value below 1 would read "0" or "1" (1 / 2 = 1): it keeps one decimal,
  // or two when that still rounds to zero.
  if (precision == 0 && std::isfinite(x) && x != 0.0 && std::fabs(x) < 1.0)
    decimals = std::fabs(x) < 0.05 ? 2 : 1;
  std::string s = format_fixed(x, decimals, unicode);
  if (!std::isfinite(x)) return s;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  // A weight of 3e-7 is not zero; "≈0" keeps a visible key from looking hidden.
  if (x != 0.0 && (s == "0" || s == "-0" || s == "−0" || s.empty())) return unicode ? "≈0" : "~0";
  return s;
}

std::string product(const std::string& a, const std::string& b, const Symbols& sym) {
  bool negative = starts_with(b, sym.minus) && b != sym.neg_inf;
  return a + sym.times + (negative ? "(" + b + ")" : b);
}

std::string join_sum(const std::vector<std::string>& pieces, const Symbols& sym) {
  std::string out;
  const std::string minus = sym.minus;
  for (size_t k = 0; k < pieces.size(); ++k) {
    const std::string& p = pieces[k];
    if (k == 0)
      out = p;
    else if (starts_with(p, minus) && p != sym.neg_inf)
      out += " " + minus + " " + p.substr(minus.size());
    else
      out += " + " + p;
  }
  return out;
}

std::string vector_text(const std::vector<std::string>& entries, const Symbols& sym,
                        size_t max_shown) {
  std::string out = "[";
  const size_t n = entries.size();
  const bool abbreviate = n > max_shown && n > 6;
  for (size_t c = 0; c < n; ++c) {
    if (abbreviate && c == 3) {
      out += std::string(", ") + sym.ellipsis;
      c = n - 3;
      continue;
    }
    if (c > 0) out += ", ";
    out += entries[c];
  }
  return out + "]";
}

std::string equation(const std::string& indent, const std::string& lhs,
                     const std::vector<Segment>& segments, const Symbols& sym) {
  std::string one_line = indent + lhs;
  for (const Segment& seg : segments) one_line += " = " + join_sum(seg, sym);
  if (display_width(one_line) <= kLineWidth) return one_line + "\n";

  // One segment per line, "=" aligned under the first one.
  const std::string lead = indent + std::string(display_width(lhs), ' ');
  std::string out;
  for (size_t s = 0; s < segments.size(); ++s) {
    std::string line = (s == 0 ? indent + lhs : lead) + " = ";
    const size_t start = display_width(line);
    const std::string cont(start, ' ');
    const Segment& seg = segments[s];
    for (size_t k = 0; k < seg.size(); ++k) {
      std::string piece = k == 0 ? seg[k] : join_sum({"", seg[k]}, sym).substr(1);
      // `piece` is now "+ x" or "− x" for every piece after the first.
      std::string candidate = k == 0 ? line + piece : line + " " + piece;
      if (k > 0 && display_width(candidate) > kLineWidth && display_width(line) > start) {
        out += line + "\n";
        line = cont + piece;
      } else {
        line = candidate;
      }
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace attn::explain_text
