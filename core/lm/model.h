// A GPT-2-format model: its config, its parameters in one flat float32 buffer (as llm.c's
// ParameterTensors, so an optimiser can walk every weight at once), and its tokenizer; read from
// and written to a model folder (config.json, model.safetensors, vocab.json, merges.txt).
//
// Shape letters as in llm.c: L layers, C channels (n_embd), NH heads, hs = C/NH, V vocabulary,
// maxT positions, F the MLP width (4·C in GPT-2). Weights keep GPT-2's Conv1D layout, (in, out):
// a layer computes y = x·W + b.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "io/gpt2_config.h"
#include "lm/tokenizer.h"

namespace attn::lm {

using Config = Gpt2Config;

// The parameter tensors, in the order of the flat buffer.
enum Param {
  kWte,       // (V, C)       token embeddings, also the output layer (tied)
  kWpe,       // (maxT, C)    position embeddings
  kLn1W,      // (L, C)
  kLn1B,      // (L, C)
  kQkvW,      // (L, C, 3C)   c_attn: Q | K | V
  kQkvB,      // (L, 3C)
  kAttProjW,  // (L, C, C)    attn.c_proj
  kAttProjB,  // (L, C)
  kLn2W,      // (L, C)
  kLn2B,      // (L, C)
  kFcW,       // (L, C, F)    mlp.c_fc
  kFcB,       // (L, F)
  kFcProjW,   // (L, F, C)    mlp.c_proj
  kFcProjB,   // (L, C)
  kLnfW,      // (C)
  kLnfB,      // (C)
  kNumParams
};

// GPT-2's name of a parameter tensor of layer l (no "transformer." prefix), e.g.
// "h.3.attn.c_attn.weight"; the shape of one layer's slice in the file.
std::string param_name(Param p, int layer);
std::vector<int64_t> param_file_shape(Param p, const Config& c);
bool param_is_per_layer(Param p);

using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<RowMatrixF>;
using ConstMatMap = Eigen::Map<const RowMatrixF>;

struct Parameters {
  Config config;
  std::vector<float> memory;              // every tensor, one after the other
  std::array<size_t, kNumParams> offset;  // where each tensor starts in memory
  std::array<size_t, kNumParams> count;   // its number of floats (all layers)

  // Sizes the buffer for `c` (zeros).
  void allocate(const Config& c);
  size_t total() const { return memory.size(); }
  float* ptr(Param p) { return memory.data() + offset[p]; }
  const float* ptr(Param p) const { return memory.data() + offset[p]; }
  // Layer l's slice of a per-layer tensor.
  float* ptr(Param p, int l) {
    return ptr(p) + static_cast<size_t>(l) * (count[p] / config.n_layer);
  }
  const float* ptr(Param p, int l) const {
    return ptr(p) + static_cast<size_t>(l) * (count[p] / config.n_layer);
  }
};

struct Model {
  Config config;
  Parameters params;
  Tokenizer tokenizer;
  std::string folder;         // where it was read from ("" when built in memory)
  std::string name;           // the folder's last component, for titles
  std::string dtype = "F32";  // the stored precision of the weights (F32, F16, BF16)
};

// Reads a model folder. Every problem (a missing file, a header whose offsets run past the end, a
// tensor whose shape disagrees with config.json, …) is an error naming the file (and tensor).
bool load_model(const std::string& folder, Model& out, std::string& error);

// Writes config.json, model.safetensors (GPT-2's names, `prefix` before each, in `dtype`:
// F32, F16 or BF16), vocab.json and merges.txt into `folder` (created when missing); each file is
// written atomically.
bool save_model(const Model& m, const std::string& folder, std::string& error,
                const std::string& dtype = "F32", const std::string& prefix = "");

// A model of the given sizes with GPT-2's initialisation (normal weights with σ = `std`, 0.02 in
// GPT-2, the residual projections scaled by 1/√(2L), layer norms at 1 and 0), reproducible from
// `seed`.
void init_random(Model& m, const Config& c, uint64_t seed, float std = 0.02f);

// Resolves --model: an existing folder as given, else the short name of a shipped model
// (<data dir>/models/lm/NAME holding config.json: io/shipped.h's kLmModels). "" with an error,
// starting "--model: " and listing the shipped names, when neither exists.
std::string resolve_model_folder(const std::string& name_or_folder, std::string& error);

// The short names of the shipped models, sorted (io/shipped.h's list_shipped(kLmModels)).
std::vector<std::string> shipped_models();

}  // namespace attn::lm
