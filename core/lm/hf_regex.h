// The regular expressions of tokenizer.json (Split, Replace) run by PCRE2 in UTF and Unicode
// property mode, with the tokenizers library's iteration over matches (Oniguruma's find_iter).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::lm::hf {

// Byte ranges [first, second) of a text.
using Span = std::pair<size_t, size_t>;

// The regular-expression work one text may cost, in PCRE2 match-limit steps, over every match
// of every pattern (Split, Replace): a pattern that backtracks within PCRE2's per-match limit at
// every position would otherwise take minutes on a page of text (docs/robustness.md).
struct MatchBudget {
  // kMatchBudgetBase + kMatchBudgetPerByte steps per byte of the text.
  static MatchBudget for_text(size_t bytes);
  unsigned long long steps = 0;
};
inline constexpr unsigned long long kMatchBudgetBase = 1'000'000;
inline constexpr unsigned long long kMatchBudgetPerByte = 300;

class Regex {
 public:
  // `literal`: the pattern is a plain string (tokenizer.json's {"String": ...}), matched as is.
  // On failure `error` says why, with the offset into the pattern.
  bool compile(const std::string& pattern, bool literal, std::string& error);
  bool empty() const { return !code_; }

  // Every non-overlapping match of well-formed UTF-8 `text`, left to right, as the tokenizers
  // library iterates them: an empty match right after the previous match is skipped and the
  // search moves on by one character. Fails (with `error`) when a match exceeds PCRE2's
  // backtracking or memory limits, or the text's `budget` runs out (charged with at most about
  // 5.4 times the steps used, and 64 a start position tried), which bound a hostile pattern's time
  // and memory.
  bool find_all(const std::string& text, std::vector<Span>& out, MatchBudget& budget,
                std::string& error) const;

 private:
  std::shared_ptr<void> code_;  // pcre2_code_8, freed with pcre2_code_free_8
  bool literal_empty_ = false;  // a String pattern "" matches nothing
};

}  // namespace attn::lm::hf
