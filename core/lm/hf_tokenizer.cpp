// tokenizer.json read into the pipeline's parts (hf_pipeline.h), and encode/decode through them
// in the tokenizers library's order: added tokens, normalizer, pre-tokenizer, model,
// post-processor; decoder.
#include "lm/hf_tokenizer.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "io/input_file.h"
#include "io/json_input.h"
#include "lm/hf_pipeline.h"
#include "lm/tokenizer.h"

namespace attn::lm {
namespace hf {

struct AddedToken {
  std::string content;
  int id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = true;
};

// Added tokens of one kind (matched in the raw text, or in the normalized text), found leftmost
// first and longest first there, as the library's Aho-Corasick automaton (LeftmostLongest). A
// byte trie of the patterns: at each position one walk along the text, as deep as the longest
// pattern that fits, finds the longest match there — not one comparison per pattern, which took
// minutes for 150,000 tokens sharing a long prefix (docs/robustness.md).
struct AddedMatcher {
  std::vector<std::pair<std::string, int>> patterns;  // (text, index into added), longest first
  // The trie: node 0 is the root; a node's children are labelled by one byte each (labels[k]
  // leads to child[k]; a node has few, found with memchr). terminal: the pattern ending there
  // (the first of equal texts, as the library keeps), or -1.
  struct Node {
    std::string labels;
    std::vector<int> child;
    int terminal = -1;
  };
  std::vector<Node> nodes = std::vector<Node>(1);

  int step(int node, unsigned char c) const {
    const Node& n = nodes[static_cast<size_t>(node)];
    const size_t k = n.labels.find(static_cast<char>(c));
    return k == std::string::npos ? -1 : n.child[k];
  }
  void add(std::string text, int index) {
    if (!text.empty()) patterns.emplace_back(std::move(text), index);
  }
  void finish() {
    std::stable_sort(patterns.begin(), patterns.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (size_t k = 0; k < patterns.size(); ++k) {
      int node = 0;
      for (unsigned char c : patterns[k].first) {
        int next = step(node, c);
        if (next < 0) {
          next = static_cast<int>(nodes.size());
          nodes[static_cast<size_t>(node)].labels += static_cast<char>(c);
          nodes[static_cast<size_t>(node)].child.push_back(next);
          nodes.emplace_back();
        }
        node = next;
      }
      int& t = nodes[static_cast<size_t>(node)].terminal;
      if (t < 0) t = static_cast<int>(k);
    }
  }
  // The next match at or after `from`: (start, pattern) or start = npos.
  std::pair<size_t, int> next(const std::string& text, size_t from) const {
    if (patterns.empty()) return {std::string::npos, -1};
    for (size_t i = from; i < text.size(); ++i) {
      int node = 0, best = -1;
      for (size_t j = i; j < text.size(); ++j) {
        node = step(node, static_cast<unsigned char>(text[j]));
        if (node < 0) break;
        const int t = nodes[static_cast<size_t>(node)].terminal;
        if (t >= 0) best = t;
      }
      if (best >= 0) return {i, best};
    }
    return {std::string::npos, -1};
  }
};

struct Pipeline {
  std::vector<AddedToken> added;
  std::unordered_map<int, int> added_by_id;               // id → index into added
  std::unordered_map<std::string, int> added_by_content;  // content → index
  AddedMatcher plain, normalized;
  bool has_normalizer = false, has_pre_tokenizer = false, has_decoder = false;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  Bpe bpe;
  std::unordered_map<int, std::string> model_tokens;  // id → token
  std::vector<int> template_ids = {-1};               // the single template; -1 is the text
  Decoder decoder;
  int size = 0;
};

namespace {

using nlohmann::json;

const json* field(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

bool get_bool(const json& obj, const char* key, const std::string& where, bool fallback) {
  const json* v = field(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean())
    throw_field_error(join(where, key), "expected true or false, got " + json_type_name(*v));
  return v->get<bool>();
}

std::string get_string(const json& obj, const char* key, const std::string& where,
                       bool required = true) {
  const json* v = field(obj, key);
  if (!v) {
    if (required) throw_field_error(join(where, key), "missing");
    return {};
  }
  if (!v->is_string())
    throw_field_error(join(where, key), "expected a string, got " + json_type_name(*v));
  return v->get<std::string>();
}

int get_id(const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxHfTokenizerId)
    throw_field_error(where, "expected a token id in [0, " + std::to_string(kMaxHfTokenizerId) +
                                 "], got " + (v.is_number() ? v.dump() : json_type_name(v)));
  return static_cast<int>(v.get<int64_t>());
}

const json& get_object(const json& parent, const char* key, const std::string& where) {
  const json* v = field(parent, key);
  if (!v) throw_field_error(join(where, key), "missing");
  if (!v->is_object())
    throw_field_error(join(where, key), "expected an object, got " + json_type_name(*v));
  return *v;
}

const json& get_array(const json& parent, const char* key, const std::string& where) {
  const json* v = field(parent, key);
  if (!v) throw_field_error(join(where, key), "missing");
  if (!v->is_array())
    throw_field_error(join(where, key), "expected an array, got " + json_type_name(*v));
  return *v;
}

std::string item(const std::string& where, size_t i) {
  return where + "[" + std::to_string(i) + "]";
}

[[noreturn]] void unsupported(const std::string& where, const std::string& type,
                              const std::string& expected) {
  throw_field_error(where + ".type", "'" + type + "' is not supported; expected " + expected);
}

std::string type_of(const json& obj, const std::string& where) {
  if (!obj.is_object()) throw_field_error(where, "expected an object, got " + json_type_name(obj));
  return get_string(obj, "type", where);
}

// One character (Metaspace's replacement, Strip's content).
std::string one_char(const json& obj, const char* key, const std::string& where) {
  const std::string s = get_string(obj, key, where);
  int32_t i = 0;
  UChar32 c = -1;
  if (!s.empty())
    U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
  if (c < 0 || static_cast<size_t>(i) != s.size())
    throw_field_error(join(where, key), "expected one character, got \"" + s + "\"");
  return s;
}

Pattern read_pattern(const json& obj, const std::string& where) {
  const json& p = get_object(obj, "pattern", where);
  const std::string at = join(where, "pattern");
  Pattern out;
  std::string why;
  if (p.size() == 1 && p.contains("String")) {
    if (!out.re.compile(get_string(p, "String", at), true, why))
      throw_field_error(at + ".String", why);
  } else if (p.size() == 1 && p.contains("Regex")) {
    if (!out.re.compile(get_string(p, "Regex", at), false, why))
      throw_field_error(at + ".Regex", why);
  } else {
    throw_field_error(at, "expected {\"String\": …} or {\"Regex\": …}");
  }
  return out;
}

Normalizer read_normalizer(const json& j, const std::string& where) {
  const std::string type = type_of(j, where);
  Normalizer n;
  n.where = where + " (" + type + ")";
  if (type == "NFC") {
    n.kind = Normalizer::Kind::kNfc;
  } else if (type == "NFD") {
    n.kind = Normalizer::Kind::kNfd;
  } else if (type == "NFKC") {
    n.kind = Normalizer::Kind::kNfkc;
  } else if (type == "NFKD") {
    n.kind = Normalizer::Kind::kNfkd;
  } else if (type == "Prepend") {
    n.kind = Normalizer::Kind::kPrepend;
    n.text = get_string(j, "prepend", where);
  } else if (type == "Replace") {
    n.kind = Normalizer::Kind::kReplace;
    n.pattern = read_pattern(j, where);
    n.text = get_string(j, "content", where);
  } else if (type == "ByteLevel") {
    n.kind = Normalizer::Kind::kByteLevel;
  } else if (type == "Sequence") {
    n.kind = Normalizer::Kind::kSequence;
    const json& list = get_array(j, "normalizers", where);
    for (size_t i = 0; i < list.size(); ++i)
      n.children.push_back(read_normalizer(list[i], item(join(where, "normalizers"), i)));
  } else {
    unsupported(where, type, "one of NFC, NFD, NFKC, NFKD, Prepend, Replace, ByteLevel, Sequence");
  }
  return n;
}

PreTokenizer::Prepend read_prepend_scheme(const json& j, const std::string& where) {
  if (!field(j, "prepend_scheme"))  // files from before prepend_scheme
    return get_bool(j, "add_prefix_space", where, true) ? PreTokenizer::Prepend::kAlways
                                                        : PreTokenizer::Prepend::kNever;
  const std::string s = get_string(j, "prepend_scheme", where);
  if (s == "always") return PreTokenizer::Prepend::kAlways;
  if (s == "first") return PreTokenizer::Prepend::kFirst;
  if (s == "never") return PreTokenizer::Prepend::kNever;
  throw_field_error(join(where, "prepend_scheme"),
                    "'" + s + "' is not one of always, first, never");
}

PreTokenizer read_pre_tokenizer(const json& j, const std::string& where) {
  const std::string type = type_of(j, where);
  PreTokenizer p;
  p.where = where + " (" + type + ")";
  std::string why;
  if (type == "Split") {
    p.kind = PreTokenizer::Kind::kSplit;
    p.pattern = read_pattern(j, where);
    const std::string b = get_string(j, "behavior", where);
    if (b == "Removed")
      p.behavior = SplitBehavior::kRemoved;
    else if (b == "Isolated")
      p.behavior = SplitBehavior::kIsolated;
    else if (b == "MergedWithPrevious")
      p.behavior = SplitBehavior::kMergedWithPrevious;
    else if (b == "MergedWithNext")
      p.behavior = SplitBehavior::kMergedWithNext;
    else if (b == "Contiguous")
      p.behavior = SplitBehavior::kContiguous;
    else
      throw_field_error(join(where, "behavior"),
                        "'" + b +
                            "' is not one of Removed, Isolated, MergedWithPrevious, "
                            "MergedWithNext, Contiguous");
    p.invert = get_bool(j, "invert", where, false);
  } else if (type == "ByteLevel") {
    p.kind = PreTokenizer::Kind::kByteLevel;
    p.add_prefix_space = get_bool(j, "add_prefix_space", where, true);
    p.use_regex = get_bool(j, "use_regex", where, true);
    if (p.use_regex && !p.pattern.re.compile(kGpt2Pattern, false, why))
      throw_field_error(where, why);
  } else if (type == "Digits") {
    p.kind = PreTokenizer::Kind::kDigits;
    p.individual_digits = get_bool(j, "individual_digits", where, false);
  } else if (type == "Metaspace") {
    p.kind = PreTokenizer::Kind::kMetaspace;
    p.replacement = one_char(j, "replacement", where);
    p.prepend = read_prepend_scheme(j, where);
    p.split = get_bool(j, "split", where, true);
  } else if (type == "Sequence") {
    p.kind = PreTokenizer::Kind::kSequence;
    const json& list = get_array(j, "pretokenizers", where);
    for (size_t i = 0; i < list.size(); ++i)
      p.children.push_back(read_pre_tokenizer(list[i], item(join(where, "pretokenizers"), i)));
  } else {
    unsupported(where, type, "one of Split, ByteLevel, Digits, Metaspace, Sequence");
  }
  return p;
}

Decoder read_decoder(const json& j, const std::string& where) {
  const std::string type = type_of(j, where);
  Decoder d;
  if (type == "ByteLevel") {
    d.kind = Decoder::Kind::kByteLevel;
  } else if (type == "Replace") {
    d.kind = Decoder::Kind::kReplace;
    d.pattern = read_pattern(j, where);
    d.content = get_string(j, "content", where);
  } else if (type == "ByteFallback") {
    d.kind = Decoder::Kind::kByteFallback;
  } else if (type == "Fuse") {
    d.kind = Decoder::Kind::kFuse;
  } else if (type == "Strip") {
    d.kind = Decoder::Kind::kStrip;
    d.content = one_char(j, "content", where);
    for (auto [key, out] : {std::pair<const char*, int*>{"start", &d.start}, {"stop", &d.stop}}) {
      const json* v = field(j, key);
      if (!v) throw_field_error(join(where, key), "missing");
      *out = read_json_int(*v, join(where, key), 0, 1 << 20);
    }
  } else if (type == "Metaspace") {
    d.kind = Decoder::Kind::kMetaspace;
    d.replacement = one_char(j, "replacement", where);
    d.prepend = read_prepend_scheme(j, where) != PreTokenizer::Prepend::kNever;
  } else if (type == "Sequence") {
    d.kind = Decoder::Kind::kSequence;
    const json& list = get_array(j, "decoders", where);
    for (size_t i = 0; i < list.size(); ++i)
      d.children.push_back(read_decoder(list[i], item(join(where, "decoders"), i)));
  } else {
    unsupported(where, type,
                "one of ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence");
  }
  return d;
}

// The single-sequence template of a post-processor: the ids before and after the text (-1).
std::vector<int> read_post_processor(const json& j, const std::string& where) {
  const std::string type = type_of(j, where);
  if (type == "ByteLevel") return {-1};
  if (type == "Sequence") {
    std::vector<int> t = {-1};
    const json& list = get_array(j, "processors", where);
    for (size_t i = 0; i < list.size(); ++i) {
      const std::vector<int> outer =
          read_post_processor(list[i], item(join(where, "processors"), i));
      std::vector<int> next;
      for (int id : outer) {
        if (id >= 0)
          next.push_back(id);
        else
          next.insert(next.end(), t.begin(), t.end());
        if (next.size() > 4096) throw_field_error(where, "the template is too long");
      }
      t = std::move(next);
    }
    return t;
  }
  if (type != "TemplateProcessing")
    unsupported(where, type, "one of TemplateProcessing, ByteLevel, Sequence");
  const json& single = get_array(j, "single", where);
  const json& specials = get_object(j, "special_tokens", where);
  std::vector<int> t;
  for (size_t i = 0; i < single.size(); ++i) {
    const std::string at = item(join(where, "single"), i);
    const json& piece = single[i];
    if (!piece.is_object() || piece.size() != 1)
      throw_field_error(at, "expected {\"SpecialToken\": …} or {\"Sequence\": …}");
    if (piece.contains("Sequence")) {
      const json& s = get_object(piece, "Sequence", at);
      const std::string id = get_string(s, "id", at + ".Sequence");
      if (id != "A")
        throw_field_error(at + ".Sequence.id",
                          "a single sequence's template names only A, got " + id);
      t.push_back(-1);
    } else if (piece.contains("SpecialToken")) {
      const json& s = get_object(piece, "SpecialToken", at);
      const std::string name = get_string(s, "id", at + ".SpecialToken");
      const json* entry = field(specials, name.c_str());
      if (!entry || !entry->is_object())
        throw_field_error(at + ".SpecialToken.id",
                          "'" + name + "' is not in " + join(where, "special_tokens"));
      const std::string ew = join(join(where, "special_tokens"), name);
      const json& ids = get_array(*entry, "ids", ew);
      for (size_t k = 0; k < ids.size(); ++k) t.push_back(get_id(ids[k], item(ew + ".ids", k)));
    } else {
      throw_field_error(at, "expected {\"SpecialToken\": …} or {\"Sequence\": …}");
    }
  }
  return t;
}

void read_model(const json& root, Pipeline& p) {
  const json& m = get_object(root, "model", "");
  const std::string type = get_string(m, "type", "model");
  if (type != "BPE")
    throw_field_error("model.type", "'" + type + "' is not supported; expected BPE");
  if (const json* d = field(m, "dropout"))
    throw_field_error("model.dropout", "dropout " + d->dump() +
                                           " is not supported (randomised merges); expected null");
  Bpe& bpe = p.bpe;
  bpe.ignore_merges = get_bool(m, "ignore_merges", "model", false);
  bpe.byte_fallback = get_bool(m, "byte_fallback", "model", false);
  bpe.fuse_unk = get_bool(m, "fuse_unk", "model", false);
  bpe.continuing_subword_prefix = get_string(m, "continuing_subword_prefix", "model", false);
  bpe.end_of_word_suffix = get_string(m, "end_of_word_suffix", "model", false);
  const json& vocab = get_object(m, "vocab", "model");
  bpe.vocab.reserve(vocab.size());
  p.model_tokens.reserve(vocab.size());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const json& v = it.value();
    // The field's name is built only for an error: a vocabulary has 10⁵ entries.
    const int id =
        v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= kMaxHfTokenizerId
            ? static_cast<int>(v.get<int64_t>())
            : get_id(v, "model.vocab.\"" + it.key() + "\"");
    const auto [at, fresh] = p.model_tokens.emplace(id, it.key());
    if (!fresh)
      throw_field_error("model.vocab", "id " + std::to_string(id) + " is given to both '" +
                                           at->second + "' and '" + it.key() + "'");
    bpe.vocab[it.key()] = id;
    p.size = std::max(p.size, id + 1);
  }
  const std::string unk = get_string(m, "unk_token", "model", false);
  if (!unk.empty()) {
    const auto it = bpe.vocab.find(unk);
    if (it == bpe.vocab.end())
      throw_field_error("model.unk_token", "'" + unk + "' is not in model.vocab");
    bpe.unk = it->second;
  }
  static const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const std::string name = std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">";
    const auto it = bpe.vocab.find(name);
    bpe.byte_ids[b] = it == bpe.vocab.end() ? -1 : it->second;
  }
  const json& merges = get_array(m, "merges", "model");
  bpe.merges.reserve(merges.size());
  const size_t prefix = bpe.continuing_subword_prefix.size();
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto at = [r] { return item("model.merges", r); };  // for errors only
    const json& e = merges[r];
    // The library takes "a b" strings or [a, b] pairs, one or the other for the whole list.
    if (e.is_string() != merges[0].is_string())
      throw_field_error(at(), std::string("expected ") +
                                  (merges[0].is_string() ? "\"a b\"" : "[\"a\", \"b\"]") +
                                  " as model.merges[0] is, got " + json_type_name(e));
    std::string a, b;
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        throw_field_error(at(), "expected two tokens separated by one space, got \"" + s + "\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      a = e[0].get<std::string>();
      b = e[1].get<std::string>();
    } else {
      throw_field_error(at(), "expected \"a b\" or [\"a\", \"b\"], got " + json_type_name(e));
    }
    std::string merged = a + (b.size() >= prefix ? b.substr(prefix) : std::string());
    int ids[3];
    int k = 0;
    for (const std::string* t : {&a, &b, &merged}) {
      const auto it = bpe.vocab.find(*t);
      if (it == bpe.vocab.end())
        throw_field_error(
            at(), "'" + *t + "' (of the merge '" + a + " " + b + "') is not in model.vocab");
      ids[k++] = it->second;
    }
    // A repeated merge keeps its later rank, as the library's map does.
    bpe.merges[(static_cast<uint64_t>(static_cast<uint32_t>(ids[0])) << 32) |
               static_cast<uint32_t>(ids[1])] = {static_cast<int>(r), ids[2]};
  }
}

void read_added(const json& root, Pipeline& p) {
  const json* list = field(root, "added_tokens");
  if (!list) return;
  if (!list->is_array())
    throw_field_error("added_tokens", "expected an array, got " + json_type_name(*list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = item("added_tokens", i);
    const json& e = (*list)[i];
    if (!e.is_object()) throw_field_error(at, "expected an object, got " + json_type_name(e));
    AddedToken t;
    const json* id = field(e, "id");
    if (!id) throw_field_error(at + ".id", "missing");
    t.id = get_id(*id, at + ".id");
    t.content = get_string(e, "content", at);
    if (t.content.empty()) throw_field_error(at + ".content", "empty");
    t.special = get_bool(e, "special", at, false);
    t.single_word = get_bool(e, "single_word", at, false);
    t.lstrip = get_bool(e, "lstrip", at, false);
    t.rstrip = get_bool(e, "rstrip", at, false);
    t.normalized = get_bool(e, "normalized", at, !t.special);
    const int index = static_cast<int>(p.added.size());
    p.added_by_id[t.id] = index;
    p.added_by_content.emplace(t.content, index);
    p.size = std::max(p.size, t.id + 1);
    p.added.push_back(std::move(t));
  }
}

bool is_word_char(UChar32 c) {
  return u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || (U_GET_GC_MASK(c) & U_GC_N_MASK) != 0;
}

UChar32 last_char(const std::string& s, size_t end) {
  if (end == 0) return -1;
  auto i = static_cast<int32_t>(end);
  UChar32 c;
  U8_PREV(reinterpret_cast<const uint8_t*>(s.data()), 0, i, c);
  return c;
}

UChar32 char_at(const std::string& s, size_t at) {
  if (at >= s.size()) return -1;
  auto i = static_cast<int32_t>(at);
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
  return c;
}

// AddedVocabulary::find_matches and split_with_indices on one piece.
void split_added(const Pipeline& p, const AddedMatcher& m, const Piece& piece,
                 std::vector<Piece>& out) {
  const std::string& s = piece.text;
  size_t start_offset = 0, from = 0;
  auto keep = [&](size_t a, size_t b) {
    if (a < b) out.push_back({s.substr(a, b - a), -1, piece.at_start && a == 0});
  };
  while (from < s.size()) {
    const auto [start0, k] = m.next(s, from);
    if (start0 == std::string::npos) break;
    const auto& [text, index] = m.patterns[static_cast<size_t>(k)];
    const AddedToken& t = p.added[static_cast<size_t>(index)];
    size_t start = start0, stop = start0 + text.size();
    from = stop;
    if (t.single_word) {
      const UChar32 before = last_char(s, start), after = char_at(s, stop);
      if ((before >= 0 && is_word_char(before)) || (after >= 0 && is_word_char(after))) continue;
    }
    if (t.lstrip) {
      size_t left = start;
      while (left > 0) {
        auto i = static_cast<int32_t>(left);
        UChar32 c;
        U8_PREV(reinterpret_cast<const uint8_t*>(s.data()), 0, i, c);
        if (!u_isUWhiteSpace(c)) break;
        left = static_cast<size_t>(i);
      }
      start = std::max(left, start_offset);
    }
    if (t.rstrip)
      while (stop < s.size()) {
        const UChar32 c = char_at(s, stop);
        if (!u_isUWhiteSpace(c)) break;
        stop += static_cast<size_t>(U8_LENGTH(c));
      }
    keep(start_offset, start);
    out.push_back({std::string(), t.id, false});
    start_offset = stop;
  }
  keep(start_offset, s.size());
}

}  // namespace
}  // namespace hf

using hf::Piece;
using hf::Pipeline;

HfTokenizer::HfTokenizer() : p_(std::make_unique<Pipeline>()) {}
HfTokenizer::~HfTokenizer() = default;
HfTokenizer::HfTokenizer(HfTokenizer&&) noexcept = default;
HfTokenizer& HfTokenizer::operator=(HfTokenizer&&) noexcept = default;

bool HfTokenizer::load_folder(const std::string& folder, std::string& error) {
  return load(folder + "/tokenizer.json", error);
}

bool HfTokenizer::load(const std::string& path, std::string& error) {
  std::string text;
  if (!read_regular_file(path, kMaxHfTokenizerFileBytes, text, error)) return false;
  return parse(text, path, error);
}

bool HfTokenizer::parse(const std::string& json_text, const std::string& name, std::string& error) {
  std::string why;
  if (!check_json_depth(json_text, kMaxJsonDepth, why)) {  // io/json_input.h
    error = name + ": not valid JSON: " + why;
    return false;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    error = name + ": not valid JSON: " + e.what();
    return false;
  }
  auto p = std::make_unique<Pipeline>();
  try {
    if (!j.is_object()) throw_field_error("", "expected a JSON object, got " + json_type_name(j));
    if (const nlohmann::json* t = hf::field(j, "truncation"))
      throw_field_error("truncation",
                        "truncation is not supported; expected null, got " + json_type_name(*t));
    hf::read_model(j, *p);
    hf::read_added(j, *p);
    if (const nlohmann::json* n = hf::field(j, "normalizer")) {
      p->normalizer = hf::read_normalizer(*n, "normalizer");
      p->has_normalizer = true;
    }
    if (const nlohmann::json* t = hf::field(j, "pre_tokenizer")) {
      p->pre_tokenizer = hf::read_pre_tokenizer(*t, "pre_tokenizer");
      p->has_pre_tokenizer = true;
    }
    if (const nlohmann::json* t = hf::field(j, "post_processor"))
      p->template_ids = hf::read_post_processor(*t, "post_processor");
    for (int id : p->template_ids) p->size = std::max(p->size, id + 1);
    if (const nlohmann::json* d = hf::field(j, "decoder")) {
      p->decoder = hf::read_decoder(*d, "decoder");
      p->has_decoder = true;
    }
  } catch (const JsonFieldError& e) {
    error = name + ": " + e.message();
    return false;
  }
  // The added tokens' matchers: normalized ones are looked for in the normalized text, spelt as
  // the normalizer spells them.
  for (size_t i = 0; i < p->added.size(); ++i) {
    const hf::AddedToken& t = p->added[i];
    if (t.normalized && p->has_normalizer) {
      std::string s = t.content;
      hf::MatchBudget budget = hf::MatchBudget::for_text(s.size());
      if (!hf::normalize(p->normalizer, s, s.size(), budget, why)) {
        error = name + ": added_tokens[" + std::to_string(i) + "]: " + why;
        return false;
      }
      p->normalized.add(s, static_cast<int>(i));
    } else if (t.normalized) {
      p->normalized.add(t.content, static_cast<int>(i));
    } else {
      p->plain.add(t.content, static_cast<int>(i));
    }
  }
  p->plain.finish();
  p->normalized.finish();
  p_ = std::move(p);
  return true;
}

bool HfTokenizer::encode(const std::string& text, std::vector<int>& ids, std::string& error,
                         bool add_special_tokens) const {
  ids.clear();
  size_t bad = 0;
  if (!valid_utf8(text, &bad)) {
    error = "the text is not UTF-8 (byte " + std::to_string(bad) + ")";
    return false;
  }
  const Pipeline& p = *p_;
  // The regular expressions' work for this text, over every normalizer and pre-tokenizer.
  hf::MatchBudget budget = hf::MatchBudget::for_text(text.size());
  std::vector<Piece> pieces;
  hf::split_added(p, p.plain, Piece{text, -1, true}, pieces);
  std::vector<Piece> next;
  for (Piece& piece : pieces) {
    if (piece.token >= 0) {
      next.push_back(std::move(piece));
      continue;
    }
    if (p.has_normalizer &&
        !hf::normalize(p.normalizer, piece.text, piece.text.size(), budget, error))
      return false;
    hf::split_added(p, p.normalized, piece, next);
  }
  pieces = std::move(next);
  if (p.has_pre_tokenizer && !hf::pre_tokenize(p.pre_tokenizer, pieces, budget, error))
    return false;
  std::vector<int> body;
  for (const Piece& piece : pieces) {
    if (piece.token >= 0)
      body.push_back(piece.token);
    else
      p.bpe.tokenize(piece.text, body);
  }
  if (!add_special_tokens) {
    ids = std::move(body);
    return true;
  }
  for (int id : p.template_ids) {
    if (id >= 0)
      ids.push_back(id);
    else
      ids.insert(ids.end(), body.begin(), body.end());
  }
  return true;
}

std::vector<int> HfTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  std::vector<int> ids;
  std::string error;
  if (!encode(text, ids, error, add_special_tokens)) throw std::runtime_error(error);
  return ids;
}

std::string HfTokenizer::decode(const std::vector<int>& ids, bool skip_special_tokens) const {
  const Pipeline& p = *p_;
  std::vector<std::string> tokens;
  for (int id : ids) {
    const auto a = p.added_by_id.find(id);
    if (a != p.added_by_id.end()) {
      const hf::AddedToken& t = p.added[static_cast<size_t>(a->second)];
      if (!(skip_special_tokens && t.special)) tokens.push_back(t.content);
      continue;
    }
    const auto m = p.model_tokens.find(id);
    if (m != p.model_tokens.end()) tokens.push_back(m->second);
  }
  if (!p.has_decoder) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  hf::decode_chain(p.decoder, tokens);
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

const std::string& HfTokenizer::token(int id) const {
  static const std::string none;
  const auto a = p_->added_by_id.find(id);
  if (a != p_->added_by_id.end()) return p_->added[static_cast<size_t>(a->second)].content;
  const auto m = p_->model_tokens.find(id);
  return m == p_->model_tokens.end() ? none : m->second;
}

std::string HfTokenizer::token_bytes(int id) const {
  if (p_->added_by_id.count(id)) return token(id);
  return hf::model_token_bytes(token(id), p_->bpe.byte_fallback,
                               p_->has_decoder && hf::uses_byte_level(p_->decoder));
}

int HfTokenizer::find(const std::string& token) const {
  const auto a = p_->added_by_content.find(token);
  if (a != p_->added_by_content.end()) return p_->added[static_cast<size_t>(a->second)].id;
  const auto m = p_->bpe.vocab.find(token);
  return m == p_->bpe.vocab.end() ? -1 : m->second;
}

int HfTokenizer::size() const { return p_->size; }

int HfTokenizer::bos_id() const {
  const auto& t = p_->template_ids;
  return !t.empty() && t[0] >= 0 ? t[0] : -1;
}

int HfTokenizer::eos_id() const {
  const auto& t = p_->template_ids;
  const auto seq = std::find(t.begin(), t.end(), -1);
  if (seq != t.end() && seq + 1 != t.end()) return *(seq + 1);
  for (const char* name : {"</s>", "<|endoftext|>", "<|end_of_text|>"}) {
    const auto a = p_->added_by_content.find(name);
    if (a != p_->added_by_content.end() && p_->added[static_cast<size_t>(a->second)].special)
      return p_->added[static_cast<size_t>(a->second)].id;
  }
  return -1;
}

}  // namespace attn::lm
