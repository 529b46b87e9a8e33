// GPT-2's byte-level BPE tokenizer: the pre-tokenizer pattern (with Unicode letter, number and
// space classes from ICU), the byte-to-unicode table, and merges applied by rank, exactly as
// GPT-2's encoder does; vocab.json and merges.txt read with every entry checked, and written.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn::lm {

// False when `text` is not well-formed UTF-8; `bad_offset` is then the first bad byte.
bool valid_utf8(const std::string& text, size_t* bad_offset = nullptr);
// The error for a non-empty text that tokenizes to nothing, naming the text (its first 40
// characters): "\"TEXT\" gives no tokens: …".
std::string no_tokens_error(const std::string& text);

// Splits well-formed UTF-8 text as GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does, with \s the Unicode White_Space property (as Hugging Face tokenizers and tiktoken).
// The pieces concatenate back to the text.
std::vector<std::string> pretokenize(const std::string& text);
// The same pieces as byte ranges [begin, end) of `text`, one call each, left to right, with no
// copy of the text or of its pieces (a training corpus is hundreds of megabytes).
void for_each_pretoken(const std::string& text,
                       const std::function<void(size_t begin, size_t end)>& piece);

// GPT-2's reversible map from bytes to printable characters (UTF-8 of one code point each):
// printable Latin-1 bytes stand for themselves, the others for U+0100 onwards.
const std::array<std::string, 256>& byte_to_unicode();

using Merge = std::pair<std::string, std::string>;

class HfTokenizer;

// GPT-2's tokenizer, or a Hugging Face tokenizer.json behind the same methods (load_hf): the
// model code and the commands ask one object whichever the folder holds.
class Tokenizer {
 public:
  // Reads vocab.json (token → id) and merges.txt ("#version" line, then "a b" per line, best
  // first). Ids must lie in [0, vocab_size) and be unique, every byte's token must exist, and
  // both parts and the result of every merge must be tokens. Errors name the file and entry.
  bool load(const std::string& vocab_path, const std::string& merges_path, int vocab_size,
            std::string& error);
  bool parse(const std::string& vocab_json, const std::string& merges_txt,
             const std::string& vocab_name, const std::string& merges_name, int vocab_size,
             std::string& error);
  // A tokenizer from tokens (index = id) and merges (best first); the same checks as load().
  bool build(std::vector<std::string> tokens, std::vector<Merge> merges, std::string& error);

  // Reads FOLDER/tokenizer.json (lm/hf_tokenizer.h); every method below then answers from it.
  bool load_hf(const std::string& folder, std::string& error);
  // The tokenizer.json in use, or null for GPT-2's vocab.json and merges.txt.
  const HfTokenizer* hf() const { return hf_.get(); }
  // tokenizer.json's text as read (written back by save_model), or "".
  const std::string& hf_json() const { return hf_json_; }

  // The ids of well-formed UTF-8 text (asserted: check with valid_utf8 first). A tokenizer.json
  // adds its post-processor's tokens (BOS) and can fail (a pattern past PCRE2's match limits):
  // the first form then returns false with the error, the second throws std::runtime_error.
  // The first form also refuses a non-empty text that gives no ids at all (no_tokens_error): a
  // model pass needs at least one token. The second returns whatever the tokenizer gives.
  bool encode(const std::string& text, std::vector<int>& ids, std::string& error) const;
  std::vector<int> encode(const std::string& text) const;
  // The bytes the ids stand for (not always whole UTF-8 characters on their own).
  std::string decode(const std::vector<int>& ids) const;
  std::string token_bytes(int id) const;
  // The token as vocab.json spells it ("Ġworld"); "" for an id with no entry.
  const std::string& token(int id) const;
  // The token's text for people: its bytes as UTF-8, newline as ↵, tab as ⇥, other control
  // characters and bytes that are not whole UTF-8 characters as <0xNN>.
  std::string display(int id) const;

  int size() const;                          // largest id + 1
  int find(const std::string& token) const;  // -1 when absent
  const std::vector<Merge>& merges() const { return merges_; }

  // The files' text, readable by load() and by any GPT-2 loader.
  std::string vocab_json() const;
  std::string merges_txt() const;
  // tokenizer.json's text: the file read (load_hf), or GPT-2's byte-level BPE written in the
  // Hugging Face format (no BOS, <|endoftext|> an added special token).
  std::string tokenizer_json() const;

 private:
  std::vector<std::string> bpe(const std::string& piece) const;

  std::unordered_map<std::string, int> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<Merge> merges_;
  std::unordered_map<std::string, int> ranks_;  // "a b" → rank (lower merges first)
  std::shared_ptr<const HfTokenizer> hf_;
  std::string hf_json_;
};

}  // namespace attn::lm

namespace attn::lm {

// A byte-level tokenizer with up to `n_merges` merges learned from `corpus` as GPT-2's were:
// pre-tokenize, then repeatedly merge the most frequent adjacent pair of symbols within words
// (ties to the pair seen first), stopping early when no pair occurs twice. Ids: the 256 byte
// tokens in GPT-2's order, the merges in order, then <|endoftext|>. `corpus` must be UTF-8.
Tokenizer learn_bpe(const std::string& corpus, int n_merges);

}  // namespace attn::lm
