// The parts of a tokenizer.json pipeline once parsed (hf_tokenizer.cpp reads them): normalizers,
// pre-tokenizers, the BPE model, the post-processor and decoders, each with the tokenizers
// library's semantics. Internal to core/lm; HfTokenizer (hf_tokenizer.h) is the interface.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lm/hf_regex.h"

namespace attn::lm::hf {

// A piece of the text on its way to ids: split off as an added token (token ≥ 0), or text still
// to tokenize. `at_start`: the piece begins at the start of the original text (Metaspace's
// prepend_scheme "first" looks at it).
struct Piece {
  std::string text;
  int token = -1;
  bool at_start = false;
};

// A Split or Replace pattern: {"String": s} or {"Regex": r}.
struct Pattern {
  Regex re;
};

struct Normalizer {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kPrepend, kReplace, kSequence, kByteLevel };
  Kind kind = Kind::kSequence;
  std::string where;  // its place in tokenizer.json ("normalizer.normalizers[2]"), for errors
  std::string text;   // Prepend's prepend; Replace's content
  Pattern pattern;    // Replace's pattern
  std::vector<Normalizer> children;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

struct PreTokenizer {
  enum class Kind { kSplit, kByteLevel, kDigits, kMetaspace, kSequence };
  Kind kind = Kind::kSequence;
  std::string where;  // its place in tokenizer.json ("pre_tokenizer.pretokenizers[0]")
  Pattern pattern;    // Split's; ByteLevel's GPT-2 pattern when use_regex
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;  // ByteLevel
  bool use_regex = true;          // ByteLevel
  bool individual_digits = false;
  std::string replacement;  // Metaspace's (one character)
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  bool split = true;  // Metaspace
  std::vector<PreTokenizer> children;
};

struct Bpe {
  Bpe() { byte_ids.fill(-1); }
  std::unordered_map<std::string, int> vocab;
  // (left id << 32 | right id) → (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int, int>> merges;
  bool ignore_merges = false, byte_fallback = false, fuse_unk = false;
  int unk = -1;  // the unk_token's id, or -1 when there is none
  std::string continuing_subword_prefix, end_of_word_suffix;
  std::array<int, 256> byte_ids{};  // byte_fallback's <0xNN> tokens, or -1

  // Appends the ids of one pre-tokenized word.
  void tokenize(const std::string& word, std::vector<int>& ids) const;
};

struct Decoder {
  enum class Kind { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace, kSequence };
  Kind kind = Kind::kSequence;
  Pattern pattern;      // Replace's
  std::string content;  // Replace's content; Strip's content (one character)
  int start = 0, stop = 0;
  std::string replacement;  // Metaspace's
  bool prepend = true;      // Metaspace: prepend_scheme is not "never"
  std::vector<Decoder> children;
};

// The tokenizers library's NormalizedString operations on plain text; false (with `error`) only
// when a regular expression exceeds its limits.
// A normalizer's output may be at most kNormalizeGrowth times the text it was given at first
// (`original_bytes`, not its own input, so a chain cannot compound) plus kNormalizeSlack bytes:
// NFKC's largest expansion is 11 times and Replace "▁" for " " 3 times, while eight chained
// Replace of an empty pattern would grow 10 bytes to gigabytes (docs/robustness.md).
inline constexpr size_t kNormalizeGrowth = 16;
inline constexpr size_t kNormalizeSlack = 1024;
// Errors name the normalizer or pre-tokenizer's place in tokenizer.json. `budget` bounds their
// regular expressions' work on this text (hf_regex.h).
bool normalize(const Normalizer& n, std::string& text, size_t original_bytes, MatchBudget& budget,
               std::string& error);
bool pre_tokenize(const PreTokenizer& p, std::vector<Piece>& pieces, MatchBudget& budget,
                  std::string& error);
// Decoders work on the tokens' strings, as decode_chain does.
void decode_chain(const Decoder& d, std::vector<std::string>& tokens);

// The byte of a "<0xNN>" token, or -1; GPT-2's printable character → byte table.
int fallback_byte(const std::string& t);
const std::unordered_map<std::string, unsigned char>& unicode_to_byte();
// True when a ByteLevel decoder is in the chain (the tokens spell bytes as GPT-2's characters).
bool uses_byte_level(const Decoder& d);
// The bytes one model token stands for: its <0xNN> byte (byte_fallback), its characters mapped
// back to bytes (byte_level), or its text with ▁ as a space (SentencePiece's spelling).
std::string model_token_bytes(const std::string& t, bool byte_fallback, bool byte_level);

// GPT-2's pattern, as the tokenizers library's ByteLevel pre-tokenizer writes it.
extern const char* const kGpt2Pattern;

// NFC, NFD, NFKC or NFKD of well-formed UTF-8 text, by ICU.
std::string unicode_normalize(const std::string& text, Normalizer::Kind kind);

}  // namespace attn::lm::hf
