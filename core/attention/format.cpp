// Number formatting for narration, CLI and exports, and text made safe for a terminal.
#include "attention/format.h"

#include <cmath>
#include <cstdint>
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

std::string clip_utf8(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  // Back to the start of the character that would be cut (at most 3 continuation bytes).
  while (end > 0 && max_bytes - end < 4 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80)
    --end;
  return s.substr(0, end) + "…";
}

std::string printable_text(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        escape(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes, no overlong
    // forms, no surrogates, nothing past U+10FFFF.
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07u : len == 3 ? c & 0x0Fu : c & 0x1Fu;
    bool valid = len != 0 && i + len <= n && c <= 0xF4;
    for (size_t k = 1; valid && k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      valid = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    const uint32_t min_cp = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    valid = valid && cp >= min_cp && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!valid) {
      escape(c);
      ++i;
    } else if (cp <= 0x9F) {  // C1 controls, e.g. U+009B (CSI)
      for (size_t k = 0; k < len; ++k) escape(static_cast<unsigned char>(s[i + k]));
      i += len;
    } else {
      out.append(s, i, len);
      i += len;
    }
  }
  return out;
}

namespace {

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

std::string name_fields(const std::string& message, const FieldNames& names) {
  std::string out = message;
  for (const auto& [field, words] : names) {
    if (field.empty()) continue;
    if (out.compare(0, field.size() + 1, field + ":") == 0) out.replace(0, field.size(), words);
    if (field.find('_') == std::string::npos) continue;
    // Whole words only: "n_head" inside "n_heads" or "kv_n_head" is another name.
    for (size_t at = out.find(field); at != std::string::npos; at = out.find(field, at)) {
      const size_t end = at + field.size();
      if ((at > 0 && is_word_char(out[at - 1])) || (end < out.size() && is_word_char(out[end]))) {
        at = end;
        continue;
      }
      out.replace(at, field.size(), words);
      at += words.size();
    }
  }
  return out;
}

}  // namespace attn
