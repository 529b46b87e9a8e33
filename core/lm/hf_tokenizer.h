// Hugging Face tokenizer.json (the tokenizers library's format) for today's decoder-only models —
// SmolLM2, Llama 2 and 3, TinyLlama, Qwen2, Mistral: added tokens, normalizer, pre-tokenizer, BPE
// model, post-processor and decoder, each with the library's semantics for the kinds these
// models use (docs/lm.md, "tokenizer.json"). Anything else is refused by name when loading.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace attn::lm {

namespace hf {
struct Pipeline;  // hf_pipeline.h: the parsed components
}

// tokenizer.json is read whole; as vocab.json, at most 64 MiB (docs/robustness.md).
constexpr size_t kMaxHfTokenizerFileBytes = size_t{64} << 20;
// Token ids lie in [0, kMaxHfTokenizerId]: the largest vocabularies today have about 256k tokens.
constexpr int kMaxHfTokenizerId = (1 << 22) - 1;

class HfTokenizer {
 public:
  HfTokenizer();
  ~HfTokenizer();
  HfTokenizer(HfTokenizer&&) noexcept;
  HfTokenizer& operator=(HfTokenizer&&) noexcept;

  // Reads FOLDER/tokenizer.json (a regular file, at most kMaxHfTokenizerFileBytes, JSON nested
  // at most kMaxJsonDepth). Errors name the file and the field:
  // "…/tokenizer.json: model.type: 'WordPiece' is not supported; expected BPE".
  bool load_folder(const std::string& folder, std::string& error);
  bool load(const std::string& path, std::string& error);
  // The same from the file's text; `name` starts every error.
  bool parse(const std::string& json_text, const std::string& name, std::string& error);

  // The ids of `text` as the library's encode(text, add_special_tokens=true) gives them: added
  // tokens typed in the text are those tokens, and the post-processor's tokens (BOS) are added.
  // Fails on text that is not UTF-8, or when a pattern exceeds PCRE2's match limits.
  bool encode(const std::string& text, std::vector<int>& ids, std::string& error,
              bool add_special_tokens = true) const;
  // encode() that throws std::runtime_error on failure.
  std::vector<int> encode(const std::string& text, bool add_special_tokens = true) const;

  // The text of the ids through the decoder, as the library's decode(ids, skip_special_tokens)
  // gives it; ids with no token are skipped, as there.
  std::string decode(const std::vector<int>& ids, bool skip_special_tokens = false) const;

  // The token's string as tokenizer.json spells it ("Ġworld", "▁the", "<0x0A>", "<s>"); "" for
  // an id with no token.
  const std::string& token(int id) const;
  // The bytes one token stands for, for showing it alone: an added token's content, a
  // byte-fallback token's byte, a byte-level token's bytes, a SentencePiece token with ▁ as a
  // space ("▁the" → " the"). Unlike decode(), nothing is stripped.
  std::string token_bytes(int id) const;
  // The id of a token (added tokens included), or -1.
  int find(const std::string& token) const;

  // Largest id + 1 over the model's vocabulary and the added tokens.
  int size() const;
  // The post-processor's single-sequence template's first special token (Llama's <s>, Llama 3's
  // <|begin_of_text|>), or -1 when it adds none (Qwen2).
  int bos_id() const;
  // The end-of-text token where the file shows it: the template's special token after the
  // sequence, else the first special added token among "</s>", "<|endoftext|>",
  // "<|end_of_text|>"; -1 otherwise. A model folder's config.json (eos_token_id) is the
  // authority: prefer it when present.
  int eos_id() const;

 private:
  std::unique_ptr<hf::Pipeline> p_;
};

}  // namespace attn::lm
