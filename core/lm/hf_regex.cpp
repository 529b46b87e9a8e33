// PCRE2 for tokenizer.json's patterns; see hf_regex.h.
#include "lm/hf_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace attn::lm::hf {
namespace {

// Bounds on one match: a pattern with catastrophic backtracking stops with an error instead of
// running for hours or taking gigabytes (docs/robustness.md).
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

// Oniguruma's \s (and so the tokenizers library's) is Unicode's White_Space property; PCRE2's \s
// in UCP mode lacks U+0085 (NEXT LINE), the only code point where the two differ. Adds it
// wherever the pattern says \s (in a class or not); \S outside a class excludes it too.
std::string with_onig_space(const std::string& p) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      ++i;
      if (n == 's')
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      else if (n == 'S' && !in_class)
        out += "[^\\s\\x{85}]";
      else {
        out += c;
        out += n;
        if (n == 'Q') {  // \Q...\E is literal: copy it unchanged
          const size_t e = p.find("\\E", i + 1);
          const size_t stop = e == std::string::npos ? p.size() : e + 2;
          out.append(p, i + 1, stop - i - 1);
          i = stop - 1;
        }
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // A ']' (after an optional '^') right at the start of a class is a literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
      const size_t e = p.find(":]", i + 2);
      if (e != std::string::npos) {
        out.append(p, i, e + 2 - i);
        i = e + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

bool Regex::compile(const std::string& pattern, bool literal, std::string& error) {
  code_.reset();
  literal_empty_ = literal && pattern.empty();
  if (literal_empty_) return true;
  const std::string p = literal ? pattern : with_onig_space(pattern);
  int code = 0;
  PCRE2_SIZE at = 0;
  const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* re =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), options, &code, &at, nullptr);
  if (!re) {
    error =
        "invalid regular expression at offset " + std::to_string(at) + ": " + pcre2_message(code);
    return false;
  }
  code_ = std::shared_ptr<void>(re, [](void* r) { pcre2_code_free(static_cast<pcre2_code*>(r)); });
  return true;
}

MatchBudget MatchBudget::for_text(size_t bytes) {
  return {kMatchBudgetBase + kMatchBudgetPerByte * static_cast<unsigned long long>(bytes)};
}

namespace {

// One anchored pcre2_match at `from`, charged to `budget`. PCRE2's match limit counts steps from
// one start position only (one unanchored call tries every position, each within the limit:
// seconds on a few thousand characters), so the caller tries the positions itself, one anchored
// call each. PCRE2 does not say how many steps a match took, only whether it stayed within a
// limit: the match is tried with a limit of 64 steps, then 4 times more each time it runs out,
// up to kMatchLimit, and each attempt's limit is charged — at most 4/3·4·s + 64 for a match of s
// steps: tens for an ordinary piece of text, while a pattern that backtracks at every position
// exhausts the budget after a few hundred positions.
int budgeted_match(const pcre2_code* re, PCRE2_SPTR s, size_t n, size_t from, pcre2_match_data* md,
                   pcre2_match_context* ctx, MatchBudget& budget) {
  for (uint32_t limit = 64;; limit = limit >= kMatchLimit / 4 ? kMatchLimit : limit * 4) {
    if (budget.steps < limit) {
      if (budget.steps == 0) return PCRE2_ERROR_MATCHLIMIT;
      limit = static_cast<uint32_t>(budget.steps);
    }
    budget.steps -= limit;
    pcre2_set_match_limit(ctx, limit);
    const int rc = pcre2_match(re, s, n, from, PCRE2_NO_UTF_CHECK | PCRE2_ANCHORED, md, ctx);
    if (rc != PCRE2_ERROR_MATCHLIMIT || limit >= kMatchLimit) return rc;
  }
}

// The byte after the character at `i` of well-formed UTF-8.
size_t next_char(const std::string& text, size_t i) {
  size_t step = 1;
  while (i + step < text.size() && (static_cast<unsigned char>(text[i + step]) & 0xC0) == 0x80)
    ++step;
  return i + step;
}

}  // namespace

bool Regex::find_all(const std::string& text, std::vector<Span>& out, MatchBudget& budget,
                     std::string& error) const {
  out.clear();
  if (literal_empty_ || !code_ || text.empty()) return true;
  auto* re = static_cast<pcre2_code*>(code_.get());
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> md(
      pcre2_match_data_create_from_pattern(re, nullptr), pcre2_match_data_free);
  std::unique_ptr<pcre2_match_context, void (*)(pcre2_match_context*)> ctx(
      pcre2_match_context_create(nullptr), pcre2_match_context_free);
  if (!md || !ctx) {
    error = "out of memory for a regular expression match";
    return false;
  }
  pcre2_set_heap_limit(ctx.get(), kHeapLimitKiB);
  const auto* s = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t search_from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (search_from <= text.size()) {
    // The leftmost match at or after search_from, as an unanchored search finds it.
    int rc = PCRE2_ERROR_NOMATCH;
    for (size_t at = search_from;; at = next_char(text, at)) {
      rc = budgeted_match(re, s, text.size(), at, md.get(), ctx.get(), budget);
      if (rc != PCRE2_ERROR_NOMATCH || at >= text.size()) break;
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT && budget.steps == 0) {
      error = "the regular expression needs more than the text's budget of matching work (" +
              std::to_string(kMatchBudgetBase) + " steps + " + std::to_string(kMatchBudgetPerByte) +
              " per byte of text): it backtracks too much on this text";
      return false;
    }
    if (rc < 0) {
      error = "the regular expression could not be matched: " + pcre2_message(rc);
      return false;
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    const size_t a = ov[0], b = ov[1];
    if (a == b && have_last && last_end == b) {
      // Oniguruma's find_iter: no empty match right after the previous one; step one character.
      if (search_from >= text.size()) break;
      search_from = next_char(text, search_from);
      continue;
    }
    out.emplace_back(a, b);
    search_from = b;
    have_last = true;
    last_end = b;
  }
  return true;
}

}  // namespace attn::lm::hf
