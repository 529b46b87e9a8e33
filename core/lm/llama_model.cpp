// Llama, Mistral and Qwen2 folders: config.json (io/llama_config.h), the weights from
// model.safetensors or the shards model.safetensors.index.json lists, each tensor found and its
// shape checked against the config before anything is read, and tokenizer.json.
#include <sys/stat.h>

#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "io/atomic_file.h"
#include "io/json_input.h"
#include "io/llama_config.h"
#include "io/mapped_file.h"
#include "io/safetensors.h"
#include "lm/model.h"

namespace attn::lm {
namespace {

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// One tensor the model needs: its name, its shape from config.json, and where it goes (a matrix
// kept as stored, or a vector widened to float32).
struct Wanted {
  std::string name;
  std::vector<int64_t> shape;
  Weight* matrix = nullptr;
  AlignedVector<float>* vector = nullptr;
};

std::vector<Wanted> wanted_tensors(const Config& c, LlamaWeights& w) {
  const int64_t C = c.n_embd, V = c.vocab_size, F = c.mlp_size(), Q = c.q_dim(), KV = c.kv_dim();
  w.layers.resize(static_cast<size_t>(c.n_layer));
  std::vector<Wanted> out;
  out.push_back({"model.embed_tokens.weight", {V, C}, &w.embed, nullptr});
  for (int l = 0; l < c.n_layer; ++l) {
    LlamaLayer& y = w.layers[static_cast<size_t>(l)];
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.push_back({p + "input_layernorm.weight", {C}, nullptr, &y.attn_norm});
    out.push_back({p + "self_attn.q_proj.weight", {Q, C}, &y.q, nullptr});
    out.push_back({p + "self_attn.k_proj.weight", {KV, C}, &y.k, nullptr});
    out.push_back({p + "self_attn.v_proj.weight", {KV, C}, &y.v, nullptr});
    if (c.qkv_bias) {
      out.push_back({p + "self_attn.q_proj.bias", {Q}, nullptr, &y.q_bias});
      out.push_back({p + "self_attn.k_proj.bias", {KV}, nullptr, &y.k_bias});
      out.push_back({p + "self_attn.v_proj.bias", {KV}, nullptr, &y.v_bias});
    }
    out.push_back({p + "self_attn.o_proj.weight", {C, Q}, &y.o, nullptr});
    out.push_back({p + "post_attention_layernorm.weight", {C}, nullptr, &y.mlp_norm});
    out.push_back({p + "mlp.gate_proj.weight", {F, C}, &y.gate, nullptr});
    out.push_back({p + "mlp.up_proj.weight", {F, C}, &y.up, nullptr});
    out.push_back({p + "mlp.down_proj.weight", {C, F}, &y.down, nullptr});
  }
  out.push_back({"model.norm.weight", {C}, nullptr, &w.norm});
  if (!c.tied) out.push_back({"lm_head.weight", {V, C}, &w.head, nullptr});
  return out;
}

// The safetensors files of a folder and which holds each tensor.
struct Shards {
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  std::map<std::string, size_t> file_of;  // tensor name → index into files (index.json's map)
  bool indexed = false;
  std::string index_path;

  // The entry of a tensor, or null with an error naming the file.
  const SafetensorsEntry* find(const std::string& name, std::string& error,
                               const SafetensorsFile*& file) const {
    if (!indexed) {
      file = files[0].get();
      const SafetensorsEntry* e = file->find(name);
      if (!e) error = file->path() + ": no tensor '" + name + "'";
      return e;
    }
    const auto it = file_of.find(name);
    if (it == file_of.end()) {
      error = index_path + ": weight_map: no entry for tensor '" + name + "'";
      return nullptr;
    }
    file = files[it->second].get();
    const SafetensorsEntry* e = file->find(name);
    if (!e) error = file->path() + ": no tensor '" + name + "' (" + index_path + " lists it here)";
    return e;
  }
};

// A shard's file name as index.json gives it: a plain name in the folder, never a path.
bool plain_file_name(const std::string& s) {
  return !s.empty() && s.size() <= 255 && s.find('/') == std::string::npos && s != "." &&
         s != ".." && s.find('\0') == std::string::npos;
}

bool open_shards(const std::string& folder, Shards& s, std::string& error) {
  const std::string single = folder + "/model.safetensors";
  s.index_path = folder + "/model.safetensors.index.json";
  if (exists(single) || !exists(s.index_path)) {
    s.files.push_back(std::make_unique<SafetensorsFile>());
    if (!s.files[0]->open(single, error)) {
      if (!exists(single))
        error = single + ": no such file (nor model.safetensors.index.json listing shards)";
      return false;
    }
    return true;
  }
  s.indexed = true;
  std::string text;
  if (!read_regular_file(s.index_path, 16u << 20, text, error)) return false;
  const std::optional<nlohmann::json> j = parse_json_input(text, s.index_path, error);
  if (!j) return false;
  const auto map = j->is_object() ? j->find("weight_map") : j->end();
  if (!j->is_object() || map == j->end() || !map->is_object()) {
    error = s.index_path + ": weight_map: missing (expected an object naming each tensor's file)";
    return false;
  }
  std::map<std::string, size_t> by_file;
  for (const auto& [name, file] : map->items()) {
    if (!file.is_string() || !plain_file_name(file.get<std::string>())) {
      error = s.index_path + ": weight_map." + name + ": expected a file name in the folder, got " +
              file.dump();
      return false;
    }
    const std::string f = file.get<std::string>();
    auto it = by_file.find(f);
    if (it == by_file.end()) {
      auto shard = std::make_unique<SafetensorsFile>();
      if (!shard->open(folder + "/" + f, error)) {
        if (!exists(folder + "/" + f))
          error = folder + "/" + f + ": no such file (a shard " + s.index_path + " lists)";
        return false;
      }
      s.files.push_back(std::move(shard));
      it = by_file.emplace(f, s.files.size() - 1).first;
    }
    s.file_of[name] = it->second;
  }
  if (s.files.empty()) {
    error = s.index_path + ": weight_map: empty";
    return false;
  }
  return true;
}

// The first non-finite value of a BF16 tensor (exponent bits all ones), or -1.
long long first_non_finite_bf16(const std::vector<uint16_t>& b) {
  for (size_t i = 0; i < b.size(); ++i)
    if ((b[i] & 0x7F80u) == 0x7F80u) return static_cast<long long>(i);
  return -1;
}

long long first_non_finite(const float* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return static_cast<long long>(i);
  return -1;
}

}  // namespace

double LlamaWeights::parameters() const {
  double n = 0;
  auto add = [&](const Weight& w) { n += static_cast<double>(w.rows) * w.cols; };
  add(embed);
  add(head);
  n += static_cast<double>(norm.size());
  for (const LlamaLayer& y : layers) {
    for (const Weight* w : {&y.q, &y.k, &y.v, &y.o, &y.gate, &y.up, &y.down}) add(*w);
    n += static_cast<double>(y.attn_norm.size() + y.mlp_norm.size() + y.q_bias.size() +
                             y.k_bias.size() + y.v_bias.size());
  }
  return n;
}

double LlamaWeights::bytes() const {
  double b = static_cast<double>(embed.bytes() + head.bytes() + norm.size() * 4);
  for (const LlamaLayer& y : layers) {
    for (const Weight* w : {&y.q, &y.k, &y.v, &y.o, &y.gate, &y.up, &y.down})
      b += static_cast<double>(w->bytes());
    b += 4.0 * static_cast<double>(y.attn_norm.size() + y.mlp_norm.size() + y.q_bias.size() +
                                   y.k_bias.size() + y.v_bias.size());
  }
  return b;
}

bool load_llama_weights(const std::string& folder, Model& m, std::string& error) {
  const Config& c = m.config;
  // The tokenizer first: a folder without one cannot be used, whatever its weights.
  if (!exists(folder + "/tokenizer.json")) {
    error = folder + "/tokenizer.json: no such file (a " + std::string(arch_name(c.arch)) +
            " folder needs the Hugging Face tokenizer)";
    return false;
  }
  if (!m.tokenizer.load_hf(folder, error)) return false;
  if (m.tokenizer.size() > c.vocab_size) {
    error = folder + "/tokenizer.json: has ids up to " + std::to_string(m.tokenizer.size() - 1) +
            ", beyond config.json's vocab_size = " + std::to_string(c.vocab_size);
    return false;
  }
  Shards shards;
  if (!open_shards(folder, shards, error)) return false;
  LlamaWeights w;
  const std::vector<Wanted> wanted = wanted_tensors(c, w);
  // Every tensor found and its shape checked before anything is allocated, so nothing larger
  // than the files can fill is ever asked for.
  std::vector<std::pair<const SafetensorsFile*, const SafetensorsEntry*>> found;
  for (const Wanted& t : wanted) {
    const SafetensorsFile* file = nullptr;
    const SafetensorsEntry* e = shards.find(t.name, error, file);
    if (!e) return false;
    if (e->shape != t.shape) {
      error = file->path() + ": tensor '" + t.name + "' has shape " + shape_text(e->shape) +
              "; config.json implies " + shape_text(t.shape);
      return false;
    }
    if (e->dtype != "F32" && e->dtype != "F16" && e->dtype != "BF16") {
      error = file->path() + ": tensor '" + t.name + "' has dtype " + e->dtype +
              "; expected F32, F16 or BF16";
      return false;
    }
    found.emplace_back(file, e);
  }
  m.dtype = found[0].second->dtype;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const Wanted& t = wanted[i];
    const auto [file, e] = found[i];
    const auto n = static_cast<size_t>(e->elements());
    long long bad = -1;
    if (t.vector) {
      t.vector->resize(n);
      if (!file->read_floats(*e, t.vector->data(), error)) return false;
      bad = first_non_finite(t.vector->data(), n);
    } else {
      Weight& dst = *t.matrix;
      dst.rows = e->shape[0];
      dst.cols = e->shape[1];
      // BF16 stays BF16 (half the memory, widened as it is used); F16 and F32 become F32.
      if (e->dtype == "BF16") {
        dst.bf16.resize(n);
        if (!file->read_bf16(*e, dst.bf16.data(), error)) return false;
        bad = first_non_finite_bf16(dst.bf16);
      } else {
        dst.f32.resize(n);
        if (!file->read_floats(*e, dst.f32.data(), error)) return false;
        bad = first_non_finite(dst.f32.data(), n);
      }
    }
    if (bad >= 0) {
      error = file->path() + ": tensor '" + t.name + "' holds a non-finite value at flat index " +
              std::to_string(bad);
      return false;
    }
  }
  m.llama = std::move(w);
  m.mlp = true;
  return true;
}

namespace {

// A matrix as float32 values for the writer.
std::vector<float> widened(const Weight& w) {
  std::vector<float> out(static_cast<size_t>(w.rows * w.cols));
  for (int64_t r = 0; r < w.rows; ++r) w.row(r, out.data() + r * w.cols);
  return out;
}

}  // namespace

bool save_llama_model(const Model& m, const std::string& folder, std::string& error,
                      const std::string& dtype) {
  // wanted_tensors gives writable addresses for the loader; here they are only read (and its
  // resize of the layers is a no-op, the model having them all).
  const std::vector<Wanted> wanted =
      wanted_tensors(m.config, const_cast<LlamaWeights&>(m.llama));  // NOLINT
  std::vector<std::vector<float>> storage;
  storage.reserve(wanted.size());
  std::vector<SafetensorsTensor> tensors;
  for (const Wanted& t : wanted) {
    const float* data = nullptr;
    if (t.vector) {
      data = t.vector->data();
    } else if (t.matrix->is_bf16()) {
      storage.push_back(widened(*t.matrix));
      data = storage.back().data();
    } else {
      data = t.matrix->f32.data();
    }
    tensors.push_back({t.name, dtype, t.shape, data});
  }
  // The three files together or none of them, the folder created only then (io/atomic_file.h).
  return write_folder_files(folder,
                            {{"config.json", llama_config_json(m.config, dtype)},
                             {"model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}})},
                             {"tokenizer.json", m.tokenizer.tokenizer_json()}},
                            error);
}

void init_random_llama(Model& m, const Config& c, uint64_t seed, float std) {
  m.config = c;
  LlamaWeights w;
  const std::vector<Wanted> wanted = wanted_tensors(c, w);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, std);
  for (const Wanted& t : wanted) {
    size_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<size_t>(d);
    if (t.vector) {
      // Norms at 1; biases small and random, so Qwen2's are seen to matter.
      const bool bias = t.name.find("bias") != std::string::npos;
      t.vector->resize(n);
      for (float& x : *t.vector) x = bias ? normal(rng) : 1.0f;
    } else {
      t.matrix->rows = t.shape[0];
      t.matrix->cols = t.shape[1];
      t.matrix->f32.resize(n);
      for (float& x : t.matrix->f32) x = normal(rng);
    }
  }
  m.llama = std::move(w);
  m.mlp = true;
}

}  // namespace attn::lm
