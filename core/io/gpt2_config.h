// config.json of a GPT-2-format model folder: the sizes of the network, read with every value
// checked (kind, range, n_embd divisible by n_head), and written back in GPT-2's own keys.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn {

// The architecture of a decoder-only model folder: GPT-2's own, or today's Llama family
// (io/llama_config.h), which differ only in data: the norm, the positions, the MLP, the K/V
// heads, the window, the biases.
enum class LmArch { kGpt2, kLlama, kMistral, kQwen2 };

// How RoPE's frequencies are scaled (rope_scaling in config.json).
struct RopeScaling {
  enum Type { kNone, kLlama3, kLinear } type = kNone;
  double factor = 1, low_freq_factor = 1, high_freq_factor = 4;
  int original_max_position_embeddings = 8192;
};

struct LmConfig {
  int n_layer = 0;      // L (num_hidden_layers)
  int n_head = 0;       // NH, query heads (num_attention_heads)
  int n_embd = 0;       // C (hidden_size)
  int n_positions = 0;  // maxT (GPT-2's n_ctx, max_position_embeddings)
  int vocab_size = 0;   // V, rows of the embedding (may exceed the tokenizer's tokens)
  int n_inner = 0;      // MLP width; GPT-2's default (0 here, null in the file) is 4·C
  double layer_norm_epsilon = 1e-5;  // rms_norm_eps for the Llama family
  // ---- the Llama family (GPT-2: the defaults) ----
  LmArch arch = LmArch::kGpt2;
  int n_kv_head = 0;  // K/V heads (num_key_value_heads); 0 means n_head
  int head_dim = 0;   // per head; 0 means n_embd / n_head
  double rope_theta = 10000;
  RopeScaling rope_scaling;
  int sliding_window = 0;  // W: query i sees keys i − W < j ≤ i; 0 means no window
  int window_from_layer =
      0;                  // the layers from which the window applies (Qwen2's max_window_layers)
  bool qkv_bias = false;  // Qwen2's q/k/v biases
  bool tied = true;       // the output head is the embedding (tie_word_embeddings)
  int bos_token_id = -1, eos_token_id = -1;
  std::vector<int> eos_token_ids;  // every end-of-text id config.json lists

  bool llama_family() const { return arch != LmArch::kGpt2; }
  // The window of layer l (0: none).
  int window(int l) const { return l >= window_from_layer ? sliding_window : 0; }
  int head_size() const { return head_dim > 0 ? head_dim : n_head > 0 ? n_embd / n_head : 0; }
  int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  // Query heads per K/V head; query head h reads K/V head h / group().
  int group() const { return n_head / kv_heads(); }
  int q_dim() const { return n_head * head_size(); }
  int kv_dim() const { return kv_heads() * head_size(); }
  // Q | K | V side by side, as one row of the forward pass's qkv.
  int qkv_width() const { return q_dim() + 2 * kv_dim(); }
  int mlp_size() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
};
using Gpt2Config = LmConfig;

// "GPT-2", "Llama", "Mistral", "Qwen2".
const char* arch_name(LmArch a);

// Parses config.json's text; `path` starts every error ("<path>: n_head: …"). Missing
// layer_norm_epsilon means 1e-5; n_positions may be given as n_ctx. A GPT-2 variant this program
// does not compute (another activation_function, unscaled attention) is refused by name.
std::optional<Gpt2Config> parse_gpt2_config(const std::string& text, const std::string& path,
                                            std::string& error);

// config.json text with GPT-2's keys (model_type "gpt2", n_ctx equal to n_positions).
std::string gpt2_config_json(const Gpt2Config& c);

}  // namespace attn
