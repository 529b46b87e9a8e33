// A small Llama-family model folder for the app's tests (made with core/lm, which the engine's
// own tests check against independent references): 2 layers of 6 query heads sharing 2 K/V heads
// of 8, n_embd 24, an MLP of 32, 64 positions, BPE merges learned from a text.
#pragma once

#include <cstdint>
#include <string>

#include "io/gpt2_config.h"

namespace attn::test {

// Writes the model (random weights, σ 0.3, from `seed`; 20 merges learned from `text`; 5 ids
// beyond the tokenizer's) to temp_path(name) and returns the folder. `window` > 0: Mistral's
// sliding window; `tied` false: a separate output head.
std::string write_small_llama(const std::string& name, const std::string& text, LmArch arch,
                              uint64_t seed, int window = 0, bool tied = true);

}  // namespace attn::test
