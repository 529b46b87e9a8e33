// Model folders: read with every tensor checked against config.json, written in GPT-2's layout.
#include "lm/model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "io/atomic_file.h"
#include "io/llama_config.h"
#include "io/safetensors.h"
#include "io/shipped.h"

namespace attn::lm {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

bool param_is_per_layer(Param p) { return p != kWte && p != kWpe && p != kLnfW && p != kLnfB; }

std::string param_name(Param p, int l) {
  const std::string h = "h." + std::to_string(l) + ".";
  switch (p) {
    case kWte:
      return "wte.weight";
    case kWpe:
      return "wpe.weight";
    case kLn1W:
      return h + "ln_1.weight";
    case kLn1B:
      return h + "ln_1.bias";
    case kQkvW:
      return h + "attn.c_attn.weight";
    case kQkvB:
      return h + "attn.c_attn.bias";
    case kAttProjW:
      return h + "attn.c_proj.weight";
    case kAttProjB:
      return h + "attn.c_proj.bias";
    case kLn2W:
      return h + "ln_2.weight";
    case kLn2B:
      return h + "ln_2.bias";
    case kFcW:
      return h + "mlp.c_fc.weight";
    case kFcB:
      return h + "mlp.c_fc.bias";
    case kFcProjW:
      return h + "mlp.c_proj.weight";
    case kFcProjB:
      return h + "mlp.c_proj.bias";
    case kLnfW:
      return "ln_f.weight";
    case kLnfB:
      return "ln_f.bias";
    case kNumParams:
      break;
  }
  return "";
}

std::vector<int64_t> param_file_shape(Param p, const Config& c) {
  const int64_t C = c.n_embd, F = c.mlp_size();
  switch (p) {
    case kWte:
      return {c.vocab_size, C};
    case kWpe:
      return {c.n_positions, C};
    case kQkvW:
      return {C, 3 * C};
    case kQkvB:
      return {3 * C};
    case kAttProjW:
      return {C, C};
    case kFcW:
      return {C, F};
    case kFcB:
      return {F};
    case kFcProjW:
      return {F, C};
    default:
      return {C};  // layer norms and the C-wide biases
  }
}

namespace {

// The number of values of one layer's slice (or of a global tensor) in the Llama family's
// training layout (see ParamLayout).
size_t llama_param_count(Param p, const Config& c) {
  const size_t C = static_cast<size_t>(c.n_embd), F = static_cast<size_t>(c.mlp_size());
  const size_t W = static_cast<size_t>(c.qkv_width()), Q = static_cast<size_t>(c.q_dim());
  switch (p) {
    case kWte:
      return static_cast<size_t>(c.vocab_size) * C;
    case kLn1W:
    case kLn2W:
    case kLnfW:
      return C;
    case kQkvW:
      return C * W;
    case kQkvB:
      return c.qkv_bias ? W : 0;
    case kAttProjW:
      return Q * C;
    case kFcW:
      return C * 2 * F;
    case kFcProjW:
      return F * C;
    default:
      return 0;  // no position embedding, no other biases
  }
}

}  // namespace

ParamLayout param_layout(const Config& c) {
  ParamLayout l;
  for (int p = 0; p < kNumParams; ++p) {
    size_t n = 1;
    if (c.llama_family()) {
      n = llama_param_count(static_cast<Param>(p), c);
    } else {
      for (int64_t d : param_file_shape(static_cast<Param>(p), c)) n *= static_cast<size_t>(d);
    }
    if (param_is_per_layer(static_cast<Param>(p))) n *= static_cast<size_t>(c.n_layer);
    l.offset[static_cast<size_t>(p)] = l.total;
    l.count[static_cast<size_t>(p)] = n;
    l.total += n;
  }
  return l;
}

bool mlp_is_zero(const Parameters& p) {
  for (Param t : {kFcW, kFcB, kFcProjW, kFcProjB}) {
    const float* x = p.ptr(t);
    for (size_t i = 0; i < p.count[t]; ++i)
      if (x[i] != 0.0f) return false;
  }
  return true;
}

bool load_model(const std::string& folder_in, Model& out, std::string& error) {
  std::string folder = folder_in;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  if (!is_dir(folder)) {
    struct stat st {};
    error = folder + ": " + (::stat(folder.c_str(), &st) == 0 ? "not a folder" : "no such folder");
    return false;
  }
  Model m;
  m.folder = folder;
  m.name = folder_name(folder);
  const std::optional<Config> config = read_lm_config(folder + "/config.json", error);
  if (!config) return false;
  m.config = *config;
  if (m.config.llama_family()) {
    if (!load_llama_weights(folder, m, error)) return false;
    out = std::move(m);
    return true;
  }

  const std::string st_path = folder + "/model.safetensors";
  SafetensorsFile file;
  if (!file.open(st_path, error)) return false;
  std::string prefix;
  if (!file.find("wte.weight")) {
    if (file.find("transformer.wte.weight")) {
      prefix = "transformer.";
    } else {
      error = st_path + ": no tensor 'wte.weight' (nor 'transformer.wte.weight')";
      return false;
    }
  }
  // Every tensor is found and its shape checked before anything is allocated, so the buffer is
  // never larger than the file can fill.
  std::vector<std::vector<const SafetensorsEntry*>> entries(kNumParams);
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto p = static_cast<Param>(pi);
    const std::vector<int64_t> want = param_file_shape(p, m.config);
    const int layers = param_is_per_layer(p) ? m.config.n_layer : 1;
    for (int l = 0; l < layers; ++l) {
      const std::string name = prefix + param_name(p, l);
      const SafetensorsEntry* e = file.find(name);
      if (!e) {
        error = st_path + ": no tensor '" + name + "'" +
                (p == kQkvW || p == kLn1W
                     ? " (config.json has n_layer = " + std::to_string(m.config.n_layer) + ")"
                     : "");
        return false;
      }
      if (e->shape != want) {
        error = st_path + ": tensor '" + name + "' has shape " + shape_text(e->shape) +
                "; config.json implies " + shape_text(want);
        return false;
      }
      if (e->dtype != "F32" && e->dtype != "F16" && e->dtype != "BF16") {
        error = st_path + ": tensor '" + name + "' has dtype " + e->dtype +
                "; expected F32, F16 or BF16";
        return false;
      }
      entries[static_cast<size_t>(pi)].push_back(e);
    }
  }
  m.dtype = entries[kWte][0]->dtype;
  m.params.allocate(m.config);
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto p = static_cast<Param>(pi);
    for (size_t l = 0; l < entries[static_cast<size_t>(pi)].size(); ++l) {
      const SafetensorsEntry* e = entries[static_cast<size_t>(pi)][l];
      float* dst = param_is_per_layer(p) ? m.params.ptr(p, static_cast<int>(l)) : m.params.ptr(p);
      if (!file.read_floats(*e, dst, error)) return false;
      const auto n = static_cast<size_t>(e->elements());
      for (size_t i = 0; i < n; ++i)
        if (!std::isfinite(dst[i])) {
          error = st_path + ": tensor '" + e->name + "' holds a non-finite value at flat index " +
                  std::to_string(i);
          return false;
        }
    }
  }
  m.mlp = !mlp_is_zero(m.params);
  // GPT-2's vocab.json and merges.txt; a folder that ships only tokenizer.json is read from it.
  struct stat st {};
  if (::stat((folder + "/vocab.json").c_str(), &st) != 0 &&
      ::stat((folder + "/tokenizer.json").c_str(), &st) == 0) {
    if (!m.tokenizer.load_hf(folder, error)) return false;
    if (m.tokenizer.size() > m.config.vocab_size) {
      error = folder + "/tokenizer.json: has ids up to " + std::to_string(m.tokenizer.size() - 1) +
              ", beyond config.json's vocab_size = " + std::to_string(m.config.vocab_size);
      return false;
    }
  } else if (!m.tokenizer.load(folder + "/vocab.json", folder + "/merges.txt", m.config.vocab_size,
                               error)) {
    return false;
  }
  out = std::move(m);
  return true;
}

bool save_model(const Model& m, const std::string& folder, std::string& error,
                const std::string& dtype, const std::string& prefix) {
  if (m.config.llama_family()) return save_llama_model(m, folder, error, dtype);
  std::vector<SafetensorsTensor> tensors;
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto p = static_cast<Param>(pi);
    const int layers = param_is_per_layer(p) ? m.config.n_layer : 1;
    for (int l = 0; l < layers; ++l)
      tensors.push_back({prefix + param_name(p, l), dtype, param_file_shape(p, m.config),
                         param_is_per_layer(p) ? m.params.ptr(p, l) : m.params.ptr(p)});
  }
  // The four files together or none of them (io/atomic_file.h): a folder is never left with a
  // new config.json beside an old model.safetensors.
  // The bytes first: a missing folder is created only when its files are complete (NewFolder,
  // docs/robustness.md), and removed again if they cannot be written.
  return write_folder_files(folder,
                            {{"config.json", gpt2_config_json(m.config)},
                             {"model.safetensors", safetensors_bytes(tensors, {{"format", "pt"}})},
                             {"vocab.json", m.tokenizer.vocab_json()},
                             {"merges.txt", m.tokenizer.merges_txt()}},
                            error);
}

void init_random(Model& m, const Config& c, uint64_t seed, float std) {
  m.config = c;
  m.params.allocate(c);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, std);
  const float proj_scale = 1.0f / std::sqrt(2.0f * static_cast<float>(c.n_layer));
  for (int pi = 0; pi < kNumParams; ++pi) {
    const auto p = static_cast<Param>(pi);
    float* x = m.params.ptr(p);
    const size_t n = m.params.count[static_cast<size_t>(pi)];
    switch (p) {
      case kLn1W:
      case kLn2W:
      case kLnfW:
        std::fill(x, x + n, 1.0f);
        break;
      case kWte:
      case kWpe:
      case kQkvW:
      case kFcW:
        for (size_t i = 0; i < n; ++i) x[i] = normal(rng);
        break;
      case kAttProjW:
      case kFcProjW:
        for (size_t i = 0; i < n; ++i) x[i] = normal(rng) * proj_scale;
        break;
      default:
        break;  // biases start at zero
    }
  }
}

double Model::parameter_count() const {
  return config.llama_family() ? llama.parameters() : static_cast<double>(params.total());
}

std::string folder_name(std::string folder) {
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  const size_t slash = folder.rfind('/');
  return slash == std::string::npos ? folder : folder.substr(slash + 1);
}

std::string resolve_model_folder(const std::string& arg, std::string& error) {
  const std::optional<std::string> folder = resolve_shipped(kLmModels, arg, error);
  if (!folder) {
    error = "model: " + error;
    return "";
  }
  return *folder;
}

std::vector<std::string> shipped_models() {
  std::vector<std::string> out;
  for (const ShippedItem& item : list_shipped(kLmModels)) out.push_back(item.name);
  return out;
}

}  // namespace attn::lm
