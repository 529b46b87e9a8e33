// Character vocabularies of the date task (see vocab.h).
#include "seq2seq/vocab.h"

namespace attn::s2s {

int Vocab::id(char c) const {
  const auto pos = chars.find(c);
  return pos == std::string::npos ? -1 : specials + static_cast<int>(pos);
}

std::string Vocab::label(int i) const {
  if (i >= specials && i < size()) return std::string(1, chars[static_cast<size_t>(i - specials)]);
  if (specials == 1) return i == 0 ? "<pad>" : "?";
  if (i == kSos) return "<s>";
  if (i == kEos) return "</s>";
  return "?";
}

Vocab default_input_vocab() { return Vocab{" abcdefghijklmnopqrstuvwxyz0123456789,./-':()", 1}; }
Vocab default_output_vocab() { return Vocab{"0123456789-", 2}; }

std::string char_text(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (u >= 32 && u < 127) return std::string(1, c);
  static const char kHex[] = "0123456789abcdef";
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
}

bool check_alphabet(const Vocab& v, std::string& error) {
  if (v.chars.empty()) {
    error = "it is empty";
    return false;
  }
  bool seen[256] = {};
  for (size_t i = 0; i < v.chars.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(v.chars[i]);
    if (seen[c]) {
      error = "character '" + char_text(v.chars[i]) + "' appears twice (again at index " +
              std::to_string(i) + ")";
      return false;
    }
    seen[c] = true;
  }
  return true;
}

bool encode(const Vocab& v, const std::string& text, std::vector<int>& ids, std::string& error) {
  ids.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const int id = v.id(text[i]);
    if (id < 0) {
      std::string alphabet;
      for (char a : v.chars) alphabet += char_text(a);
      error = "character " + std::to_string(i) + " ('" + char_text(text[i]) +
              "') is not in the model's alphabet \"" + alphabet + "\"";
      return false;
    }
    ids.push_back(id);
  }
  return true;
}

}  // namespace attn::s2s
