// The fuzz targets: one function per parser a user can feed, each taking arbitrary bytes. The
// same functions run under libFuzzer (fuzz_main.cpp, built with -DATTN_FUZZ=ON) and, on every
// file of tests/fuzz/corpus/NAME and tests/fuzz/regressions/NAME, in the normal test suite
// (tests/test_fuzz_regressions.cpp). See tests/fuzz/README.md to add one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace attn::fuzz {

// A target's invariant failed: says which, and aborts (libFuzzer keeps the input).
[[noreturn]] inline void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// The input as bytes (libFuzzer may pass a null pointer with size 0).
inline std::string bytes_of(const uint8_t* data, size_t size) {
  return size ? std::string(reinterpret_cast<const char*>(data), size) : std::string();
}

// Returns 0 (libFuzzer's convention); a broken invariant aborts.
using TargetFn = int (*)(const uint8_t* data, size_t size);

struct Target {
  const char* name;  // the folder names under tests/fuzz/corpus and tests/fuzz/regressions
  TargetFn run;
};

// Every target, in the order .ci/run fuzzes them.
const std::vector<Target>& targets();

int scenario_json(const uint8_t* data, size_t size);
int npy(const uint8_t* data, size_t size);
int seq2seq_model(const uint8_t* data, size_t size);
int safetensors(const uint8_t* data, size_t size);
int gpt2_config(const uint8_t* data, size_t size);
// vocab.json, a NUL byte, merges.txt.
int gpt2_tokenizer(const uint8_t* data, size_t size);
// A whole model folder: four parts (config.json, model.safetensors, vocab.json, merges.txt),
// each a 4-byte little-endian length and its bytes (tests/fuzz/README.md).
int gpt2_folder(const uint8_t* data, size_t size);
// A Hugging Face tokenizer.json, optionally followed by a NUL byte and a text to encode.
int hf_tokenizer(const uint8_t* data, size_t size);
// A lesson file (parse_lesson): an accepted lesson keeps every documented limit.
int lesson(const uint8_t* data, size_t size);
// The app's imgui.ini: sanitized, then read by ImGui itself (targets_app.cpp).
int imgui_ini(const uint8_t* data, size_t size);
// A font file: checked as the app checks one (without the trial bake); stb_truetype then reads
// every table, metric and outline of an accepted font, which must all lie inside it.
int font(const uint8_t* data, size_t size);

// Any config.json (GPT-2's or the Llama family's keys): a parsed Llama-family config reads back
// the same from what llama_config_json writes (targets_llama.cpp).
int lm_config(const uint8_t* data, size_t size);
// A Llama-family folder with sharded weights: four parts (config.json,
// model.safetensors.index.json, model-00001-of-00001.safetensors, tokenizer.json) as
// gpt2_folder's; a small accepted model then runs, whole and with the KV cache.
int llama_folder(const uint8_t* data, size_t size);
// lm train --resume's checkpoint.bin (targets_train.cpp).
int train_checkpoint(const uint8_t* data, size_t size);
// training.json's history as lm curve reads it (targets_train.cpp).
int training_history(const uint8_t* data, size_t size);

}  // namespace attn::fuzz
