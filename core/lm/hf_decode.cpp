// tokenizer.json's decoders on the tokens' strings, one to one with the tokenizers library's
// decode_chain (hf_pipeline.h).
#include <unicode/utf8.h>

#include <algorithm>
#include <unordered_map>

#include "lm/hf_pipeline.h"
#include "lm/tokenizer.h"

namespace attn::lm::hf {
namespace {

const std::string kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Rust's String::from_utf8_lossy: each maximal ill-formed subpart becomes one U+FFFD.
std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  const auto* s = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto n = static_cast<int32_t>(bytes.size());
  for (int32_t i = 0; i < n;) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c < 0)
      out += kReplacementChar;
    else
      out.append(bytes, static_cast<size_t>(at), static_cast<size_t>(i - at));
  }
  return out;
}

std::vector<std::string> chars_of(const std::string& t) {
  std::vector<std::string> out;
  const auto* s = reinterpret_cast<const uint8_t*>(t.data());
  const auto n = static_cast<int32_t>(t.size());
  for (int32_t i = 0; i < n;) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    (void)c;
    out.push_back(t.substr(static_cast<size_t>(at), static_cast<size_t>(i - at)));
  }
  return out;
}

}  // namespace

const std::unordered_map<std::string, unsigned char>& unicode_to_byte() {
  static const auto table = [] {
    std::unordered_map<std::string, unsigned char> t;
    const auto& b2u = byte_to_unicode();  // lm/tokenizer.h
    for (int b = 0; b < 256; ++b) t[b2u[static_cast<size_t>(b)]] = static_cast<unsigned char>(b);
    return t;
  }();
  return table;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte of a "<0xNN>" token, as the library reads it (Rust's u8::from_str_radix, which also
// takes "+F"), or -1.
int fallback_byte(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  const int lo = hex_digit(t[4]);
  if (lo < 0) return -1;
  if (t[3] == '+') return lo;
  const int hi = hex_digit(t[3]);
  return hi < 0 ? -1 : hi * 16 + lo;
}

void decode_chain(const Decoder& d, std::vector<std::string>& tokens) {
  switch (d.kind) {
    case Decoder::Kind::kSequence:
      for (const Decoder& c : d.children) decode_chain(c, tokens);
      return;
    case Decoder::Kind::kByteLevel: {
      // Each token's characters back to bytes; a token with a character outside the table (an
      // added token such as "<|im_start|>" spelt otherwise) contributes its own UTF-8.
      const auto& table = unicode_to_byte();
      std::string bytes;
      for (const std::string& t : tokens) {
        std::string mine;
        bool all = true;
        for (const std::string& ch : chars_of(t)) {
          const auto it = table.find(ch);
          if (it == table.end()) {
            all = false;
            break;
          }
          mine += static_cast<char>(it->second);
        }
        bytes += all ? mine : t;
      }
      tokens = {utf8_lossy(bytes)};
      return;
    }
    case Decoder::Kind::kReplace: {
      std::string ignored;
      for (std::string& t : tokens) {
        std::vector<Span> found;
        MatchBudget budget = MatchBudget::for_text(t.size());
        if (!d.pattern.re.find_all(t, found, budget, ignored) || found.empty()) continue;
        std::string out;
        size_t prev = 0;
        for (const Span& s : found) {
          out.append(t, prev, s.first - prev);
          out += d.content;
          prev = s.second;
        }
        out.append(t, prev, std::string::npos);
        t = std::move(out);
      }
      return;
    }
    case Decoder::Kind::kByteFallback: {
      std::vector<std::string> out;
      std::string pending;
      auto flush = [&] {
        if (pending.empty()) return;
        if (valid_utf8(pending))
          out.push_back(pending);
        else
          for (size_t k = 0; k < pending.size(); ++k) out.push_back(kReplacementChar);
        pending.clear();
      };
      for (std::string& t : tokens) {
        const int b = fallback_byte(t);
        if (b >= 0) {
          pending += static_cast<char>(b);
          continue;
        }
        flush();
        out.push_back(std::move(t));
      }
      flush();
      tokens = std::move(out);
      return;
    }
    case Decoder::Kind::kFuse: {
      std::string all;
      for (const std::string& t : tokens) all += t;
      tokens = {all};
      return;
    }
    case Decoder::Kind::kStrip:
      for (std::string& t : tokens) {
        const std::vector<std::string> ch = chars_of(t);
        size_t start_cut = 0;
        for (size_t i = 0; i < ch.size() && i < static_cast<size_t>(d.start); ++i) {
          if (ch[i] != d.content) break;
          start_cut = i + 1;
        }
        size_t stop_cut = ch.size();
        for (size_t i = 0; i < static_cast<size_t>(d.stop) && i < ch.size(); ++i) {
          const size_t index = ch.size() - i - 1;
          if (ch[index] != d.content) break;
          stop_cut = index;
        }
        std::string out;
        for (size_t i = start_cut; i < std::max(start_cut, stop_cut); ++i) out += ch[i];
        t = std::move(out);
      }
      return;
    case Decoder::Kind::kMetaspace:
      for (size_t i = 0; i < tokens.size(); ++i) {
        std::string out;
        for (const std::string& ch : chars_of(tokens[i])) {
          if (ch != d.replacement)
            out += ch;
          else if (!(i == 0 && d.prepend))
            out += ' ';
        }
        tokens[i] = std::move(out);
      }
      return;
  }
}

}  // namespace attn::lm::hf

namespace attn::lm::hf {

bool uses_byte_level(const Decoder& d) {
  if (d.kind == Decoder::Kind::kByteLevel) return true;
  for (const Decoder& c : d.children)
    if (uses_byte_level(c)) return true;
  return false;
}

std::string model_token_bytes(const std::string& t, bool byte_fallback, bool byte_level) {
  if (byte_fallback) {
    const int b = fallback_byte(t);
    if (b >= 0) return std::string(1, static_cast<char>(b));
  }
  if (byte_level) {
    const auto& table = unicode_to_byte();
    std::string bytes;
    for (const std::string& ch : chars_of(t)) {
      const auto it = table.find(ch);
      if (it == table.end()) return t;
      bytes += static_cast<char>(it->second);
    }
    return bytes;
  }
  std::string out;  // SentencePiece's ▁ (U+2581) is a space
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 3, "\xe2\x96\x81") == 0) {
      out += ' ';
      i += 3;
    } else {
      out += t[i++];
    }
  }
  return out;
}

}  // namespace attn::lm::hf
