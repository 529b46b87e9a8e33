// Number formatting shared by the narration, the CLI and the exporters, so every view agrees.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attn {

// Shortest round-trip-ish text for a value: "0.31", "-inf", "inf", "nan", "1e+04".
std::string format_value(double x);
// Fixed number of decimals, with −∞ written as "-inf" (or "−∞" when unicode is true).
std::string format_fixed(double x, int decimals, bool unicode = false);

// Text from a file or the command line (a token, a name, an alphabet) made safe to print on a
// terminal: control characters (C0 including newline, DEL, and U+0080..U+009F) and bytes that are
// not UTF-8 become "\xHH"; printable UTF-8 is kept as it is.
std::string printable_text(const std::string& s);

// `s` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "…" (3 more bytes)
// after it when anything was cut: long labels and titles are shortened before they are laid out
// or drawn, so their cost does not grow with what a file holds (docs/robustness.md).
std::string clip_utf8(const std::string& s, size_t max_bytes);

// The engine's messages name the fields they are about ("n_embd: 48 is not a positive multiple
// of n_head 5"); each front end says them in its own words: the command line its flags, the app
// the labels of its controls. Each (field, words) pair replaces the field where the message
// opens with "field:" and, for a field spelt with '_' (never an ordinary word), wherever it
// stands as a whole word.
using FieldNames = std::vector<std::pair<std::string, std::string>>;
std::string name_fields(const std::string& message, const FieldNames& names);

}  // namespace attn
