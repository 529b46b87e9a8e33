// config.json of a GPT-2-format model folder: the sizes of the network, read with every value
// checked (kind, range, n_embd divisible by n_head), and written back in GPT-2's own keys.
#pragma once

#include <optional>
#include <string>

namespace attn {

struct Gpt2Config {
  int n_layer = 0;      // L
  int n_head = 0;       // NH
  int n_embd = 0;       // C
  int n_positions = 0;  // maxT (GPT-2 also calls it n_ctx)
  int vocab_size = 0;   // V
  int n_inner = 0;      // MLP width; GPT-2's default (0 here, null in the file) is 4·C
  double layer_norm_epsilon = 1e-5;
  int head_size() const { return n_head > 0 ? n_embd / n_head : 0; }
  int mlp_size() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
};

// Parses config.json's text; `path` starts every error ("<path>: n_head: …"). Missing
// layer_norm_epsilon means 1e-5; n_positions may be given as n_ctx. A GPT-2 variant this program
// does not compute (another activation_function, unscaled attention) is refused by name.
std::optional<Gpt2Config> parse_gpt2_config(const std::string& text, const std::string& path,
                                            std::string& error);

// Reads and parses a config.json file (at most 1 MB).
std::optional<Gpt2Config> read_gpt2_config(const std::string& path, std::string& error);

// config.json text with GPT-2's keys (model_type "gpt2", n_ctx equal to n_positions).
std::string gpt2_config_json(const Gpt2Config& c);

}  // namespace attn
