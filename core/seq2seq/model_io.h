// Trained seq2seq models as files: a versioned binary format (magic, version, configuration,
// alphabets, named float32 tensors, checksum), validated on load and written atomically.
#pragma once

#include <string>

#include "seq2seq/model.h"
#include "seq2seq/vocab.h"

namespace attn::s2s {

// A model with everything needed to use it: configuration, alphabets and parameters, plus a
// free-text note (how it was trained, its epoch and held-out accuracy).
struct Model {
  ModelConfig config;
  Vocab in_vocab, out_vocab;
  Params<float> params;
  std::string info;
};

constexpr uint32_t kModelFormatVersion = 1;

// A freshly initialised model for the date task with the default alphabets.
Model new_date_model(Score score, int hidden, int embed, int window, uint64_t seed);

std::string serialize_model(const Model& m);
// Parses bytes read from `source` (a path, used in messages). Rejects foreign, truncated,
// corrupted (checksum), inconsistent or non-finite data with an error naming the problem.
bool parse_model(const std::string& bytes, const std::string& source, Model& out,
                 std::string& error);
bool save_model(const Model& m, const std::string& path, std::string& error);
// Rewrites the checksum at the end of model bytes to match the rest, for tools and tests that
// edit a file on purpose (a fuzzer mutating what is behind the checksum).
void reseal_model_bytes(std::string& bytes);
bool load_model(const std::string& path, Model& out, std::string& error);

}  // namespace attn::s2s
