// Text layout for the narration: Unicode or ASCII symbols, compact numbers, padded columns and
// equations that wrap at "=" and "+" so they stay readable in an 80–100 column terminal or panel.
#pragma once

#include <string>
#include <vector>

namespace attn::explain_text {

// The lines the narration aims to keep within (terminal and ImGui panel).
constexpr size_t kLineWidth = 100;

// Every non-ASCII character the narration itself emits lives here (tokens aside), so a GUI font
// only needs these glyphs: × · √ − ∞ Σ → ÷ ≤ ≥ ≈ … — ℓ
struct Symbols {
  const char* times;     // "×" / "x"
  const char* dot;       // "·" / "."  (dot product)
  const char* sqrt;      // "√" / "sqrt"
  const char* minus;     // "−" / "-"
  const char* neg_inf;   // "−∞" / "-inf"
  const char* sum;       // "Σ" / "sum"
  const char* arrow;     // "→" / "->"
  const char* divide;    // "÷" / "/"
  const char* le;        // "≤" / "<="
  const char* ge;        // "≥" / ">="
  const char* approx;    // "≈" / "~"
  const char* ellipsis;  // "…" / "..."
  const char* dash;      // "—" / "--"
  const char* ell;       // "ℓ" / "l"  (the online softmax's running sum)
};
const Symbols& symbols(bool unicode);

// Terminal columns of UTF-8 text (one per code point: every symbol above is one column wide).
size_t display_width(const std::string& s);
std::string pad_right(const std::string& s, size_t width);
std::string pad_left(const std::string& s, size_t width);

// Replaces every non-ASCII code point with '?' (tokens in --ascii output).
std::string ascii_only(const std::string& s);

// Replaces the ASCII spellings describe_reason uses ("-inf", ">=") with the Unicode symbols.
std::string unicode_reason(const std::string& s);

// A number with `precision` decimals and trailing zeros dropped ("0.54", "1", "−0.2"), as a
// hand calculation writes it. A nonzero value that rounds to zero is "≈0", never a bare "0";
// with precision 0 a value below 1 keeps one or two decimals ("0.5", not "0" or "1").
std::string compact(double x, int precision, bool unicode);

// "a×b" with a negative b in parentheses: "0.2×(−0.1)".
std::string product(const std::string& a, const std::string& b, const Symbols& sym);

// Joins pieces with " + ", writing "a − b" instead of "a + −b".
std::string join_sum(const std::vector<std::string>& pieces, const Symbols& sym);

// "[a, b, c]"; with more than `max_shown` entries, the first three, "…" and the last two.
std::string vector_text(const std::vector<std::string>& entries, const Symbols& sym,
                        size_t max_shown = 8);

// One equation: `lhs = seg0 = seg1 = …`, each segment a sum of pieces. On one line when it fits
// in kLineWidth; otherwise one segment per line with the "=" signs aligned, and a segment too
// long for its line wraps between pieces. Every line starts with `indent` and ends with '\n'.
using Segment = std::vector<std::string>;
std::string equation(const std::string& indent, const std::string& lhs,
                     const std::vector<Segment>& segments, const Symbols& sym);

}  // namespace attn::explain_text
