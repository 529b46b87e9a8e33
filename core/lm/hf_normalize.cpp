// tokenizer.json's normalizers and pre-tokenizers on plain text, as the tokenizers library's
// NormalizedString and PreTokenizedString operations do them (hf_pipeline.h).
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>

#include "lm/hf_pipeline.h"
#include "lm/tokenizer.h"

namespace attn::lm::hf {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// (span, is_match) pieces covering the whole text, as the library's Pattern::find_matches.
using Matches = std::vector<std::pair<Span, bool>>;

Matches cover(const std::string& text, const std::vector<Span>& found) {
  Matches m;
  if (text.empty()) return {{{0, 0}, false}};
  size_t prev = 0;
  for (const Span& s : found) {
    if (prev != s.first) m.push_back({{prev, s.first}, false});
    m.push_back({s, true});
    prev = s.second;
  }
  if (prev != text.size()) m.push_back({{prev, text.size()}, false});
  return m;
}

// Each character for which `pred` holds is a match of its own (the library's Pattern for a
// closure or a char).
template <typename Pred>
Matches cover_chars(const std::string& text, Pred pred) {
  if (text.empty()) return {{{0, 0}, false}};
  Matches m;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const auto n = static_cast<int32_t>(text.size());
  size_t last = 0;
  for (int32_t i = 0; i < n;) {
    const auto at = static_cast<size_t>(i);
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (pred(c)) {
      if (last < at) m.push_back({{last, at}, false});
      m.push_back({{at, static_cast<size_t>(i)}, true});
      last = static_cast<size_t>(i);
    }
  }
  if (text.size() > last) m.push_back({{last, text.size()}, false});
  return m;
}

// NormalizedString::split: which spans survive a behaviour (the library's folds, one to one).
std::vector<Span> apply_behavior(Matches m, SplitBehavior b) {
  std::vector<std::pair<Span, bool>> acc;  // (span, remove)
  bool prev = false;
  switch (b) {
    case SplitBehavior::kIsolated:
      for (auto& [s, is] : m) acc.push_back({s, false});
      break;
    case SplitBehavior::kRemoved:
      acc = m;
      break;
    case SplitBehavior::kContiguous:
      for (auto& [s, is] : m) {
        if (is == prev && !acc.empty())
          acc.back().first.second = s.second;
        else
          acc.push_back({s, false});
        prev = is;
      }
      break;
    case SplitBehavior::kMergedWithPrevious:
      for (auto& [s, is] : m) {
        if (is && !prev && !acc.empty())
          acc.back().first.second = s.second;
        else
          acc.push_back({s, false});
        prev = is;
      }
      break;
    case SplitBehavior::kMergedWithNext:
      for (auto it = m.rbegin(); it != m.rend(); ++it) {
        if (it->second && !prev && !acc.empty())
          acc.back().first.first = it->first.first;
        else
          acc.push_back({it->first, false});
        prev = it->second;
      }
      std::reverse(acc.begin(), acc.end());
      break;
  }
  std::vector<Span> out;
  for (auto& [s, remove] : acc)
    if (!remove) out.push_back(s);
  return out;
}

// Replaces each piece still to tokenize by the pieces `fn` cuts from it (empty ones dropped).
template <typename Fn>
bool split_pieces(std::vector<Piece>& pieces, Fn fn, std::string& error) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  for (Piece& p : pieces) {
    if (p.token >= 0) {
      out.push_back(std::move(p));
      continue;
    }
    std::vector<Piece> parts;
    if (!fn(p, parts, error)) return false;
    for (Piece& q : parts)
      if (!q.text.empty()) out.push_back(std::move(q));
  }
  pieces = std::move(out);
  return true;
}

void cut(const Piece& p, const std::string& text, const std::vector<Span>& spans,
         std::vector<Piece>& parts) {
  for (const Span& s : spans)
    parts.push_back({text.substr(s.first, s.second - s.first), -1, p.at_start && s.first == 0});
}

std::string byte_level(const std::string& text) {
  const auto& table = byte_to_unicode();  // lm/tokenizer.h
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char b : text) out += table[b];
  return out;
}

bool is_numeric(UChar32 c) { return (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0; }

std::string growth_error(size_t size, size_t original_bytes) {
  return "the normalized text would be " + std::to_string(size) + " bytes, more than " +
         std::to_string(kNormalizeGrowth) + " times the " + std::to_string(original_bytes) +
         " bytes given plus " + std::to_string(kNormalizeSlack) +
         "; a normalizer may not grow the text without bound";
}

bool pre_tokenize_one(const PreTokenizer& p, std::vector<Piece>& pieces, MatchBudget& budget,
                      std::string& error);

}  // namespace

std::string unicode_normalize(const std::string& text, Normalizer::Kind kind) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (kind) {
    case Normalizer::Kind::kNfc:
      n = icu::Normalizer2::getNFCInstance(status);
      break;
    case Normalizer::Kind::kNfd:
      n = icu::Normalizer2::getNFDInstance(status);
      break;
    case Normalizer::Kind::kNfkc:
      n = icu::Normalizer2::getNFKCInstance(status);
      break;
    default:
      n = icu::Normalizer2::getNFKDInstance(status);
      break;
  }
  if (U_FAILURE(status) || !n) return text;
  const icu::UnicodeString in = icu::UnicodeString::fromUTF8(text);
  icu::UnicodeString out = n->normalize(in, status);
  if (U_FAILURE(status)) return text;
  std::string s;
  out.toUTF8String(s);
  return s;
}

namespace {

bool normalize_one(const Normalizer& n, std::string& text, size_t original_bytes,
                   MatchBudget& budget, std::string& error) {
  switch (n.kind) {
    case Normalizer::Kind::kNfc:
    case Normalizer::Kind::kNfd:
    case Normalizer::Kind::kNfkc:
    case Normalizer::Kind::kNfkd:
      text = unicode_normalize(text, n.kind);
      return true;
    case Normalizer::Kind::kPrepend:
      if (!text.empty()) text = n.text + text;
      return true;
    case Normalizer::Kind::kByteLevel:
      text = byte_level(text);
      return true;
    case Normalizer::Kind::kReplace: {
      std::vector<Span> found;
      if (!n.pattern.re.find_all(text, found, budget, error)) return false;
      if (found.empty()) return true;
      // The output's size is known before it is built: refused before it is allocated.
      size_t size = text.size();
      for (const Span& s : found) size = size - (s.second - s.first) + n.text.size();
      if (size > kNormalizeGrowth * original_bytes + kNormalizeSlack) {
        error = growth_error(size, original_bytes);
        return false;
      }
      std::string out;
      out.reserve(size);
      size_t prev = 0;
      for (const Span& s : found) {
        out.append(text, prev, s.first - prev);
        out += n.text;
        prev = s.second;
      }
      out.append(text, prev, std::string::npos);
      text = std::move(out);
      return true;
    }
    case Normalizer::Kind::kSequence:
      for (const Normalizer& c : n.children)
        if (!normalize(c, text, original_bytes, budget, error)) return false;
      return true;
  }
  return true;
}

}  // namespace

bool normalize(const Normalizer& n, std::string& text, size_t original_bytes, MatchBudget& budget,
               std::string& error) {
  if (!normalize_one(n, text, original_bytes, budget, error)) {
    // The innermost normalizer names itself; a Sequence passes its child's error on.
    if (n.kind != Normalizer::Kind::kSequence || error.rfind("tokenizer.json", 0) != 0)
      error = "tokenizer.json's " + n.where + ": " + error;
    return false;
  }
  if (text.size() > kNormalizeGrowth * original_bytes + kNormalizeSlack) {
    error = "tokenizer.json's " + n.where + ": " + growth_error(text.size(), original_bytes);
    return false;
  }
  return true;
}

bool pre_tokenize(const PreTokenizer& p, std::vector<Piece>& pieces, MatchBudget& budget,
                  std::string& error) {
  if (pre_tokenize_one(p, pieces, budget, error)) return true;
  if (error.rfind("tokenizer.json", 0) != 0) error = "tokenizer.json's " + p.where + ": " + error;
  return false;
}

namespace {

bool pre_tokenize_one(const PreTokenizer& p, std::vector<Piece>& pieces, MatchBudget& budget,
                      std::string& error) {
  switch (p.kind) {
    case PreTokenizer::Kind::kSequence:
      for (const PreTokenizer& c : p.children)
        if (!pre_tokenize(c, pieces, budget, error)) return false;
      return true;
    case PreTokenizer::Kind::kSplit:
      return split_pieces(
          pieces,
          [&](const Piece& piece, std::vector<Piece>& parts, std::string& err) {
            std::vector<Span> found;
            if (!p.pattern.re.find_all(piece.text, found, budget, err)) return false;
            Matches m = cover(piece.text, found);
            if (p.invert)
              for (auto& e : m) e.second = !e.second;
            cut(piece, piece.text, apply_behavior(std::move(m), p.behavior), parts);
            return true;
          },
          error);
    case PreTokenizer::Kind::kDigits:
      return split_pieces(
          pieces,
          [&](const Piece& piece, std::vector<Piece>& parts, std::string&) {
            cut(piece, piece.text,
                apply_behavior(
                    cover_chars(piece.text, is_numeric),
                    p.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous),
                parts);
            return true;
          },
          error);
    case PreTokenizer::Kind::kByteLevel: {
      const bool ok = split_pieces(
          pieces,
          [&](const Piece& piece, std::vector<Piece>& parts, std::string& err) {
            std::string text = piece.text;
            if (p.add_prefix_space && text[0] != ' ') text.insert(0, 1, ' ');
            if (!p.use_regex) {
              parts.push_back({text, -1, piece.at_start});
              return true;
            }
            std::vector<Span> found;
            if (!p.pattern.re.find_all(text, found, budget, err)) return false;
            cut(piece, text, apply_behavior(cover(text, found), SplitBehavior::kIsolated), parts);
            return true;
          },
          error);
      if (!ok) return false;
      for (Piece& piece : pieces)
        if (piece.token < 0) piece.text = byte_level(piece.text);
      return true;
    }
    case PreTokenizer::Kind::kMetaspace:
      return split_pieces(
          pieces,
          [&](const Piece& piece, std::vector<Piece>& parts, std::string&) {
            std::string text;
            for (char c : piece.text) {
              if (c == ' ')
                text += p.replacement;
              else
                text += c;
            }
            const bool starts = text.compare(0, p.replacement.size(), p.replacement) == 0;
            if (!starts && (p.prepend == PreTokenizer::Prepend::kAlways ||
                            (p.prepend == PreTokenizer::Prepend::kFirst && piece.at_start)))
              text = p.replacement + text;
            if (!p.split) {
              parts.push_back({text, -1, piece.at_start});
              return true;
            }
            const std::string& r = p.replacement;
            const Matches m = cover_chars(text, [&](UChar32 c) {
              char buf[4];
              int32_t k = 0;
              U8_APPEND_UNSAFE(buf, k, c);
              return r.size() == static_cast<size_t>(k) && r.compare(0, r.size(), buf, k) == 0;
            });
            cut(piece, text, apply_behavior(m, SplitBehavior::kMergedWithNext), parts);
            return true;
          },
          error);
  }
  return true;
}

}  // namespace

}  // namespace attn::lm::hf
