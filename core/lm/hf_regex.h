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

class Regex {
 public:
  // `literal`: the pattern is a plain string (tokenizer.json's {"String": ...}), matched as is.
  // On failure `error` says why, with the offset into the pattern.
  bool compile(const std::string& pattern, bool literal, std::string& error);
  bool empty() const { return !code_; }

  // Every non-overlapping match of well-formed UTF-8 `text`, left to right, as the tokenizers
  // library iterates them: an empty match right after the previous match is skipped and the
  // search moves on by one character. Fails (with `error`) only when a match exceeds PCRE2's
  // backtracking or memory limits, which bound a hostile pattern's time and memory.
  bool find_all(const std::string& text, std::vector<Span>& out, std::string& error) const;

 private:
  std::shared_ptr<void> code_;  // pcre2_code_8, freed with pcre2_code_free_8
  bool literal_empty_ = false;  // a String pattern "" matches nothing
};

}  // namespace attn::lm::hf
