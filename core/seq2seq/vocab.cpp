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

bool encode(const Vocab& v, const std::string& text, std::vector<int>& ids, std::string& error) {
  ids.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const int id = v.id(text[i]);
    if (id < 0) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      error = "character " + std::to_string(i) + " ('" +
              (c >= 32 && c < 127 ? std::string(1, text[i]) : "\\x" + std::to_string(c)) +
              "') is not in the model's alphabet \"" + v.chars + "\"";
      return false;
    }
    ids.push_back(id);
  }
  return true;
}

}  // namespace attn::s2s
