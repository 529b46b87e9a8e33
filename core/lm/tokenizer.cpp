// GPT-2's byte-level BPE: pre-tokenizer, byte-to-unicode table, merges by rank.
#include "lm/tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <functional>
#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "io/mapped_file.h"
#include "lm/hf_tokenizer.h"

namespace attn::lm {
namespace {

constexpr size_t kMaxTokenizerFile = 64u << 20;

std::string utf8_of(UChar32 c) {
  char buf[4];
  int32_t n = 0;
  U8_APPEND_UNSAFE(buf, n, c);
  return std::string(buf, static_cast<size_t>(n));
}

bool is_letter(UChar32 c) { return (U_GET_GC_MASK(c) & U_GC_L_MASK) != 0; }
bool is_number(UChar32 c) { return (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0; }
bool is_space(UChar32 c) { return u_isUWhiteSpace(c); }
bool is_other(UChar32 c) { return !is_space(c) && !is_letter(c) && !is_number(c); }

std::string hex_byte(unsigned char b) {
  const char* digits = "0123456789ABCDEF";
  return std::string("<0x") + digits[b >> 4] + digits[b & 15] + ">";
}

}  // namespace

bool valid_utf8(const std::string& text, size_t* bad_offset) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const auto n = static_cast<int32_t>(std::min<size_t>(text.size(), INT32_MAX));
  int32_t i = 0;
  while (i < n) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c < 0) {
      if (bad_offset) *bad_offset = static_cast<size_t>(at);
      return false;
    }
  }
  if (text.size() > static_cast<size_t>(INT32_MAX)) {
    if (bad_offset) *bad_offset = static_cast<size_t>(INT32_MAX);
    return false;
  }
  return true;
}

void for_each_pretoken(const std::string& text,
                       const std::function<void(size_t begin, size_t end)>& piece) {
  // Code points are decoded where they are looked at, not kept: a corpus of N bytes needs no
  // tables of 12·N bytes beside it (docs/robustness.md, "Training memory").
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const auto len = static_cast<int32_t>(text.size());
  const size_t n = text.size();
  // The code point at byte `i`; `next` is the byte after it.
  auto at = [&](size_t i, size_t& next) {
    auto k = static_cast<int32_t>(i);
    UChar32 c;
    U8_NEXT(s, k, len, c);
    assert(c >= 0 && "pretokenize needs well-formed UTF-8");
    next = static_cast<size_t>(k);
    return c;
  };
  size_t i = 0;
  while (i < n) {
    size_t i1 = 0;
    const UChar32 c0 = at(i, i1);
    // 's|'t|'re|'ve|'m|'ll|'d (ASCII apostrophe, lower case, as GPT-2's pattern).
    if (c0 == '\'' && i1 < n) {
      size_t i2 = 0, i3 = 0;
      const UChar32 a = at(i1, i2);
      const UChar32 b = i2 < n ? at(i2, i3) : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        piece(i, i2);
        i = i2;
        continue;
      }
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        piece(i, i3);
        i = i3;
        continue;
      }
    }
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
    const size_t j = c0 == ' ' && i1 < n ? i1 : i;
    size_t k = 0;
    const UChar32 cj = j == i ? c0 : at(j, k);
    bool (*cls)(UChar32) = nullptr;
    if (is_letter(cj))
      cls = is_letter;
    else if (is_number(cj))
      cls = is_number;
    else if (is_other(cj))
      cls = is_other;
    if (cls) {
      k = j;
      for (size_t next = 0; k < n && cls(at(k, next));) k = next;
      piece(i, k);
      i = k;
      continue;
    }
    // `\s+(?!\S)|\s+`: a run of white space; when something follows it, the run's last character
    // is left to start the next piece (" word"), unless the run is that one character.
    k = i;
    size_t last = i, count = 0;
    for (size_t next = 0; k < n && is_space(at(k, next)); ++count) {
      last = k;
      k = next;
    }
    assert(k > i);
    const size_t end = k == n || count == 1 ? k : last;
    piece(i, end);
    i = end;
  }
}

std::vector<std::string> pretokenize(const std::string& text) {
  std::vector<std::string> out;
  for_each_pretoken(text, [&](size_t a, size_t b) { out.push_back(text.substr(a, b - a)); });
  return out;
}

const std::array<std::string, 256>& byte_to_unicode() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    int next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[static_cast<size_t>(b)] = utf8_of(printable ? b : next++);
    }
    return t;
  }();
  return table;
}

bool Tokenizer::load(const std::string& vocab_path, const std::string& merges_path, int vocab_size,
                     std::string& error) {
  std::string vocab, merges;
  if (!read_regular_file(vocab_path, kMaxTokenizerFile, vocab, error) ||
      !read_regular_file(merges_path, kMaxTokenizerFile, merges, error))
    return false;
  return parse(vocab, merges, vocab_path, merges_path, vocab_size, error);
}

bool Tokenizer::parse(const std::string& vocab_json, const std::string& merges_txt,
                      const std::string& vocab_name, const std::string& merges_name, int vocab_size,
                      std::string& error) {
  nlohmann::json j;
  std::string deep;
  if (!check_json_depth(vocab_json, kMaxJsonDepth, deep)) {  // io/json_input.h
    error = vocab_name + ": not valid JSON: " + deep;
    return false;
  }
  try {
    j = nlohmann::json::parse(vocab_json);
  } catch (const nlohmann::json::exception& e) {
    error = vocab_name + ": not valid JSON: " + e.what();
    return false;
  }
  if (!j.is_object() || j.empty()) {
    error = vocab_name + ": expected a JSON object of tokens and their ids";
    return false;
  }
  std::vector<std::string> tokens;
  std::vector<bool> used;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& v = it.value();
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size) {
      error = vocab_name + ": token '" + it.key() + "': id " + v.dump() +
              " is not an integer in [0, " + std::to_string(vocab_size) +
              ") (vocab_size of config.json)";
      return false;
    }
    const auto id = static_cast<size_t>(v.get<int64_t>());
    if (id >= tokens.size()) {
      tokens.resize(id + 1);
      used.resize(id + 1, false);
    }
    if (used[id]) {
      error = vocab_name + ": id " + std::to_string(id) + " is given to both '" + tokens[id] +
              "' and '" + it.key() + "'";
      return false;
    }
    used[id] = true;
    tokens[id] = it.key();
  }

  std::vector<Merge> merges;
  size_t line_no = 0, pos = 0;
  bool any_line = false;
  while (pos < merges_txt.size()) {
    size_t end = merges_txt.find('\n', pos);
    if (end == std::string::npos) end = merges_txt.size();
    std::string line = merges_txt.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    any_line = true;
    if (line_no == 1 && line.rfind("#version", 0) == 0) continue;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp == 0 || sp + 1 == line.size() ||
        line.find(' ', sp + 1) != std::string::npos) {
      error = merges_name + ": line " + std::to_string(line_no) +
              ": expected two tokens separated by one space, got '" + line + "'";
      return false;
    }
    merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
  }
  if (!any_line) {
    error = merges_name + ": no merges (the file is empty)";
    return false;
  }
  if (!build(std::move(tokens), std::move(merges), error)) {
    // build() names what is wrong; say which files it came from.
    error = vocab_name + " / " + merges_name + ": " + error;
    return false;
  }
  return true;
}

bool Tokenizer::build(std::vector<std::string> tokens, std::vector<Merge> merges,
                      std::string& error) {
  vocab_.clear();
  ranks_.clear();
  for (size_t id = 0; id < tokens.size(); ++id)
    if (!tokens[id].empty() && !vocab_.emplace(tokens[id], static_cast<int>(id)).second) {
      error = "token '" + tokens[id] + "' appears twice";
      return false;
    }
  const auto& bytes = byte_to_unicode();
  for (int b = 0; b < 256; ++b)
    if (!vocab_.count(bytes[static_cast<size_t>(b)])) {
      error = "the token '" + bytes[static_cast<size_t>(b)] + "' for byte " +
              hex_byte(static_cast<unsigned char>(b)) +
              " is missing; a byte-level vocabulary has all 256";
      return false;
    }
  for (size_t r = 0; r < merges.size(); ++r) {
    const Merge& m = merges[r];
    for (const std::string& t : {m.first, m.second, m.first + m.second})
      if (!vocab_.count(t)) {
        error = "merge " + std::to_string(r + 1) + " '" + m.first + " " + m.second + "': '" + t +
                "' is not in the vocabulary";
        return false;
      }
    // A repeated merge takes its later rank, as GPT-2's encoder (a dict built in order) does.
    ranks_[m.first + " " + m.second] = static_cast<int>(r);
  }
  id_to_token_ = std::move(tokens);
  merges_ = std::move(merges);
  return true;
}

std::vector<std::string> Tokenizer::bpe(const std::string& piece) const {
  std::vector<std::string> word;
  for (unsigned char b : piece) word.push_back(byte_to_unicode()[b]);
  while (word.size() > 1) {
    // The adjacent pair with the lowest rank is merged everywhere it occurs, left to right.
    int best = INT_MAX;
    size_t best_at = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = ranks_.find(word[i] + " " + word[i + 1]);
      if (it != ranks_.end() && it->second < best) {
        best = it->second;
        best_at = i;
      }
    }
    if (best == INT_MAX) break;
    const std::string first = word[best_at], second = word[best_at + 1];
    std::vector<std::string> next;
    next.reserve(word.size());
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == first && word[i + 1] == second) {
        next.push_back(first + second);
        i += 2;
      } else {
        next.push_back(word[i++]);
      }
    }
    word.swap(next);
  }
  return word;
}

bool Tokenizer::load_hf(const std::string& folder, std::string& error) {
  const std::string path = folder + "/tokenizer.json";
  std::string text;
  if (!read_regular_file(path, kMaxHfTokenizerFileBytes, text, error)) return false;
  auto hf = std::make_shared<HfTokenizer>();
  if (!hf->parse(text, path, error)) return false;
  *this = Tokenizer();
  hf_ = std::move(hf);
  hf_json_ = std::move(text);
  return true;
}

int Tokenizer::size() const { return hf_ ? hf_->size() : static_cast<int>(id_to_token_.size()); }

bool Tokenizer::encode(const std::string& text, std::vector<int>& ids, std::string& error) const {
  if (hf_) {
    if (!hf_->encode(text, ids, error)) return false;
  } else {
    ids = encode(text);
  }
  // Every model pass needs at least one position: a tokenizer.json whose normalizer or
  // pre-tokenizer removes every character, or a text of characters its vocabulary lacks (no unk,
  // no byte fallback), gives none. Said here, where a text becomes a model's ids, so no caller
  // runs a pass over nothing.
  if (ids.empty() && !text.empty()) {
    error = no_tokens_error(text);
    return false;
  }
  return true;
}

std::string no_tokens_error(const std::string& text) {
  // The text as the user gave it, shortened on a character boundary.
  std::string shown;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const auto n = static_cast<int32_t>(text.size());
  int32_t i = 0;
  for (int chars = 0; i < n && chars < 40; ++chars) U8_FWD_1(s, i, n);
  shown = text.substr(0, static_cast<size_t>(i)) + (i < n ? "…" : "");
  return "\"" + shown +
         "\" gives no tokens: the tokenizer removes every character or its vocabulary has none of "
         "them (no unk token, no byte fallback); give a text with characters the model knows";
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
  assert(valid_utf8(text));
  if (hf_) return hf_->encode(text);
  std::vector<int> ids;
  for_each_pretoken(text, [&](size_t a, size_t b) {
    for (const std::string& t : bpe(text.substr(a, b - a))) ids.push_back(vocab_.at(t));
  });
  return ids;
}

std::string Tokenizer::token_bytes(int id) const {
  static const std::unordered_map<std::string, unsigned char> from_unicode = [] {
    std::unordered_map<std::string, unsigned char> m;
    for (int b = 0; b < 256; ++b)
      m[byte_to_unicode()[static_cast<size_t>(b)]] = static_cast<unsigned char>(b);
    return m;
  }();
  if (hf_) return hf_->token_bytes(id);
  const std::string& t = token(id);
  std::string out;
  const auto* s = reinterpret_cast<const uint8_t*>(t.data());
  const auto n = static_cast<int32_t>(t.size());
  for (int32_t i = 0; i < n;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    auto it =
        from_unicode.find(t.substr(static_cast<size_t>(start), static_cast<size_t>(i - start)));
    // A token spelled with characters outside the byte table (a special token such as
    // <|endoftext|>) stands for its own UTF-8.
    if (it != from_unicode.end())
      out += static_cast<char>(it->second);
    else
      out += t.substr(static_cast<size_t>(start), static_cast<size_t>(i - start));
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  if (hf_) return hf_->decode(ids);
  std::string out;
  for (int id : ids) out += token_bytes(id);
  return out;
}

const std::string& Tokenizer::token(int id) const {
  static const std::string none;
  if (hf_) return hf_->token(id);
  return id >= 0 && id < size() ? id_to_token_[static_cast<size_t>(id)] : none;
}

int Tokenizer::find(const std::string& token) const {
  if (hf_) return hf_->find(token);
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

std::string Tokenizer::display(int id) const {
  const std::string b = token_bytes(id);
  std::string out;
  const auto* s = reinterpret_cast<const uint8_t*>(b.data());
  const auto n = static_cast<int32_t>(b.size());
  for (int32_t i = 0; i < n;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c < 0) {
      for (int32_t k = start; k < i; ++k) out += hex_byte(s[k]);
    } else if (c == '\n') {
      out += "↵";
    } else if (c == '\t') {
      out += "⇥";
    } else if (c < 0x20 || c == 0x7f) {
      out += hex_byte(static_cast<unsigned char>(c));
    } else {
      out += b.substr(static_cast<size_t>(start), static_cast<size_t>(i - start));
    }
  }
  return out;
}

std::string Tokenizer::vocab_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t id = 0; id < id_to_token_.size(); ++id)
    if (!id_to_token_[id].empty()) j[id_to_token_[id]] = id;
  return j.dump() + "\n";
}

std::string Tokenizer::tokenizer_json() const {
  if (hf_) return hf_json_;
  // GPT-2's own tokenizer.json: byte-level BPE with GPT-2's pattern, no BOS; the special tokens
  // (<|endoftext|>) as added tokens.
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  const auto& bytes = byte_to_unicode();
  for (size_t id = 0; id < id_to_token_.size(); ++id) {
    const std::string& t = id_to_token_[id];
    if (t.empty()) continue;
    vocab[t] = id;
    if (t.size() > 2 && t.front() == '<' && t.back() == '>' &&
        std::find(bytes.begin(), bytes.end(), t) == bytes.end())
      added.push_back({{"id", id},
                       {"content", t},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", true}});
  }
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const Merge& m : merges_) merges.push_back(m.first + " " + m.second);
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"},
                                             {"add_prefix_space", false},
                                             {"trim_offsets", true},
                                             {"use_regex", true}};
  nlohmann::ordered_json j;
  j["version"] = "1.0";
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  j["added_tokens"] = added;
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = byte_level;
  j["post_processor"] = byte_level;
  j["decoder"] = byte_level;
  j["model"] = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"continuing_subword_prefix", nullptr},
                {"end_of_word_suffix", nullptr},
                {"fuse_unk", false},
                {"byte_fallback", false},
                {"ignore_merges", false},
                {"vocab", vocab},
                {"merges", merges}};
  return j.dump(1) + "\n";
}

std::string Tokenizer::merges_txt() const {
  std::string out = "#version: 0.2\n";
  for (const Merge& m : merges_) out += m.first + " " + m.second + "\n";
  return out;
}

}  // namespace attn::lm

namespace attn::lm {

Tokenizer learn_bpe(const std::string& corpus, int n_merges) {
  const auto& bytes = byte_to_unicode();
  std::vector<std::string> tokens;
  for (int pass = 0; pass < 2; ++pass)  // GPT-2's order: printable bytes first
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      if (printable == (pass == 0)) tokens.push_back(bytes[static_cast<size_t>(b)]);
    }
  // Distinct words with their counts, each as its current symbols.
  std::unordered_map<std::string, int> count_of;
  std::vector<std::string> order;
  for_each_pretoken(corpus, [&](size_t a, size_t b) {
    std::string p = corpus.substr(a, b - a);
    if (count_of[p]++ == 0) order.push_back(std::move(p));
  });
  std::vector<std::pair<std::vector<std::string>, int>> words;
  for (const std::string& p : order) {
    std::vector<std::string> w;
    for (unsigned char c : p) w.push_back(bytes[c]);
    words.push_back({std::move(w), count_of[p]});
  }
  std::vector<Merge> merges;
  for (int m = 0; m < n_merges; ++m) {
    std::unordered_map<std::string, int> pairs;
    std::vector<Merge> seen;
    for (const auto& [w, n] : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        int& c = pairs[w[i] + " " + w[i + 1]];
        if (c == 0) seen.emplace_back(w[i], w[i + 1]);
        c += n;
      }
    int best = 1;
    Merge pick;
    for (const Merge& p : seen)
      if (const int c = pairs[p.first + " " + p.second]; c > best) best = c, pick = p;
    if (best < 2) break;
    merges.push_back(pick);
    // Two merges can spell the same token ("ab"+"c", "a"+"bc"): it gets one id.
    if (std::find(tokens.begin(), tokens.end(), pick.first + pick.second) == tokens.end())
      tokens.push_back(pick.first + pick.second);
    for (auto& [w, n] : words) {
      std::vector<std::string> next;
      for (size_t i = 0; i < w.size(); ++i)
        if (i + 1 < w.size() && w[i] == pick.first && w[i + 1] == pick.second) {
          next.push_back(pick.first + pick.second);
          ++i;
        } else {
          next.push_back(w[i]);
        }
      w.swap(next);
    }
  }
  tokens.push_back("<|endoftext|>");
  Tokenizer t;
  std::string error;
  // Every merge's parts and result are tokens by construction.
  const bool ok = t.build(std::move(tokens), std::move(merges), error);
  assert(ok);
  (void)ok;
  return t;
}

}  // namespace attn::lm
