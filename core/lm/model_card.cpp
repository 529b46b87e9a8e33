// Reads the first paragraph of a model card (see model_card.h).
#include "lm/model_card.h"

#include <sstream>

#include "io/input_file.h"

namespace attn::lm {

namespace {

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// Not prose: a heading, an image, an HTML tag or comment, a rule, a table row.
bool decoration(const std::string& line) {
  return line[0] == '#' || line.rfind("![", 0) == 0 || line[0] == '<' || line[0] == '|' ||
         line.rfind("---", 0) == 0;
}

}  // namespace

std::string model_card_summary(const std::string& folder, size_t max_bytes) {
  std::string text, error;
  if (!read_regular_file(folder + "/README.md", 1u << 20, text, error)) return "";
  std::istringstream in(text);
  std::string line, out;
  bool first = true, front_matter = false;
  while (std::getline(in, line)) {
    const std::string t = trimmed(line);
    if (first && t == "---") {  // YAML front matter, as Hugging Face's cards begin
      front_matter = true;
      first = false;
      continue;
    }
    first = false;
    if (front_matter) {
      front_matter = t != "---";
      continue;
    }
    if (t.empty() || decoration(t)) {
      if (!out.empty()) break;  // the paragraph ends
      continue;
    }
    out += (out.empty() ? "" : " ") + t;
  }
  if (out.size() > max_bytes) {
    size_t cut = out.rfind(' ', max_bytes);
    if (cut == std::string::npos || cut == 0) cut = max_bytes;
    // Never cut inside a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out = out.substr(0, cut) + "…";
  }
  return out;
}

}  // namespace attn::lm
