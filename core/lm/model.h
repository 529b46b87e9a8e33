// A decoder-only transformer — GPT-2's architecture or today's (Llama, Mistral, Qwen2: the
// architecture is data in its Config) — its parameters in one flat float32 buffer (as llm.c's
// ParameterTensors, so an optimiser can walk every weight at once), and its tokenizer; read from
// and written to a model folder (config.json, model.safetensors, and GPT-2's vocab.json and
// merges.txt or Hugging Face's tokenizer.json).
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
#include "lm/weights.h"

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

// Where each tensor lies in the flat buffer of a model of config c. A Llama-family config gets
// the training layout of lm/llama_train.h in the same slots, each matrix (in, out) as GPT-2's:
// kWte the embedding (tied to the output), kLn1W/kLn2W/kLnfW the RMSNorm weights, kQkvW the
// fused q|k|v_proj (C, NH·hs + 2·NKV·hs) with kQkvB their biases (Qwen2), kAttProjW o_proj
// (NH·hs, C), kFcW the fused gate|up_proj (C, 2F), kFcProjW down_proj (F, C); kWpe and the other
// biases hold nothing.
struct ParamLayout {
  std::array<size_t, kNumParams> offset{};  // where each tensor starts
  std::array<size_t, kNumParams> count{};   // its number of values (all layers)
  size_t total = 0;
};
ParamLayout param_layout(const Config& c);

// Every parameter tensor in one buffer of scalars S: float for inference and training, double
// for the gradient checks (the same code, instantiated twice). A gradient has the same layout.
template <typename S>
struct ParameterBuffer {
  Config config;
  AlignedVector<S> memory;                // every tensor, one after the other
  std::array<size_t, kNumParams> offset;  // where each tensor starts in memory
  std::array<size_t, kNumParams> count;   // its number of values (all layers)

  // Sizes the buffer for `c` (zeros).
  void allocate(const Config& c) {
    const ParamLayout l = param_layout(c);
    config = c;
    offset = l.offset;
    count = l.count;
    memory.assign(l.total, S(0));
  }
  size_t total() const { return memory.size(); }
  S* ptr(Param p) { return memory.data() + offset[p]; }
  const S* ptr(Param p) const { return memory.data() + offset[p]; }
  // Layer l's slice of a per-layer tensor.
  S* ptr(Param p, int l) { return ptr(p) + static_cast<size_t>(l) * (count[p] / config.n_layer); }
  const S* ptr(Param p, int l) const {
    return ptr(p) + static_cast<size_t>(l) * (count[p] / config.n_layer);
  }
};
using Parameters = ParameterBuffer<float>;

// True for the tensors of the MLP blocks (c_fc and c_proj of mlp, weights and biases).
inline bool param_is_mlp(Param p) {
  return p == kFcW || p == kFcB || p == kFcProjW || p == kFcProjB;
}
// True when every MLP weight and bias is zero: an attention-only model written in GPT-2's form
// (its MLP adds exactly 0 to the residual stream, so the forward pass may skip it).
bool mlp_is_zero(const Parameters& p);

// One layer of a Llama-family model (the transformers library's names).
struct LlamaLayer {
  AlignedVector<float> attn_norm, mlp_norm;     // input_layernorm, post_attention_layernorm (C)
  Weight q, k, v, o;                            // self_attn.{q,k,v,o}_proj (out, in)
  AlignedVector<float> q_bias, k_bias, v_bias;  // Qwen2's; empty otherwise
  Weight gate, up, down;                        // mlp.{gate,up,down}_proj (out, in)
};

// The weights of a Llama, Mistral or Qwen2 model as read from its folder.
struct LlamaWeights {
  Weight embed;               // model.embed_tokens (V, C)
  Weight head;                // lm_head (V, C); no rows when tied to the embedding
  AlignedVector<float> norm;  // model.norm (C)
  std::vector<LlamaLayer> layers;
  const Weight& output() const { return head.rows ? head : embed; }
  // Every weight's values, and the bytes they take in memory.
  double parameters() const;
  double bytes() const;
};

struct Model {
  Config config;
  Parameters params;   // GPT-2's weights (config.arch == kGpt2)
  LlamaWeights llama;  // the Llama family's (config.llama_family())
  Tokenizer tokenizer;
  std::string folder;         // where it was read from ("" when built in memory)
  std::string name;           // the folder's last component, for titles
  std::string dtype = "F32";  // the stored precision of the weights (F32, F16, BF16)
  // False for an attention-only model (every MLP weight zero, found when loading): the forward
  // pass skips the MLP blocks, which would add exactly zero.
  bool mlp = true;
  // The number of weights, whichever the architecture.
  double parameter_count() const;
};

// Reads a model folder, GPT-2's or a Llama family's (config.json says which). Every problem (a
// missing file, a header whose offsets run past the end, a tensor whose shape disagrees with
// config.json, …) is an error naming the file (and tensor).
bool load_model(const std::string& folder, Model& out, std::string& error);

// Writes config.json, model.safetensors (GPT-2's names, `prefix` before each, in `dtype`:
// F32, F16 or BF16), vocab.json and merges.txt into `folder` (created when missing); each file is
// written atomically.
bool save_model(const Model& m, const std::string& folder, std::string& error,
                const std::string& dtype = "F32", const std::string& prefix = "");

// The Llama family's folders (lm/llama_model.cpp): load_model's part after config.json; and a
// writer of config.json, model.safetensors and tokenizer.json with the transformers library's
// names, the weights converted to `dtype`.
bool load_llama_weights(const std::string& folder, Model& m, std::string& error);
bool save_llama_model(const Model& m, const std::string& folder, std::string& error,
                      const std::string& dtype = "BF16");
// Random Llama-family weights (normal with σ = `std`, the norms at 1), reproducible from `seed`.
void init_random_llama(Model& m, const Config& c, uint64_t seed, float std = 0.02f);

// A model of the given sizes with GPT-2's initialisation (normal weights with σ = `std`, 0.02 in
// GPT-2, the residual projections scaled by 1/√(2L), layer norms at 1 and 0), reproducible from
// `seed`.
void init_random(Model& m, const Config& c, uint64_t seed, float std = 0.02f);

// Resolves --model: an existing folder as given, else the short name of a shipped model
// (<data dir>/models/lm/NAME holding config.json: io/shipped.h's kLmModels). "" with an error,
// starting "--model: " and listing the shipped names, when neither exists.
std::string resolve_model_folder(const std::string& name_or_folder, std::string& error);

// The last part of a folder's path, trailing slashes ignored: the name load_model gives a model
// (a shipped model's short name).
std::string folder_name(std::string folder);

// The short names of the shipped models, sorted (io/shipped.h's list_shipped(kLmModels)).
std::vector<std::string> shipped_models();

}  // namespace attn::lm
