// config.json of a GPT-2-format model: parsed and checked key by key.
#include "io/gpt2_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "io/mapped_file.h"

namespace attn {
namespace {

// Bounds that no real GPT-2-format model comes near, so a hostile config cannot ask for absurd
// sizes (the weights must exist in the safetensors file as well, which is checked there).
constexpr int64_t kMaxLayers = 1024, kMaxEmbd = 1 << 16, kMaxPositions = 1 << 20,
                  kMaxVocab = 1 << 22, kMaxHeads = 1024;

}  // namespace

std::optional<Gpt2Config> parse_gpt2_config(const std::string& text, const std::string& path,
                                            std::string& error) {
  const std::optional<nlohmann::json> parsed = parse_config_object(text, path, error);
  if (!parsed) return std::nullopt;
  const nlohmann::json& j = *parsed;
  Gpt2Config c;
  auto get_int = [&](const char* key, int64_t lo, int64_t hi, int& out) {
    auto it = j.find(key);
    if (it == j.end()) {
      error = path + ": " + key + ": missing";
      return false;
    }
    if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
      error = path + ": " + key + ": expected an integer from " + std::to_string(lo) + " to " +
              std::to_string(hi) + ", got " + it->dump();
      return false;
    }
    out = static_cast<int>(it->get<int64_t>());
    return true;
  };
  if (!get_int("n_layer", 1, kMaxLayers, c.n_layer) || !get_int("n_head", 1, kMaxHeads, c.n_head) ||
      !get_int("n_embd", 1, kMaxEmbd, c.n_embd) ||
      !get_int("vocab_size", 1, kMaxVocab, c.vocab_size))
    return std::nullopt;
  if (j.contains("n_positions") || !j.contains("n_ctx")) {
    if (!get_int("n_positions", 1, kMaxPositions, c.n_positions)) return std::nullopt;
  } else if (!get_int("n_ctx", 1, kMaxPositions, c.n_positions)) {
    return std::nullopt;
  }
  if (c.n_embd % c.n_head != 0) {
    error = path + ": n_embd = " + std::to_string(c.n_embd) +
            " is not divisible by n_head = " + std::to_string(c.n_head);
    return std::nullopt;
  }
  if (auto it = j.find("n_inner"); it != j.end() && !it->is_null()) {
    if (!get_int("n_inner", 1, 4 * kMaxEmbd, c.n_inner)) return std::nullopt;
  }
  if (auto it = j.find("layer_norm_epsilon"); it != j.end()) {
    if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1) {
      error = path + ": layer_norm_epsilon: expected a number in (0, 1], got " + it->dump();
      return std::nullopt;
    }
    c.layer_norm_epsilon = it->get<double>();
  }
  if (auto it = j.find("activation_function"); it != j.end()) {
    const std::string f = it->is_string() ? it->get<std::string>() : it->dump();
    if (f != "gelu_new" && f != "gelu_pytorch_tanh") {
      error = path + ": activation_function: '" + f +
              "' is not supported; expected gelu_new (GPT-2's tanh GELU)";
      return std::nullopt;
    }
  }
  for (const char* key : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
    if (auto it = j.find(key); it != j.end() && it->is_boolean() && it->get<bool>()) {
      error = path + ": " + key + ": true is not supported (GPT-2 computes with false)";
      return std::nullopt;
    }
  if (auto it = j.find("scale_attn_weights");
      it != j.end() && it->is_boolean() && !it->get<bool>()) {
    error = path + ": scale_attn_weights: false is not supported (GPT-2 scales by 1/√d_k)";
    return std::nullopt;
  }
  return c;
}

std::string gpt2_config_json(const Gpt2Config& c) {
  nlohmann::ordered_json j;
  j["model_type"] = "gpt2";
  j["architectures"] = {"GPT2LMHeadModel"};
  j["activation_function"] = "gelu_new";
  j["n_layer"] = c.n_layer;
  j["n_head"] = c.n_head;
  j["n_embd"] = c.n_embd;
  j["n_positions"] = c.n_positions;
  j["n_ctx"] = c.n_positions;
  j["n_inner"] = c.n_inner > 0 ? nlohmann::ordered_json(c.n_inner) : nlohmann::ordered_json();
  j["vocab_size"] = c.vocab_size;
  j["layer_norm_epsilon"] = c.layer_norm_epsilon;
  return j.dump(2) + "\n";
}

}  // namespace attn
