// GPT-2-format test models made without a download: a byte-level vocabulary with merges learned
// from a small corpus, random weights for every tensor (biases and layer norms too), written as a
// model folder; plus the independent oracles the lm tests compare with: GPT-2's pre-tokenizer
// pattern run by PCRE2, GPT-2's encoder.py BPE, and a double-precision forward pass in loops.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::test {

// Text the merges are learned from (English with a few accents), also used as test input.
extern const char* const kLmCorpus;

// GPT-2's pre-tokenizer pattern run by PCRE2 in UTF + UCP mode (\s spelled as the White_Space
// property): the pieces of `text`.
std::vector<std::string> pcre2_pretokenize(const std::string& text);

// GPT-2's byte → printable character table, written out from its definition.
std::string test_byte_char(unsigned char b);

struct TestVocab {
  std::vector<std::string> tokens;                          // index = id
  std::vector<std::pair<std::string, std::string>> merges;  // best first
};
// The 256 byte tokens, then `n_merges` merges learned from `corpus` (the most frequent adjacent
// pair of each word's symbols, ties to the first seen, repeatedly), then <|endoftext|>.
TestVocab learn_test_vocab(const std::string& corpus, int n_merges);

// GPT-2's encoder.py: pre-tokenize, map bytes to characters, merge the lowest-ranked pair until
// none applies, look each symbol up. Written independently of core/lm.
std::vector<int> reference_encode(const TestVocab& v, const std::string& text);

struct TestModelSpec {
  int n_layer = 2, n_head = 2, n_embd = 16, n_positions = 48, n_merges = 60;
  int extra_vocab = 3;        // vocab_size beyond the tokenizer's (ids no token uses)
  std::string dtype = "F32";  // F32, F16 or BF16
  std::string prefix;         // "" or "transformer."
  uint64_t seed = 1;
};

// Every tensor of the model by GPT-2 name (no prefix), its shape and float values as stored
// (already rounded to F16/BF16 when the spec says so).
struct TestModel {
  TestModelSpec spec;
  int vocab_size = 0;
  TestVocab vocab;
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> tensors;
  const std::vector<float>& w(const std::string& name) const { return tensors.at(name).second; }
};

TestModel make_test_model(const TestModelSpec& spec);
// Writes config.json, model.safetensors, vocab.json and merges.txt into `folder` (created).
void write_test_model(const TestModel& m, const std::string& folder);

// The forward pass in double precision: attention weights att[l][h][t][t2] flattened as
// ((l·NH + h)·T + t)·T + t2, and the logits of every position, t·V + v.
struct ReferenceForward {
  int T = 0;
  std::vector<double> att, logits;
  std::vector<double> q, k, v;  // (L, T, C) each: the heads' queries, keys and values
};
ReferenceForward reference_forward(const TestModel& m, const std::vector<int>& tokens);

}  // namespace attn::test
