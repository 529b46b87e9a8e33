// Llama/Mistral/Qwen2 test folders in the Hugging Face layout made without a download (config.json,
// model.safetensors or shards with an index, tokenizer.json), and the independent oracles the
// tests compare with: the tokenizers library's own ids for the tokenizer.json files (generated
// once by scripts/hf-tokenizer-reference.js, tests/hf_tokenizer_reference.inc) and a
// double-precision forward pass in plain loops written from docs' formulas (cli.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::test {

// One tokenizer.json of tests/hf_tokenizer_reference.inc ("qwen2": ByteLevel BPE, no BOS, merges
// as "a b"; "llama2": SentencePiece-style with byte fallback and <s>; "llama3": Split + ByteLevel,
// ignore_merges, <|begin_of_text|>, merges as pairs; "smollm2": Digits + ByteLevel, no BOS) and
// the ids the tokenizers library gave for its texts.
struct HfTestTokenizer {
  std::string name, json;
  std::vector<std::pair<std::string, std::vector<int>>> cases;  // text, library ids
  std::map<int, std::string> tokens;                            // id → tokenizer.json spelling
  int size = 0;                                                 // largest id + 1
  int id_of(const std::string& token) const;                    // -1 when absent
  // The library's ids for `text` (a case of the file); throws when the file has no such case.
  const std::vector<int>& ids_of(const std::string& text) const;
};
HfTestTokenizer hf_test_tokenizer(const std::string& name);

struct LlamaSpec {
  std::string arch = "llama";        // llama, mistral or qwen2
  std::string tokenizer = "llama2";  // a name for hf_test_tokenizer
  int n_layer = 2, hidden = 16, intermediate = 24, n_head = 4, n_kv_head = 2;
  int head_dim = 0;     // 0: hidden / n_head, and config.json leaves it out
  int extra_vocab = 0;  // embedding rows beyond the tokenizer's ids (Qwen pads)
  int max_positions = 64;
  double rms_eps = 1e-5, rope_theta = 10000;
  std::string rope_scaling = "none";  // none, llama3 or linear
  double rope_factor = 8, low_freq_factor = 1, high_freq_factor = 4;
  int rope_original_max = 32;
  int sliding_window = 0;           // 0 writes null
  bool use_sliding_window = false;  // Qwen2's switch (written for qwen2 only)
  bool tie = false;
  bool qkv_bias = false;      // Qwen2's q/k/v biases
  std::string dtype = "F32";  // F32, F16 or BF16
  bool sharded = false;       // two shards and model.safetensors.index.json
  int bos = -1, eos = -1;     // config's bos/eos_token_id; -1: null
  bool force_eos = false;     // weights that make `eos` the argmax at every position
  uint64_t seed = 1;
};

struct LlamaModel {
  LlamaSpec spec;
  HfTestTokenizer tok;
  int vocab_size = 0, head_dim = 0;
  // Every tensor by its transformers name, shape and float values as stored (rounded to F16/BF16
  // already, so the reference computes with exactly those).
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> tensors;
  const std::vector<float>& w(const std::string& name) const { return tensors.at(name).second; }
  bool has(const std::string& name) const { return tensors.count(name) > 0; }
};

LlamaModel make_llama_model(const LlamaSpec& spec);
// config.json as written (tests edit it to damage a folder).
std::string llama_config_json(const LlamaModel& m);
// Writes config.json, the weights (model.safetensors, or model-0000{1,2}-of-00002.safetensors and
// model.safetensors.index.json) and tokenizer.json into `folder` (created).
void write_llama_model(const LlamaModel& m, const std::string& folder);
// The bytes of a safetensors file of `names` (values converted to `dtype`), written here
// independently of core/io: 8-byte little-endian header length, JSON header, data.
std::string llama_safetensors_bytes(const LlamaModel& m, const std::vector<std::string>& names,
                                    const std::string& dtype);

// inv_freq[i] of RoPE for i < head_dim/2 with the spec's rope_scaling.
std::vector<double> llama_inv_freq(const LlamaSpec& spec, int head_dim);

// The forward pass in double: attention weights att[((l·NH + h)·T + t)·T + u] and the logits of
// every position, t·V + v.
struct LlamaReference {
  int T = 0;
  std::vector<double> att, logits;
};
LlamaReference llama_reference_forward(const LlamaModel& m, const std::vector<int>& ids);

// Greedy continuation by repeated full forward passes: at most n ids, stopping after the spec's
// eos (included). `tied_at`: the first step whose two best logits are within `tie` of each other
// (where a float32 implementation may rightly choose the other one), or -1.
std::vector<int> llama_reference_greedy(const LlamaModel& m, std::vector<int> ids, int n,
                                        double tie, int& tied_at);

}  // namespace attn::test
