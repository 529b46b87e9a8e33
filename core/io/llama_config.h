// config.json of today's decoder-only models in Hugging Face's layout — Llama (SmolLM2,
// TinyLlama, Llama 2 and 3), Mistral, Qwen2 — read key by key into the same LmConfig as GPT-2's,
// the architecture as data; and the reader that tells the two layouts apart.
#pragma once

#include <optional>
#include <string>

#include "io/gpt2_config.h"

namespace attn {

// Parses a Llama, Mistral or Qwen2 config.json's text (`path` starts every error, which names
// the field: "<path>: rope_scaling.rope_type: 'yarn' is not supported; …"). Refused by name: an
// activation other than SiLU, heads not divisible by K/V heads, an odd head_dim, an unknown
// rope_type, biases beyond Qwen2's q/k/v.
std::optional<LmConfig> parse_llama_config(const std::string& text, const std::string& path,
                                           std::string& error);

// Reads config.json (at most 1 MB) of any folder this program computes: model_type or
// architectures name GPT-2, Llama, Mistral or Qwen2 (a file naming neither is read as GPT-2's,
// as older folders are written); another architecture is refused by name.
std::optional<LmConfig> read_lm_config(const std::string& path, std::string& error);
std::optional<LmConfig> parse_lm_config(const std::string& text, const std::string& path,
                                        std::string& error);

// config.json text of a Llama-family config with the transformers library's keys; torch_dtype
// names the precision the weights are written in (safetensors' F32, F16 or BF16).
std::string llama_config_json(const LmConfig& c, const std::string& dtype = "BF16");

}  // namespace attn
