// config.json of Llama, Mistral and Qwen2 folders: parsed and checked key by key.
#include "io/llama_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "io/mapped_file.h"

namespace attn {
namespace {

// The same bounds as GPT-2's config (io/gpt2_config.cpp): no real model comes near them.
constexpr int64_t kMaxLayers = 1024, kMaxEmbd = 1 << 16, kMaxPositions = 1 << 20,
                  kMaxVocab = 1 << 22, kMaxHeads = 1024, kMaxHeadDim = 4096;

struct Arch {
  const char* model_type;
  const char* architecture;
  LmArch arch;
};
constexpr Arch kArchs[] = {{"gpt2", "GPT2LMHeadModel", LmArch::kGpt2},
                           {"llama", "LlamaForCausalLM", LmArch::kLlama},
                           {"mistral", "MistralForCausalLM", LmArch::kMistral},
                           {"qwen2", "Qwen2ForCausalLM", LmArch::kQwen2}};

// Which architecture the file names: model_type first, then architectures[0]. nullopt with an
// error for a name this program does not compute; kGpt2 when the file names none.
std::optional<LmArch> find_arch(const nlohmann::json& j, const std::string& path,
                                std::string& error) {
  std::string type, archs;
  if (auto it = j.find("model_type"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) {
      error = path + ": model_type: expected a string, got " + it->dump();
      return std::nullopt;
    }
    type = it->get<std::string>();
    for (const Arch& a : kArchs)
      if (type == a.model_type) return a.arch;
  }
  if (auto it = j.find("architectures"); it != j.end() && it->is_array() && !it->empty()) {
    archs = it->dump();
    for (const auto& name : *it)
      for (const Arch& a : kArchs)
        if (name.is_string() && name.get<std::string>() == a.architecture) return a.arch;
  }
  if (type.empty() && archs.empty()) return LmArch::kGpt2;
  error = path + ": " + (type.empty() ? "architectures: " + archs : "model_type: '" + type + "'") +
          " is not an architecture this program computes; it reads GPT-2 (gpt2, "
          "GPT2LMHeadModel), Llama (llama, LlamaForCausalLM), Mistral (mistral, "
          "MistralForCausalLM) and Qwen2 (qwen2, Qwen2ForCausalLM) folders";
  return std::nullopt;
}

}  // namespace

const char* arch_name(LmArch a) {
  switch (a) {
    case LmArch::kGpt2:
      return "GPT-2";
    case LmArch::kLlama:
      return "Llama";
    case LmArch::kMistral:
      return "Mistral";
    case LmArch::kQwen2:
      return "Qwen2";
  }
  return "?";
}

namespace {

// Reads config.json's fields with their ranges; every error names the file and the key.
struct ConfigReader {
  const nlohmann::json& j;
  const std::string& path;
  std::string& error;

  bool fail(const std::string& key, const std::string& what) {
    error = path + ": " + key + ": " + what;
    return false;
  }
  bool get_int(const char* key, int64_t lo, int64_t hi, int& out, bool required = true) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return required ? fail(key, "missing") : true;
    if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi)
      return fail(key, "expected an integer from " + std::to_string(lo) + " to " +
                           std::to_string(hi) + ", got " + it->dump());
    out = static_cast<int>(it->get<int64_t>());
    return true;
  }
  // A number of `o` (j or an object inside it), its key named as `prefix` + key.
  bool get_double(const nlohmann::json& o, const std::string& key, double lo, double hi,
                  double& out, bool required, const std::string& prefix = "") {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return required ? fail(prefix + key, "missing") : true;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo ||
        it->get<double>() > hi)
      return fail(prefix + key, "expected a number from " + std::to_string(lo) + " to " +
                                    std::to_string(hi) + ", got " + it->dump());
    out = it->get<double>();
    return true;
  }
  bool get_bool(const char* key, bool& out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    if (!it->is_boolean()) return fail(key, "expected true or false, got " + it->dump());
    out = it->get<bool>();
    return true;
  }
  // A token id, or a list of them (the first is `out`; all of them into `all` when given).
  bool token_id(const char* key, int vocab_size, int& out, std::vector<int>* all) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    const nlohmann::json list = it->is_array() ? *it : nlohmann::json::array({*it});
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab_size)
        return fail(key, "expected a token id below vocab_size = " + std::to_string(vocab_size) +
                             ", got " + it->dump());
      if (all) all->push_back(v.get<int>());
    }
    if (!list.empty()) out = list.front().get<int>();
    return true;
  }
};

// The sizes, and the checks that they fit together (head size even for RoPE, K/V heads dividing
// the query heads).
bool read_sizes(ConfigReader& in, LmConfig& c) {
  const nlohmann::json& j = in.j;
  if (!in.get_int("num_hidden_layers", 1, kMaxLayers, c.n_layer) ||
      !in.get_int("num_attention_heads", 1, kMaxHeads, c.n_head) ||
      !in.get_int("hidden_size", 1, kMaxEmbd, c.n_embd) ||
      !in.get_int("intermediate_size", 1, 16 * kMaxEmbd, c.n_inner) ||
      !in.get_int("vocab_size", 1, kMaxVocab, c.vocab_size) ||
      !in.get_int("max_position_embeddings", 1, kMaxPositions, c.n_positions) ||
      !in.get_int("num_key_value_heads", 1, kMaxHeads, c.n_kv_head, false) ||
      !in.get_int("head_dim", 2, kMaxHeadDim, c.head_dim, false) ||
      !in.get_double(j, "rms_norm_eps", 0, 1, c.layer_norm_epsilon, false) ||
      !in.get_double(j, "rope_theta", 1, 1e12, c.rope_theta, false) ||
      !in.get_bool("tie_word_embeddings", c.tied))
    return false;
  if (!(c.layer_norm_epsilon > 0))
    return in.fail("rms_norm_eps", "expected a number above 0, got " + j["rms_norm_eps"].dump());
  if (c.head_dim == 0 && c.n_embd % c.n_head != 0)
    return in.fail("hidden_size",
                   std::to_string(c.n_embd) + " is not divisible by num_attention_heads = " +
                       std::to_string(c.n_head) + " (and config.json gives no head_dim)");
  if (c.head_size() % 2 != 0)
    return in.fail(c.head_dim ? "head_dim" : "hidden_size",
                   "the head size " + std::to_string(c.head_size()) +
                       " is odd; RoPE rotates pairs of dimensions");
  if (c.n_head % c.kv_heads() != 0)
    return in.fail("num_key_value_heads",
                   std::to_string(c.kv_heads()) +
                       " does not divide num_attention_heads = " + std::to_string(c.n_head) +
                       " (each K/V head serves the same number of query heads)");
  return true;
}

// What this program does not compute is refused by name: another activation, biases other than
// Qwen2's, RoPE on part of the head.
bool check_supported(ConfigReader& in) {
  const nlohmann::json& j = in.j;
  if (auto it = j.find("hidden_act"); it != j.end()) {
    const std::string f = it->is_string() ? it->get<std::string>() : it->dump();
    if (f != "silu" && f != "swish")
      return in.fail("hidden_act",
                     "'" + f + "' is not supported; expected silu (SwiGLU's activation)");
  }
  for (const char* key : {"attention_bias", "mlp_bias"}) {
    bool on = false;
    if (!in.get_bool(key, on)) return false;
    if (on)
      return in.fail(key,
                     "true is not supported (this program computes the biases Qwen2 has: q, k, v)");
  }
  if (auto it = j.find("partial_rotary_factor");
      it != j.end() && !(it->is_number() && it->get<double>() == 1.0))
    return in.fail("partial_rotary_factor",
                   it->dump() + " is not supported (RoPE on the whole head only)");
  return true;
}

// rope_scaling: none ("default" or null), linear, or Llama 3's llama3 with its frequency band.
bool read_rope_scaling(ConfigReader& in, RopeScaling& s) {
  auto it = in.j.find("rope_scaling");
  if (it == in.j.end() || it->is_null()) return true;
  if (!it->is_object())
    return in.fail("rope_scaling", "expected an object or null, got " + it->dump());
  const nlohmann::json& r = *it;
  std::string type;
  const char* type_key = r.contains("rope_type") ? "rope_type" : "type";
  if (auto t = r.find(type_key); t != r.end() && t->is_string()) type = t->get<std::string>();
  if (type == "default") {
    s.type = RopeScaling::kNone;
    return true;
  }
  if (type != "linear" && type != "llama3")
    return in.fail(std::string("rope_scaling.") + type_key,
                   (type.empty() ? r.value(type_key, nlohmann::json()).dump() : "'" + type + "'") +
                       " is not supported; expected llama3 or linear (or rope_scaling null)");
  s.type = type == "linear" ? RopeScaling::kLinear : RopeScaling::kLlama3;
  const std::string p = "rope_scaling.";
  if (!in.get_double(r, "factor", 1e-6, 1e6, s.factor, true, p)) return false;
  if (s.type != RopeScaling::kLlama3) return true;
  double orig = 0;
  if (!in.get_double(r, "low_freq_factor", 1e-6, 1e6, s.low_freq_factor, true, p) ||
      !in.get_double(r, "high_freq_factor", 1e-6, 1e6, s.high_freq_factor, true, p) ||
      !in.get_double(r, "original_max_position_embeddings", 1, kMaxPositions, orig, true, p))
    return false;
  s.original_max_position_embeddings = static_cast<int>(orig);
  if (!(s.high_freq_factor > s.low_freq_factor))
    return in.fail("rope_scaling.high_freq_factor",
                   "must be above low_freq_factor (llama3 scaling divides by their difference)");
  return true;
}

// The window: Mistral's whenever sliding_window is set; Qwen2's only with use_sliding_window,
// and then from layer max_window_layers on; Llama has none.
bool read_sliding_window(ConfigReader& in, LmConfig& c) {
  bool use_window = c.arch == LmArch::kMistral;
  if (c.arch == LmArch::kQwen2 && !in.get_bool("use_sliding_window", use_window)) return false;
  if (!use_window) return true;
  return in.get_int("sliding_window", 1, kMaxPositions, c.sliding_window, false) &&
         (c.arch != LmArch::kQwen2 ||
          in.get_int("max_window_layers", 0, kMaxLayers, c.window_from_layer, false));
}

}  // namespace

std::optional<LmConfig> parse_llama_config(const std::string& text, const std::string& path,
                                           std::string& error) {
  const std::optional<nlohmann::json> parsed = parse_config_object(text, path, error);
  if (!parsed) return std::nullopt;
  const std::optional<LmArch> arch = find_arch(*parsed, path, error);
  if (!arch) return std::nullopt;
  if (*arch == LmArch::kGpt2) {
    error = path + ": model_type: expected llama, mistral or qwen2";
    return std::nullopt;
  }
  LmConfig c;
  c.arch = *arch;
  c.qkv_bias = c.arch == LmArch::kQwen2;
  c.tied = false;  // the transformers library's default for all three
  c.layer_norm_epsilon = 1e-6;
  ConfigReader in{*parsed, path, error};
  if (!read_sizes(in, c) || !check_supported(in) || !read_rope_scaling(in, c.rope_scaling) ||
      !read_sliding_window(in, c) ||
      !in.token_id("bos_token_id", c.vocab_size, c.bos_token_id, nullptr) ||
      !in.token_id("eos_token_id", c.vocab_size, c.eos_token_id, &c.eos_token_ids))
    return std::nullopt;
  return c;
}

std::optional<LmConfig> parse_lm_config(const std::string& text, const std::string& path,
                                        std::string& error) {
  const std::optional<nlohmann::json> parsed = parse_config_object(text, path, error);
  if (!parsed) return std::nullopt;
  const std::optional<LmArch> arch = find_arch(*parsed, path, error);
  if (!arch) return std::nullopt;
  return *arch == LmArch::kGpt2 ? parse_gpt2_config(text, path, error)
                                : parse_llama_config(text, path, error);
}

std::optional<LmConfig> read_lm_config(const std::string& path, std::string& error) {
  std::string text;
  if (!read_regular_file(path, 1 << 20, text, error)) return std::nullopt;
  return parse_lm_config(text, path, error);
}

std::string llama_config_json(const LmConfig& c, const std::string& dtype) {
  nlohmann::ordered_json j;
  const Arch* a = &kArchs[1];
  for (const Arch& x : kArchs)
    if (x.arch == c.arch) a = &x;
  j["architectures"] = {a->architecture};
  j["model_type"] = a->model_type;
  j["hidden_act"] = "silu";
  j["hidden_size"] = c.n_embd;
  j["intermediate_size"] = c.mlp_size();
  j["num_hidden_layers"] = c.n_layer;
  j["num_attention_heads"] = c.n_head;
  j["num_key_value_heads"] = c.kv_heads();
  j["head_dim"] = c.head_size();
  j["max_position_embeddings"] = c.n_positions;
  j["rms_norm_eps"] = c.layer_norm_epsilon;
  j["rope_theta"] = c.rope_theta;
  const RopeScaling& s = c.rope_scaling;
  if (s.type == RopeScaling::kNone) {
    j["rope_scaling"] = nullptr;
  } else {
    nlohmann::ordered_json r;
    r["rope_type"] = s.type == RopeScaling::kLinear ? "linear" : "llama3";
    r["factor"] = s.factor;
    if (s.type == RopeScaling::kLlama3) {
      r["low_freq_factor"] = s.low_freq_factor;
      r["high_freq_factor"] = s.high_freq_factor;
      r["original_max_position_embeddings"] = s.original_max_position_embeddings;
    }
    j["rope_scaling"] = r;
  }
  if (c.arch == LmArch::kMistral)
    j["sliding_window"] =
        c.sliding_window > 0 ? nlohmann::ordered_json(c.sliding_window) : nlohmann::ordered_json();
  if (c.arch == LmArch::kQwen2) {
    j["use_sliding_window"] = c.sliding_window > 0;
    j["sliding_window"] = c.sliding_window > 0 ? c.sliding_window : c.n_positions;
    j["max_window_layers"] = c.window_from_layer;
  }
  j["tie_word_embeddings"] = c.tied;
  j["vocab_size"] = c.vocab_size;
  if (c.bos_token_id >= 0) j["bos_token_id"] = c.bos_token_id;
  if (c.eos_token_id >= 0) j["eos_token_id"] = c.eos_token_id;
  j["torch_dtype"] = dtype == "F32" ? "float32" : dtype == "F16" ? "float16" : "bfloat16";
  return j.dump(2) + "\n";
}

}  // namespace attn
