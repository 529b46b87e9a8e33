// Character vocabularies of the date task: inputs (with padding) and outputs (with start/end).
#pragma once

#include <string>
#include <vector>

namespace attn::s2s {

// Index 0 is padding (input) or <s> (output); index 1 of the output is </s>.
constexpr int kPad = 0;
constexpr int kSos = 0;
constexpr int kEos = 1;

struct Vocab {
  std::string chars;  // the characters, in index order after the special entries
  int specials = 1;   // 1 for the input (pad), 2 for the output (<s>, </s>)

  int size() const { return specials + static_cast<int>(chars.size()); }
  // -1 when the character is not in the vocabulary.
  int id(char c) const;
  // The character for an id, or "<s>", "</s>", "<pad>".
  std::string label(int id) const;
};

Vocab default_input_vocab();   // " abcdefghijklmnopqrstuvwxyz0123456789,./-':()"
Vocab default_output_vocab();  // "0123456789-"

// Checks an alphabet read from a file: at least one character and none twice (ids must be
// unambiguous). On failure names the character.
bool check_alphabet(const Vocab& v, std::string& error);

// A character as it may be printed: itself when printable ASCII, else "\xHH".
std::string char_text(char c);

// Encodes text; on an unknown character returns false and names it and its index in `error`.
bool encode(const Vocab& v, const std::string& text, std::vector<int>& ids, std::string& error);

}  // namespace attn::s2s
