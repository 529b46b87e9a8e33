// Test models and the independent oracles of the lm tests (see lm_fixture.h).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "lm_fixture.h"

#include <pcre2.h>
#include <sys/stat.h>

#include <Eigen/Core>
#include <climits>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "io/safetensors.h"

namespace attn::test {

const char* const kLmCorpus =
    "The teacher explains attention to the class. The students ask the teacher about the "
    "attention weights, and the teacher shows them the heads. They're looking at what the "
    "model sees: each token looks at the tokens before it. We'll see that the heads differ; "
    "one head looks at the previous token, another at the first token. Café, naïve, résumé: "
    "the model reads them byte by byte. In 2024 the class read 12 papers and 3 books.\n\n"
    "The end of the lesson is the beginning of the next lesson.";

std::vector<std::string> pcre2_pretokenize(const std::string& text) {
  // GPT-2's pattern with \s written as the White_Space property: tab to carriage return, NEL,
  // and the separators (Zs, Zl, Zp).
  static const char* pattern =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\t-\r\x{85}\p{Z}\p{L}\p{N}]+|)"
      R"([\t-\r\x{85}\p{Z}]+(?![^\t-\r\x{85}\p{Z}])|[\t-\r\x{85}\p{Z}]+)";
  int err = 0;
  PCRE2_SIZE err_at = 0;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP, &err, &err_at, nullptr);
  if (!re) throw std::runtime_error("pcre2_compile failed");
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const int rc =
        pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), at, 0, md, nullptr);
    if (rc < 0) throw std::runtime_error("pcre2_match failed");
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[0] != at || ov[1] <= ov[0]) throw std::runtime_error("pattern skipped text");
    out.push_back(text.substr(ov[0], ov[1] - ov[0]));
    at = ov[1];
  }
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  return out;
}

std::string test_byte_char(unsigned char b) {
  // GPT-2's bytes_to_unicode(): '!'..'~', '¡'..'¬' and '®'..'ÿ' stand for themselves; the other
  // 68 bytes, in order, for U+0100, U+0101, …
  int cp = b;
  if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
    int n = 0;
    for (int x = 0; x < b; ++x)
      if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) ++n;
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

namespace {

std::vector<std::string> byte_symbols(const std::string& piece) {
  std::vector<std::string> w;
  for (unsigned char c : piece) w.push_back(test_byte_char(c));
  return w;
}

// Merges every occurrence of (a, b), left to right.
std::vector<std::string> merge_pair(const std::vector<std::string>& w, const std::string& a,
                                    const std::string& b) {
  std::vector<std::string> out;
  for (size_t i = 0; i < w.size(); ++i) {
    if (i + 1 < w.size() && w[i] == a && w[i + 1] == b) {
      out.push_back(a + b);
      ++i;
    } else {
      out.push_back(w[i]);
    }
  }
  return out;
}

}  // namespace

TestVocab learn_test_vocab(const std::string& corpus, int n_merges) {
  TestVocab v;
  // GPT-2's id order for the bytes: the printable ones first, then the others.
  for (int pass = 0; pass < 2; ++pass)
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      if (printable == (pass == 0))
        v.tokens.push_back(test_byte_char(static_cast<unsigned char>(b)));
    }
  std::vector<std::vector<std::string>> words;
  for (const std::string& p : pcre2_pretokenize(corpus)) words.push_back(byte_symbols(p));
  for (int m = 0; m < n_merges; ++m) {
    std::vector<std::pair<std::string, std::string>> order;
    std::map<std::pair<std::string, std::string>, int> count;
    for (const auto& w : words)
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        auto key = std::make_pair(w[i], w[i + 1]);
        if (count[key]++ == 0) order.push_back(key);
      }
    int best = 1;
    std::pair<std::string, std::string> pick;
    for (const auto& key : order)
      if (count[key] > best) best = count[key], pick = key;
    if (best < 2) break;
    v.merges.push_back(pick);
    v.tokens.push_back(pick.first + pick.second);
    for (auto& w : words) w = merge_pair(w, pick.first, pick.second);
  }
  v.tokens.push_back("<|endoftext|>");
  return v;
}

std::vector<int> reference_encode(const TestVocab& v, const std::string& text) {
  std::map<std::pair<std::string, std::string>, int> rank;
  for (size_t r = 0; r < v.merges.size(); ++r) rank[v.merges[r]] = static_cast<int>(r);
  std::map<std::string, int> id;
  for (size_t i = 0; i < v.tokens.size(); ++i) id[v.tokens[i]] = static_cast<int>(i);
  std::vector<int> out;
  for (const std::string& piece : pcre2_pretokenize(text)) {
    std::vector<std::string> w = byte_symbols(piece);
    while (w.size() > 1) {
      int best = INT_MAX;
      std::pair<std::string, std::string> pick;
      for (size_t i = 0; i + 1 < w.size(); ++i) {
        auto it = rank.find({w[i], w[i + 1]});
        if (it != rank.end() && it->second < best) best = it->second, pick = it->first;
      }
      if (best == INT_MAX) break;
      w = merge_pair(w, pick.first, pick.second);
    }
    for (const auto& s : w) out.push_back(id.at(s));
  }
  return out;
}

TestModel make_test_model(const TestModelSpec& spec) {
  TestModel m;
  m.spec = spec;
  m.vocab = learn_test_vocab(kLmCorpus, spec.n_merges);
  m.vocab_size = static_cast<int>(m.vocab.tokens.size()) + spec.extra_vocab;
  const int64_t L = spec.n_layer, C = spec.n_embd, V = m.vocab_size, P = spec.n_positions;
  std::mt19937_64 rng(spec.seed);
  auto add = [&](const std::string& name, std::vector<int64_t> shape, double centre,
                 double spread) {
    size_t n = 1;
    for (auto d : shape) n *= static_cast<size_t>(d);
    std::uniform_real_distribution<double> u(centre - spread, centre + spread);
    std::vector<float> x(n);
    for (float& f : x) {
      f = static_cast<float>(u(rng));
      // Values as the file stores them, so the reference computes with exactly those.
      if (spec.dtype == "F16") f = static_cast<float>(Eigen::half(f));
      if (spec.dtype == "BF16") f = static_cast<float>(Eigen::bfloat16(f));
    }
    m.tensors[name] = {std::move(shape), std::move(x)};
  };
  const double wc = std::sqrt(3.0 / static_cast<double>(C)), wf = std::sqrt(3.0 / (4.0 * C));
  add("wte.weight", {V, C}, 0, 1.0);
  add("wpe.weight", {P, C}, 0, 0.5);
  for (int64_t l = 0; l < L; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {C}, 1, 0.3);
    add(h + "ln_1.bias", {C}, 0, 0.1);
    add(h + "attn.c_attn.weight", {C, 3 * C}, 0, 2 * wc);  // larger: peaked attention
    add(h + "attn.c_attn.bias", {3 * C}, 0, 0.1);
    add(h + "attn.c_proj.weight", {C, C}, 0, wc);
    add(h + "attn.c_proj.bias", {C}, 0, 0.1);
    add(h + "ln_2.weight", {C}, 1, 0.3);
    add(h + "ln_2.bias", {C}, 0, 0.1);
    add(h + "mlp.c_fc.weight", {C, 4 * C}, 0, wc);
    add(h + "mlp.c_fc.bias", {4 * C}, 0, 0.1);
    add(h + "mlp.c_proj.weight", {4 * C, C}, 0, wf);
    add(h + "mlp.c_proj.bias", {C}, 0, 0.1);
  }
  add("ln_f.weight", {C}, 1, 0.3);
  add("ln_f.bias", {C}, 0, 0.1);
  return m;
}

void write_test_model(const TestModel& m, const std::string& folder) {
  ::mkdir(folder.c_str(), 0755);
  nlohmann::json config = {{"model_type", "gpt2"},
                           {"n_layer", m.spec.n_layer},
                           {"n_head", m.spec.n_head},
                           {"n_embd", m.spec.n_embd},
                           {"n_positions", m.spec.n_positions},
                           {"n_ctx", m.spec.n_positions},
                           {"vocab_size", m.vocab_size},
                           {"layer_norm_epsilon", 1e-5},
                           {"activation_function", "gelu_new"}};
  std::ofstream(folder + "/config.json") << config.dump(2);
  // The extra buffer every GPT-2 checkpoint from PyTorch has, which loaders ignore.
  std::vector<float> bias_buffer(4, 1.0f);
  std::vector<SafetensorsTensor> tensors;
  tensors.push_back({m.spec.prefix + "h.0.attn.bias", "F32", {2, 2}, bias_buffer.data()});
  for (const auto& [name, t] : m.tensors)
    tensors.push_back({m.spec.prefix + name, m.spec.dtype, t.first, t.second.data()});
  std::string error;
  if (!write_safetensors(folder + "/model.safetensors", tensors, {{"format", "pt"}}, error))
    throw std::runtime_error(error);
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < m.vocab.tokens.size(); ++i) vocab[m.vocab.tokens[i]] = i;
  std::ofstream(folder + "/vocab.json") << vocab.dump();
  std::ofstream merges(folder + "/merges.txt");
  merges << "#version: 0.2\n";
  for (const auto& [a, b] : m.vocab.merges) merges << a << ' ' << b << '\n';
}

ReferenceForward reference_forward(const TestModel& m, const std::vector<int>& tokens) {
  const int L = m.spec.n_layer, NH = m.spec.n_head, C = m.spec.n_embd, V = m.vocab_size;
  const int T = static_cast<int>(tokens.size()), hs = C / NH, F = 4 * C;
  ReferenceForward r;
  r.T = T;
  r.att.assign(static_cast<size_t>(L) * NH * T * T, 0.0);
  r.q.assign(static_cast<size_t>(L) * T * C, 0.0);
  r.k = r.v = r.q;
  using Vec = std::vector<double>;
  std::vector<Vec> x(static_cast<size_t>(T), Vec(static_cast<size_t>(C)));
  const auto& wte = m.w("wte.weight");
  const auto& wpe = m.w("wpe.weight");
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < C; ++i)
      x[t][i] = static_cast<double>(wte[static_cast<size_t>(tokens[t]) * C + i]) +
                wpe[static_cast<size_t>(t) * C + i];
  auto layer_norm = [&](const Vec& in, const std::vector<float>& w, const std::vector<float>& b) {
    double mean = 0, var = 0;
    for (double v : in) mean += v;
    mean /= C;
    for (double v : in) var += (v - mean) * (v - mean);
    var /= C;
    Vec out(static_cast<size_t>(C));
    for (int i = 0; i < C; ++i) out[i] = (in[i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i];
    return out;
  };
  // y = in · W + b with W stored (rows = in's size, cols) row-major.
  auto linear = [](const Vec& in, const std::vector<float>& w, const std::vector<float>& b,
                   int cols) {
    Vec out(b.begin(), b.end());
    for (size_t i = 0; i < in.size(); ++i)
      for (int j = 0; j < cols; ++j) out[j] += in[i] * w[i * cols + j];
    return out;
  };
  for (int l = 0; l < L; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    std::vector<Vec> q(T), k(T), v(T);
    for (int t = 0; t < T; ++t) {
      const Vec a = layer_norm(x[t], m.w(h + "ln_1.weight"), m.w(h + "ln_1.bias"));
      const Vec qkv = linear(a, m.w(h + "attn.c_attn.weight"), m.w(h + "attn.c_attn.bias"), 3 * C);
      q[t].assign(qkv.begin(), qkv.begin() + C);
      k[t].assign(qkv.begin() + C, qkv.begin() + 2 * C);
      v[t].assign(qkv.begin() + 2 * C, qkv.end());
      for (int i = 0; i < C; ++i) {
        const size_t at = (static_cast<size_t>(l) * T + t) * C + i;
        r.q[at] = q[t][i];
        r.k[at] = k[t][i];
        r.v[at] = v[t][i];
      }
    }
    std::vector<Vec> y(T, Vec(static_cast<size_t>(C), 0.0));
    for (int hd = 0; hd < NH; ++hd)
      for (int t = 0; t < T; ++t) {
        Vec s(static_cast<size_t>(t + 1));
        double mx = -INFINITY;
        for (int u = 0; u <= t; ++u) {
          double dot = 0;
          for (int i = 0; i < hs; ++i) dot += q[t][hd * hs + i] * k[u][hd * hs + i];
          s[u] = dot / std::sqrt(static_cast<double>(hs));
          mx = std::max(mx, s[u]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int u = 0; u <= t; ++u) {
          const double w = s[u] / sum;
          r.att[((static_cast<size_t>(l) * NH + hd) * T + t) * T + u] = w;
          for (int i = 0; i < hs; ++i) y[t][hd * hs + i] += w * v[u][hd * hs + i];
        }
      }
    for (int t = 0; t < T; ++t) {
      const Vec p = linear(y[t], m.w(h + "attn.c_proj.weight"), m.w(h + "attn.c_proj.bias"), C);
      for (int i = 0; i < C; ++i) x[t][i] += p[i];
      const Vec a = layer_norm(x[t], m.w(h + "ln_2.weight"), m.w(h + "ln_2.bias"));
      Vec f = linear(a, m.w(h + "mlp.c_fc.weight"), m.w(h + "mlp.c_fc.bias"), F);
      for (double& z : f)
        z = 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
      const Vec o = linear(f, m.w(h + "mlp.c_proj.weight"), m.w(h + "mlp.c_proj.bias"), C);
      for (int i = 0; i < C; ++i) x[t][i] += o[i];
    }
  }
  r.logits.assign(static_cast<size_t>(T) * V, 0.0);
  for (int t = 0; t < T; ++t) {
    const Vec f = layer_norm(x[t], m.w("ln_f.weight"), m.w("ln_f.bias"));
    for (int vv = 0; vv < V; ++vv) {
      double dot = 0;
      for (int i = 0; i < C; ++i) dot += f[i] * wte[static_cast<size_t>(vv) * C + i];
      r.logits[static_cast<size_t>(t) * V + vv] = dot;
    }
  }
  return r;
}

}  // namespace attn::test
