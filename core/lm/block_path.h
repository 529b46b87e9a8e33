// One token's path through one block of a decoder-only transformer, read from a forward pass's
// activations: each stage's operation, its shapes and a few of its real numbers (the app's Block
// view draws it; tests check it against the weights). And GPT-2's block against the Llama
// family's, in the open model's sizes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lm/forward.h"
#include "lm/model.h"

namespace attn::lm {

// The stages in the order a token meets them.
enum class BlockStageId {
  kEmbedding,  // the token's embedding (+ its position's, GPT-2): what block 0 reads
  kInput,      // the residual stream entering block l > 0: block l − 1's output
  kNorm1,      // ln_1 / input_layernorm
  kQkv,        // the head's query, its K/V head's key and value (after RoPE)
  kAttention,  // the head's weights over the keys, and its output
  kOutProj,    // c_proj / o_proj over every head's output side by side
  kResidual1,  // x + attention
  kNorm2,      // ln_2 / post_attention_layernorm
  kMlp,        // c_fc and GELU / gate, up and silu(gate) ⊙ up
  kMlpDown,    // c_proj / down_proj
  kResidual2,  // the block's output
  kFinalNorm,  // ln_f / norm (the last block only)
  kNextToken,  // the output head and softmax (the last block only)
};

// A vector the stage computes for the token.
struct BlockVector {
  std::string label;         // "q", "wte[464]", "silu(gate) ⊙ up"
  int size = 0;              // its length
  std::vector<float> first;  // its first values (BlockPathOptions::values of them)
  double norm = 0;           // its Euclidean length over all `size` values
};

struct BlockStage {
  BlockStageId id = BlockStageId::kEmbedding;
  std::string title;                 // "RMSNorm", "Attention: head 3"
  std::string weights;               // the tensors it reads: "h.3.ln_1", "layers.3.input_layernorm"
  std::string formula;               // "x / √(mean(x²) + ε) ⊙ g"
  std::string shape;                 // "(1, 576) → (1, 576)"
  std::vector<BlockVector> vectors;  // what it computes for the token; its output last
  // kAttention: (key position, weight); kNextToken: (token id, probability); largest first.
  std::vector<std::pair<int, double>> top;
  // Numbers of the operation itself: a norm's mean and standard deviation (LayerNorm) or root
  // mean square (RMSNorm); the keys the query sees.
  std::vector<std::pair<std::string, double>> stats;
  std::string note;  // one more sentence when something differs (the MLP skipped, a window)
};

struct BlockPath {
  int layer = 0, head = 0, kv_head = 0, position = 0, token = 0;
  bool last_block = false;
  std::vector<BlockStage> stages;
  // The stage with this id, or null (kInput before block 1, the final ones before the last).
  const BlockStage* find(BlockStageId id) const;
};

struct BlockPathOptions {
  int values = 4;      // the first values kept of each vector
  int top_keys = 5;    // the attention stage's strongest keys
  int top_tokens = 5;  // the most likely next tokens (the last block)
  double temperature = 1.0;
};

// The path of token `position` of sequence 0 through block `layer`, attention head `head`, from
// the activations of a forward pass of `m` (every position's activations kept, as gpt_forward
// keeps them). Layer, head and position must be in range (asserted).
BlockPath block_path(const Model& m, const Activations& a, int layer, int head, int position,
                     const BlockPathOptions& options = {});

// One way GPT-2's block and the Llama family's differ, each side in words with `c`'s sizes.
struct BlockDifference {
  std::string aspect;  // "Norm", "Positions", …
  std::string gpt2, llama;
};
// Norm, positions, attention heads, MLP, output head and biases, in the open model's sizes
// (C, NH, NKV, hs, F; the tie and the biases of `c` on its own side).
std::vector<BlockDifference> block_differences(const Config& c);

// "(1, 576)"
std::string row_shape(int n);

}  // namespace attn::lm
