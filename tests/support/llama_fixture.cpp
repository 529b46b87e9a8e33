// Llama/Mistral/Qwen2 test folders and their independent oracles (see llama_fixture.h).
#include "llama_fixture.h"

#include <sys/stat.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

namespace attn::test {

namespace {

// tests/hf_tokenizer_reference.inc's own types (as tests/test_hf_tokenizer.cpp declares them).
struct HfReferenceCase {
  const char* text;
  const char* ids;
  const char* decoded;
  const char* decoded_without_special;
};
struct HfReferenceTokenizer {
  const char* name;
  const char* json;
  std::vector<HfReferenceCase> cases;
};
struct HfReferenceDecode {
  const char* tokenizer;
  const char* ids;
  const char* decoded;
  const char* decoded_without_special;
};
#include "../hf_tokenizer_reference.inc"

std::vector<int> parse_ids(const char* text) {
  std::vector<int> ids;
  std::string s(text);
  size_t at = 0;
  while (at < s.size()) {
    const size_t end = s.find(' ', at);
    const std::string part = s.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (!part.empty()) ids.push_back(std::stoi(part));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return ids;
}

const char* arch_name(const std::string& arch) {
  if (arch == "mistral") return "MistralForCausalLM";
  if (arch == "qwen2") return "Qwen2ForCausalLM";
  return "LlamaForCausalLM";
}

const char* torch_dtype(const std::string& dtype) {
  if (dtype == "F16") return "float16";
  if (dtype == "BF16") return "bfloat16";
  return "float32";
}

// The sliding window the computation uses: Mistral's when not null; Qwen2's only when
// use_sliding_window is true; none for Llama.
int effective_window(const LlamaSpec& s) {
  if (s.arch == "mistral") return s.sliding_window;
  if (s.arch == "qwen2" && s.use_sliding_window) return s.sliding_window;
  return 0;
}

}  // namespace

int HfTestTokenizer::id_of(const std::string& token) const {
  for (const auto& [id, t] : tokens)
    if (t == token) return id;
  return -1;
}

const std::vector<int>& HfTestTokenizer::ids_of(const std::string& text) const {
  for (const auto& c : cases)
    if (c.first == text) return c.second;
  throw std::runtime_error("no library case for this text in " + name);
}

HfTestTokenizer hf_test_tokenizer(const std::string& name) {
  for (const HfReferenceTokenizer& r : kHfReference) {
    if (name != r.name) continue;
    HfTestTokenizer t;
    t.name = name;
    t.json = r.json;
    for (const HfReferenceCase& c : r.cases) t.cases.push_back({c.text, parse_ids(c.ids)});
    const nlohmann::json j = nlohmann::json::parse(t.json);
    for (const auto& [token, id] : j["model"]["vocab"].items()) t.tokens[id.get<int>()] = token;
    for (const auto& a : j["added_tokens"]) t.tokens[a["id"].get<int>()] = a["content"];
    t.size = t.tokens.rbegin()->first + 1;
    return t;
  }
  throw std::runtime_error("no test tokenizer " + name);
}

LlamaModel make_llama_model(const LlamaSpec& spec) {
  LlamaModel m;
  m.spec = spec;
  m.tok = hf_test_tokenizer(spec.tokenizer);
  m.vocab_size = m.tok.size + spec.extra_vocab;
  m.head_dim = spec.head_dim > 0 ? spec.head_dim : spec.hidden / spec.n_head;
  const int64_t L = spec.n_layer, C = spec.hidden, F = spec.intermediate, V = m.vocab_size;
  const int64_t QD = static_cast<int64_t>(spec.n_head) * m.head_dim,
                KD = static_cast<int64_t>(spec.n_kv_head) * m.head_dim;
  std::mt19937_64 rng(spec.seed);
  auto add = [&](const std::string& name, std::vector<int64_t> shape, double centre, double sigma) {
    size_t n = 1;
    for (auto d : shape) n *= static_cast<size_t>(d);
    std::normal_distribution<double> g(centre, sigma);
    std::vector<float> x(n);
    for (float& f : x) {
      f = static_cast<float>(g(rng));
      // Values as the file stores them, so the reference computes with exactly those.
      if (spec.dtype == "F16") f = static_cast<float>(Eigen::half(f));
      if (spec.dtype == "BF16") f = static_cast<float>(Eigen::bfloat16(f));
    }
    m.tensors[name] = {std::move(shape), std::move(x)};
  };
  add("model.embed_tokens.weight", {V, C}, 0, 1.0);
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", {C}, 1, 0.1);
    // q and k large enough that attention is far from uniform.
    add(p + "self_attn.q_proj.weight", {QD, C}, 0, 0.35);
    add(p + "self_attn.k_proj.weight", {KD, C}, 0, 0.35);
    add(p + "self_attn.v_proj.weight", {KD, C}, 0, 0.3);
    if (spec.qkv_bias) {
      add(p + "self_attn.q_proj.bias", {QD}, 0, 0.3);
      add(p + "self_attn.k_proj.bias", {KD}, 0, 0.3);
      add(p + "self_attn.v_proj.bias", {KD}, 0, 0.3);
    }
    add(p + "self_attn.o_proj.weight", {C, QD}, 0, 0.25);
    add(p + "post_attention_layernorm.weight", {C}, 1, 0.1);
    add(p + "mlp.gate_proj.weight", {F, C}, 0, 0.3);
    add(p + "mlp.up_proj.weight", {F, C}, 0, 0.3);
    add(p + "mlp.down_proj.weight", {C, F}, 0, 0.25);
  }
  add("model.norm.weight", {C}, 1, 0.1);
  if (!spec.tie) add("lm_head.weight", {V, C}, 0, 0.3);
  if (spec.force_eos) {
    // Channel 0 of the residual stream is 30 for every token and nothing writes to it; lm_head's
    // eos row reads only that channel: eos has by far the largest logit everywhere.
    if (spec.tie || spec.eos < 0) throw std::runtime_error("force_eos needs lm_head and an eos");
    auto& e = m.tensors.at("model.embed_tokens.weight").second;
    for (int64_t v = 0; v < V; ++v) e[static_cast<size_t>(v * C)] = 30.0f;
    for (int64_t l = 0; l < L; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      auto& o = m.tensors.at(p + "self_attn.o_proj.weight").second;
      for (int64_t i = 0; i < QD; ++i) o[static_cast<size_t>(i)] = 0.0f;
      auto& d = m.tensors.at(p + "mlp.down_proj.weight").second;
      for (int64_t i = 0; i < F; ++i) d[static_cast<size_t>(i)] = 0.0f;
    }
    m.tensors.at("model.norm.weight").second[0] = 1.0f;
    auto& h = m.tensors.at("lm_head.weight").second;
    for (int64_t i = 0; i < C; ++i) h[static_cast<size_t>(spec.eos * C + i)] = i == 0 ? 40.0f : 0;
  }
  return m;
}

std::string llama_config_json(const LlamaModel& m) {
  const LlamaSpec& s = m.spec;
  nlohmann::json c = {{"architectures", {arch_name(s.arch)}},
                      {"model_type", s.arch},
                      {"hidden_size", s.hidden},
                      {"intermediate_size", s.intermediate},
                      {"num_hidden_layers", s.n_layer},
                      {"num_attention_heads", s.n_head},
                      {"num_key_value_heads", s.n_kv_head},
                      {"max_position_embeddings", s.max_positions},
                      {"rms_norm_eps", s.rms_eps},
                      {"rope_theta", s.rope_theta},
                      {"tie_word_embeddings", s.tie},
                      {"vocab_size", m.vocab_size},
                      {"hidden_act", "silu"},
                      {"initializer_range", 0.02},
                      {"attention_dropout", 0.0},
                      {"use_cache", true},
                      {"torch_dtype", torch_dtype(s.dtype)},
                      {"transformers_version", "4.46.0"}};
  if (s.head_dim > 0) c["head_dim"] = s.head_dim;
  c["bos_token_id"] = s.bos >= 0 ? nlohmann::json(s.bos) : nlohmann::json(nullptr);
  c["eos_token_id"] = s.eos >= 0 ? nlohmann::json(s.eos) : nlohmann::json(nullptr);
  if (s.rope_scaling == "llama3")
    c["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", s.rope_factor},
                         {"low_freq_factor", s.low_freq_factor},
                         {"high_freq_factor", s.high_freq_factor},
                         {"original_max_position_embeddings", s.rope_original_max}};
  else if (s.rope_scaling == "linear")
    c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", s.rope_factor}};
  else
    c["rope_scaling"] = nullptr;
  if (s.arch == "llama") {
    c["attention_bias"] = false;
    c["mlp_bias"] = false;
    c["pretraining_tp"] = 1;
  }
  if (s.arch == "mistral")
    c["sliding_window"] =
        s.sliding_window > 0 ? nlohmann::json(s.sliding_window) : nlohmann::json(nullptr);
  if (s.arch == "qwen2") {
    c["sliding_window"] = s.sliding_window > 0 ? s.sliding_window : 4096;
    c["use_sliding_window"] = s.use_sliding_window;
    c["max_window_layers"] = s.n_layer;
  }
  return c.dump(2);
}

std::string llama_safetensors_bytes(const LlamaModel& m, const std::vector<std::string>& names,
                                    const std::string& dtype) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (const std::string& name : names) {
    const auto& [shape, values] = m.tensors.at(name);
    const size_t begin = data.size();
    for (float f : values) {
      if (dtype == "F32") {
        char b[4];
        std::memcpy(b, &f, 4);
        data.append(b, 4);
      } else {
        uint16_t bits = 0;
        if (dtype == "F16") {
          const Eigen::half h(f);
          std::memcpy(&bits, &h, 2);
        } else {
          const Eigen::bfloat16 h(f);
          std::memcpy(&bits, &h, 2);
        }
        data += static_cast<char>(bits & 0xFF);
        data += static_cast<char>(bits >> 8);
      }
    }
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while (h.size() % 8 != 0) h += ' ';
  std::string out;
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + h + data;
}

void write_llama_model(const LlamaModel& m, const std::string& folder) {
  ::mkdir(folder.c_str(), 0755);
  std::ofstream(folder + "/config.json") << llama_config_json(m);
  std::ofstream(folder + "/tokenizer.json") << m.tok.json;
  std::vector<std::string> first, second;
  for (const auto& [name, t] : m.tensors) {
    const bool early = name == "model.embed_tokens.weight" || name.rfind("model.layers.0.", 0) == 0;
    (m.spec.sharded && !early ? second : first).push_back(name);
  }
  if (!m.spec.sharded) {
    std::ofstream(folder + "/model.safetensors", std::ios::binary)
        << llama_safetensors_bytes(m, first, m.spec.dtype);
    return;
  }
  const char* names[2] = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  nlohmann::json index = {{"metadata", nlohmann::json::object()},
                          {"weight_map", nlohmann::json::object()}};
  size_t total = 0;
  const size_t item = m.spec.dtype == "F32" ? 4 : 2;
  for (int s = 0; s < 2; ++s) {
    const auto& list = s == 0 ? first : second;
    std::ofstream(folder + "/" + names[s], std::ios::binary)
        << llama_safetensors_bytes(m, list, m.spec.dtype);
    for (const auto& name : list) {
      index["weight_map"][name] = names[s];
      total += m.w(name).size() * item;
    }
  }
  index["metadata"]["total_size"] = total;
  std::ofstream(folder + "/model.safetensors.index.json") << index.dump(2);
}

std::vector<double> llama_inv_freq(const LlamaSpec& s, int hd) {
  std::vector<double> inv(static_cast<size_t>(hd / 2));
  for (int i = 0; i < hd / 2; ++i) inv[i] = std::pow(s.rope_theta, -2.0 * i / hd);
  if (s.rope_scaling == "linear") {
    for (double& f : inv) f /= s.rope_factor;  // positions divided by factor
  } else if (s.rope_scaling == "llama3") {
    // transformers' _compute_llama3_parameters: high frequencies kept, low ones divided by
    // factor, the band between blended.
    const double orig = s.rope_original_max;
    const double low_wavelen = orig / s.low_freq_factor, high_wavelen = orig / s.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen < high_wavelen) continue;
      if (wavelen > low_wavelen) {
        f /= s.rope_factor;
      } else {
        const double smooth =
            (orig / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1 - smooth) * f / s.rope_factor + smooth * f;
      }
    }
  }
  return inv;
}

LlamaReference llama_reference_forward(const LlamaModel& m, const std::vector<int>& ids) {
  const LlamaSpec& s = m.spec;
  const int L = s.n_layer, NH = s.n_head, NKV = s.n_kv_head, C = s.hidden, F = s.intermediate;
  const int hd = m.head_dim, V = m.vocab_size, T = static_cast<int>(ids.size());
  const int W = effective_window(s);
  const std::vector<double> inv = llama_inv_freq(s, hd);
  using Vec = std::vector<double>;
  LlamaReference r;
  r.T = T;
  r.att.assign(static_cast<size_t>(L) * NH * T * T, 0.0);
  const auto& E = m.w("model.embed_tokens.weight");
  std::vector<Vec> x(static_cast<size_t>(T), Vec(static_cast<size_t>(C)));
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < C; ++i) x[t][i] = E[static_cast<size_t>(ids[t]) * C + i];
  auto rms = [&](const Vec& in, const std::vector<float>& w) {
    double ss = 0;
    for (double v : in) ss += v * v;
    const double d = std::sqrt(ss / C + s.rms_eps);
    Vec out(in.size());
    for (int i = 0; i < C; ++i) out[i] = in[i] / d * w[i];
    return out;
  };
  // y = W·in (+ b) with W of PyTorch's Linear layout (out, in), row-major.
  auto linear = [&](const Vec& in, const std::string& name, int out_n) {
    const auto& w = m.w(name + ".weight");
    Vec out(static_cast<size_t>(out_n), 0.0);
    const size_t in_n = in.size();
    for (int o = 0; o < out_n; ++o) {
      double acc = 0;
      for (size_t i = 0; i < in_n; ++i) acc += w[o * in_n + i] * in[i];
      out[o] = acc;
    }
    if (m.has(name + ".bias")) {
      const auto& b = m.w(name + ".bias");
      for (int o = 0; o < out_n; ++o) out[o] += b[o];
    }
    return out;
  };
  // Rotate-half RoPE of every head_dim-sized slice of v at position p.
  auto rope = [&](Vec& v, int p) {
    const int half = hd / 2;
    for (size_t h0 = 0; h0 < v.size(); h0 += static_cast<size_t>(hd))
      for (int i = 0; i < half; ++i) {
        const double a = p * inv[i], c = std::cos(a), sn = std::sin(a);
        const double x1 = v[h0 + i], x2 = v[h0 + i + half];
        v[h0 + i] = x1 * c - x2 * sn;
        v[h0 + i + half] = x2 * c + x1 * sn;
      }
  };
  const int group = NH / NKV;
  for (int l = 0; l < L; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    std::vector<Vec> q(T), k(T), v(T);
    for (int t = 0; t < T; ++t) {
      const Vec h = rms(x[t], m.w(p + "input_layernorm.weight"));
      q[t] = linear(h, p + "self_attn.q_proj", NH * hd);
      k[t] = linear(h, p + "self_attn.k_proj", NKV * hd);
      v[t] = linear(h, p + "self_attn.v_proj", NKV * hd);
      rope(q[t], t);
      rope(k[t], t);
    }
    std::vector<Vec> y(T, Vec(static_cast<size_t>(NH * hd), 0.0));
    for (int h = 0; h < NH; ++h) {
      const int kv = h / group;
      for (int t = 0; t < T; ++t) {
        Vec sc(static_cast<size_t>(T), -INFINITY);
        double mx = -INFINITY;
        for (int u = 0; u <= t; ++u) {
          if (W > 0 && u <= t - W) continue;
          double dot = 0;
          for (int i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[u][kv * hd + i];
          sc[u] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, sc[u]);
        }
        double sum = 0;
        for (int u = 0; u <= t; ++u)
          if (sc[u] > -INFINITY) sum += (sc[u] = std::exp(sc[u] - mx));
        for (int u = 0; u <= t; ++u) {
          if (sc[u] == -INFINITY) continue;
          const double w = sc[u] / sum;
          r.att[((static_cast<size_t>(l) * NH + h) * T + t) * T + u] = w;
          for (int i = 0; i < hd; ++i) y[t][h * hd + i] += w * v[u][kv * hd + i];
        }
      }
    }
    for (int t = 0; t < T; ++t) {
      const Vec o = linear(y[t], p + "self_attn.o_proj", C);
      for (int i = 0; i < C; ++i) x[t][i] += o[i];
      const Vec h = rms(x[t], m.w(p + "post_attention_layernorm.weight"));
      const Vec g = linear(h, p + "mlp.gate_proj", F);
      const Vec u = linear(h, p + "mlp.up_proj", F);
      Vec a(static_cast<size_t>(F));
      for (int i = 0; i < F; ++i) a[i] = g[i] / (1 + std::exp(-g[i])) * u[i];
      const Vec d = linear(a, p + "mlp.down_proj", C);
      for (int i = 0; i < C; ++i) x[t][i] += d[i];
    }
  }
  const auto& head = s.tie ? E : m.w("lm_head.weight");
  r.logits.assign(static_cast<size_t>(T) * V, 0.0);
  for (int t = 0; t < T; ++t) {
    const Vec f = rms(x[t], m.w("model.norm.weight"));
    for (int vv = 0; vv < V; ++vv) {
      double dot = 0;
      for (int i = 0; i < C; ++i) dot += f[i] * head[static_cast<size_t>(vv) * C + i];
      r.logits[static_cast<size_t>(t) * V + vv] = dot;
    }
  }
  return r;
}

std::vector<int> llama_reference_greedy(const LlamaModel& m, std::vector<int> ids, int n,
                                        double tie, int& tied_at) {
  tied_at = -1;
  std::vector<int> out;
  const int V = m.vocab_size;
  for (int step = 0; step < n; ++step) {
    const LlamaReference r = llama_reference_forward(m, ids);
    const double* last = r.logits.data() + static_cast<size_t>(r.T - 1) * V;
    int best = 0;
    for (int v = 1; v < V; ++v)
      if (last[v] > last[best]) best = v;
    double second = -INFINITY;
    for (int v = 0; v < V; ++v)
      if (v != best) second = std::max(second, last[v]);
    if (tied_at < 0 && last[best] - second < tie) tied_at = step;
    out.push_back(best);
    ids.push_back(best);
    if (best == m.spec.eos) break;
  }
  return out;
}

}  // namespace attn::test
