// `attention-lab lm …`, `trace/explain/export --model` on Llama, Mistral and Qwen2 folders in the
// Hugging Face layout (docs: cli.md, "Today's model folders"), end to end through the command
// line: ids against the tokenizers library's own (tests/hf_tokenizer_reference.inc), attention
// weights, logits and greedy continuations against the double-precision reference of
// tests/support/llama_fixture.cpp; damaged folders give exit 2 naming the file and field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "llama_fixture.h"
#include "lm_fixture.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::read_bytes;
using test::run_cli;
using test::temp_path;

constexpr double kTol = 1e-4;
constexpr int kGenerate = 8;

std::string sh(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A parsed float32 .npy (parsed here, independently of io/npy.cpp).
struct Npy {
  std::vector<size_t> shape;
  std::vector<float> data;
};
Npy parse_npy_f32(const std::string& b) {
  Npy n;
  if (b.size() < 10 || b.substr(0, 6) != "\x93NUMPY") {
    ADD_FAILURE() << "not a .npy file";
    return n;
  }
  const bool v1 = b[6] == 1;
  const size_t hlen =
      v1 ? (static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8))
         : (static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8) |
            (static_cast<size_t>(static_cast<unsigned char>(b[10])) << 16));
  const size_t start = (v1 ? 10 : 12) + hlen;
  const std::string header = b.substr(v1 ? 10 : 12, hlen);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  const std::string shape = header.substr(header.find("'shape': ("));
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.begin() + shape.find(')'), num);
       it != std::sregex_iterator(); ++it)
    n.shape.push_back(std::stoul(it->str()));
  n.data.resize((b.size() - start) / 4);
  std::memcpy(n.data.data(), b.data() + start, n.data.size() * 4);
  return n;
}

// The ids of `ID<TAB>…` lines (a token's raw newline, should one be printed, cannot fake a line:
// only lines that start with digits and a tab count).
std::vector<int> ids_of_lines(const std::string& out) {
  std::vector<int> ids;
  std::istringstream in(out);
  std::string line;
  static const std::regex re("^([0-9]+)\t.*");
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_match(line, m, re)) ids.push_back(std::stoi(m[1].str()));
  return ids;
}

// The second column of the line of `id`, "" when none.
std::string token_column(const std::string& out, size_t line_no) {
  std::istringstream in(out);
  std::string line;
  for (size_t i = 0; std::getline(in, line); ++i)
    if (i == line_no) {
      const size_t a = line.find('\t');
      if (a == std::string::npos) return "";
      const size_t b = line.find('\t', a + 1);
      return line.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
    }
  return "";
}

struct Folder {
  std::string name, text;
  test::LlamaSpec spec;
};

// The folders every end-to-end test runs on; between them: the three architectures, F32/F16/BF16,
// one file and shards, GQA (4/2, 6/2), MQA (4/1) and MHA (4/4), head_dim ≠ hidden/heads, RoPE
// plain, llama3 and linear, tied and untied heads, a window smaller than the text and a null one,
// Qwen2's biases, padded vocabulary and ignored sliding_window, and each tokenizer style.
std::vector<Folder> folders() {
  std::vector<Folder> f;
  {
    Folder a{"llama_sp_f32", "it's we'll THEY'RE I'M", {}};
    a.spec.arch = "llama";
    a.spec.tokenizer = "llama2";  // SentencePiece style: <s> BOS, byte fallback
    a.spec.bos = 1;
    a.spec.eos = 2;
    a.spec.seed = 11;
    f.push_back(a);
  }
  {
    Folder b{"llama3_bf16_sharded_mqa", "the  quick\n\nbrown   fox", {}};
    b.spec.arch = "llama";
    b.spec.tokenizer = "llama3";
    b.spec.dtype = "BF16";
    b.spec.sharded = true;
    b.spec.n_kv_head = 1;
    b.spec.head_dim = 6;  // hidden 16 / 4 heads would be 4
    b.spec.tie = true;
    // theta 100, head_dim 6: wavelengths 6.3, 29 and 135 against original 32 (high-frequency
    // bound 8, low-frequency bound 32): one frequency kept, one blended, one divided.
    b.spec.rope_theta = 100;
    b.spec.rope_scaling = "llama3";
    b.spec.rope_original_max = 32;
    b.spec.bos = 291;
    b.spec.eos = 292;
    b.spec.seed = 24;
    f.push_back(b);
  }
  {
    Folder c{"mistral_f16_window", "the  quick\n\nbrown   fox", {}};
    c.spec.arch = "mistral";
    c.spec.tokenizer = "llama2";
    c.spec.dtype = "F16";
    c.spec.head_dim = 8;
    c.spec.sliding_window = 4;
    c.spec.rope_scaling = "linear";
    c.spec.rope_factor = 2;
    c.spec.bos = 1;
    c.spec.eos = 2;
    c.spec.seed = 13;
    f.push_back(c);
  }
  {
    Folder d{"qwen2_f32_sharded_bias", "it's we'll THEY'RE I'M", {}};
    d.spec.arch = "qwen2";
    d.spec.tokenizer = "qwen2";
    d.spec.hidden = 24;
    d.spec.intermediate = 32;
    d.spec.n_head = 6;
    d.spec.n_kv_head = 2;
    d.spec.qkv_bias = true;
    d.spec.extra_vocab = 21;
    d.spec.sharded = true;
    d.spec.tie = true;
    d.spec.sliding_window = 4;  // written, but use_sliding_window is false: no window
    d.spec.use_sliding_window = false;
    d.spec.rope_theta = 1e6;
    d.spec.rms_eps = 1e-6;
    d.spec.bos = 290;
    d.spec.eos = 290;
    d.spec.seed = 15;
    f.push_back(d);
  }
  {
    Folder e{"mistral_bf16_mha_no_window", "it's we'll THEY'RE I'M", {}};
    e.spec.arch = "mistral";
    e.spec.tokenizer = "smollm2";  // Digits + ByteLevel, no BOS
    e.spec.dtype = "BF16";
    e.spec.n_kv_head = 4;       // one K/V head per query head
    e.spec.sliding_window = 0;  // null: no window
    e.spec.bos = 0;
    e.spec.eos = 0;
    e.spec.seed = 16;
    f.push_back(e);
  }
  return f;
}

struct Built {
  Folder f;
  test::LlamaModel model;
  std::string dir;
  std::vector<int> ids;
  test::LlamaReference ref;
};

const Built& built(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Built>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  for (const Folder& f : folders()) {
    if (f.name != name) continue;
    auto b = std::make_unique<Built>();
    b->f = f;
    b->model = test::make_llama_model(f.spec);
    b->dir = temp_path(name);
    test::write_llama_model(b->model, b->dir);
    b->ids = b->model.tok.ids_of(f.text);
    b->ref = test::llama_reference_forward(b->model, b->ids);
    return *(cache[name] = std::move(b));
  }
  throw std::runtime_error("no folder " + name);
}

class LlamaCli : public ::testing::TestWithParam<std::string> {
 protected:
  const Built& b() const { return built(GetParam()); }
  std::string model_text() const { return " --model " + sh(b().dir) + " --text " + sh(b().f.text); }
};

TEST_P(LlamaCli, TheReferenceModelIsNotDegenerate) {
  // The test is only as strong as its model: attention far from uniform, logits finite.
  const Built& x = b();
  const size_t T = static_cast<size_t>(x.ref.T);
  EXPECT_GE(T, 8u);
  // Rows that see at least 4 keys: most have a weight above twice the uniform one.
  int rows = 0, peaked = 0;
  for (size_t row = 0; row < x.ref.att.size() / T; ++row) {
    int visible = 0;
    double top = 0;
    for (size_t u = 0; u < T; ++u) {
      const double w = x.ref.att[row * T + u];
      visible += w > 0;
      top = std::max(top, w);
    }
    if (visible < 4) continue;
    ++rows;
    peaked += top > 2.0 / visible;
  }
  EXPECT_GT(peaked, rows / 2) << peaked << " of " << rows;
  for (double l : x.ref.logits) ASSERT_TRUE(std::isfinite(l));
}

TEST_P(LlamaCli, TokensAreTheLibrarysIdsWithItsBos) {
  const Built& x = b();
  const auto r = run_cli("lm tokens" + model_text());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ids_of_lines(r.out), x.ids) << r.out;
  const int bos = x.f.spec.tokenizer == "llama2" ? 1 : x.f.spec.tokenizer == "llama3" ? 291 : -1;
  if (bos >= 0) {
    ASSERT_FALSE(x.ids.empty());
    EXPECT_EQ(x.ids[0], bos);
    EXPECT_EQ(token_column(r.out, 0), x.model.tok.tokens.at(bos)) << r.out;
  } else {
    for (int id : ids_of_lines(r.out)) EXPECT_NE(id, x.model.tok.id_of("<|endoftext|>"));
  }
  // Every other token's column is tokenizer.json's spelling, where it has no control character.
  const std::vector<int> got = ids_of_lines(r.out);
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string& t = x.model.tok.tokens.at(got[i]);
    bool plain = true;
    for (size_t c = 0; c < t.size(); ++c) {
      const unsigned char u = static_cast<unsigned char>(t[c]);
      if (u < 0x20 || u == 0x7f ||
          (u == 0xc2 && c + 1 < t.size() && static_cast<unsigned char>(t[c + 1]) < 0xa0))
        plain = false;
    }
    if (plain) {
      EXPECT_EQ(token_column(r.out, i), t) << i;
    }
  }
}

TEST_P(LlamaCli, AttentionOfEveryLayerAndQueryHead) {
  const Built& x = b();
  const std::string out = temp_path("att.npy");
  const auto r = run_cli("lm attention" + model_text() + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const Npy n = parse_npy_f32(read_bytes(out));
  const size_t T = x.ids.size();
  ASSERT_EQ(n.shape, (std::vector<size_t>{static_cast<size_t>(x.f.spec.n_layer),
                                          static_cast<size_t>(x.f.spec.n_head), T, T}));
  ASSERT_EQ(n.data.size(), x.ref.att.size());
  for (size_t i = 0; i < n.data.size(); ++i) ASSERT_NEAR(n.data[i], x.ref.att[i], kTol) << i;
}

TEST_P(LlamaCli, NextTokensAndLogits) {
  const Built& x = b();
  const std::string logits = temp_path("logits.npy");
  const auto r = run_cli("lm next" + model_text() + " --top 5 --logits " + logits);
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t V = static_cast<size_t>(x.model.vocab_size), T = x.ids.size();
  const double* last = x.ref.logits.data() + (T - 1) * V;
  const Npy n = parse_npy_f32(read_bytes(logits));
  ASSERT_EQ(n.shape, (std::vector<size_t>{V}));
  ASSERT_EQ(n.data.size(), V);
  for (size_t v = 0; v < V; ++v)
    ASSERT_NEAR(n.data[v], last[v], kTol * std::max(1.0, std::fabs(last[v]))) << v;
  std::vector<double> p(V);
  double mx = -1e300, sum = 0;
  for (size_t v = 0; v < V; ++v) mx = std::max(mx, last[v]);
  for (size_t v = 0; v < V; ++v) sum += p[v] = std::exp(last[v] - mx);
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  double previous = 2;
  while (std::getline(lines, line)) {
    const size_t a = line.find('\t'), c = line.rfind('\t');
    ASSERT_NE(a, std::string::npos) << line;
    const int id = std::stoi(line.substr(0, a));
    ASSERT_GE(id, 0);
    ASSERT_LT(static_cast<size_t>(id), V);
    const double prob = std::stod(line.substr(c + 1));
    EXPECT_NEAR(prob, p[static_cast<size_t>(id)] / sum, kTol) << line;
    EXPECT_LE(prob, previous + 1e-12);
    previous = prob;
    ++count;
  }
  EXPECT_EQ(count, 5);
}

TEST_P(LlamaCli, GreedyGenerationIsTheReferenceContinuation) {
  const Built& x = b();
  const auto r =
      run_cli("lm generate" + model_text() + " --tokens " + std::to_string(kGenerate) + " --ids");
  ASSERT_EQ(r.status, 0) << r.err;
  int tied_at = -1;
  const std::vector<int> want =
      test::llama_reference_greedy(x.model, x.ids, kGenerate, kTol, tied_at);
  const std::vector<int> got = ids_of_lines(r.out);
  // Each line is ID<TAB>TOKEN.
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_NE(line.find('\t'), std::string::npos) << line;
  const size_t compare =
      tied_at >= 0 ? static_cast<size_t>(tied_at) : want.size();  // up to a near-tie
  for (size_t i = 0; i < compare && i < got.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "step " << i << "\n" << r.out;
  if (tied_at < 0) {
    // Stopping at eos may or may not print the eos itself.
    const bool ends_eos = !want.empty() && want.back() == x.f.spec.eos;
    if (ends_eos)
      EXPECT_TRUE(got.size() == want.size() || got.size() + 1 == want.size()) << r.out;
    else
      EXPECT_EQ(got.size(), want.size()) << r.out;
  } else {
    EXPECT_GE(got.size(), compare);
  }
}

TEST_P(LlamaCli, GenerationPrintsTextAndSamplingIsReproducible) {
  const auto text = run_cli("lm generate" + model_text() + " --tokens 5");
  EXPECT_EQ(text.status, 0) << text.err;
  const std::string sample =
      "lm generate" + model_text() + " --tokens 6 --temperature 0.8 --top-k 5 --seed 3 --ids";
  const auto s1 = run_cli(sample), s2 = run_cli(sample);
  ASSERT_EQ(s1.status, 0) << s1.err;
  ASSERT_EQ(s2.status, 0) << s2.err;
  EXPECT_EQ(s1.out, s2.out);
  const std::vector<int> ids = ids_of_lines(s1.out);
  EXPECT_GE(ids.size(), 1u) << s1.out;
  EXPECT_LE(ids.size(), 6u) << s1.out;
  for (int id : ids) EXPECT_LT(id, b().model.vocab_size);
  const std::string text_sample =
      "lm generate" + model_text() + " --tokens 6 --temperature 0.8 --top-k 5 --seed 3";
  const auto t1 = run_cli(text_sample), t2 = run_cli(text_sample);
  EXPECT_EQ(t1.status, 0) << t1.err;
  EXPECT_EQ(t1.out, t2.out);
}

TEST_P(LlamaCli, TraceExplainAndExportOfAGroupedHead) {
  const Built& x = b();
  const int layer = 1, head = 3;
  const int kv = head / (x.f.spec.n_head / x.f.spec.n_kv_head);
  const std::string args = " --model " + sh(x.dir) + " --text " + sh(x.f.text) + " --layer " +
                           std::to_string(layer) + " --head " + std::to_string(head);
  const auto r = run_cli("trace" + args);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const size_t T = x.ids.size();
  ASSERT_EQ(j["query_tokens"].size(), T);
  bool found = false;
  int rope_at = -1, scores_at = -1, index = 0;
  for (const auto& step : j["steps"]) {
    if (step["id"] == "rope") rope_at = index;
    if (step["id"] == "scores" && scores_at < 0) scores_at = index;
    ++index;
    if (step["id"] != "weights") continue;
    found = true;
    const auto& heads = step["heads"];
    ASSERT_GE(heads.size(), 1u);
    nlohmann::json h = heads[0];
    for (const auto& candidate : heads)
      if (heads.size() > 1 && candidate.value("head", -1) == head) h = candidate;
    const auto& data = h["data"];
    ASSERT_EQ(data.size(), T);
    const size_t NH = static_cast<size_t>(x.f.spec.n_head);
    for (size_t t = 0; t < T; ++t)
      for (size_t u = 0; u < T; ++u)
        ASSERT_NEAR(data[t][u].is_null() ? 0.0 : data[t][u].get<double>(),
                    x.ref.att[((layer * NH + head) * T + t) * T + u], kTol)
            << t << "," << u;
  }
  EXPECT_TRUE(found);
  // cli.md: a RoPE model's trace has a `rope` stage between the inputs and `scores`.
  EXPECT_GE(rope_at, 0) << "no rope stage";
  EXPECT_LT(rope_at, scores_at);
  // …and names the K/V head the query head shares.
  const std::regex shared("kv_head\"?\\s*[:=]\\s*" + std::to_string(kv) + "\\b|K/V head\\D{0,12}" +
                          std::to_string(kv) + "\\b");
  EXPECT_TRUE(std::regex_search(r.out, shared)) << "K/V head " << kv << " not named";

  const auto e = run_cli("explain" + args + " --query 3");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_FALSE(e.out.empty());

  const std::string png = temp_path("head.png");
  const auto p = run_cli("export" + args + " --step weights --out " + png);
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(read_bytes(png).substr(1, 3), "PNG");
}

INSTANTIATE_TEST_SUITE_P(Folders, LlamaCli,
                         ::testing::Values("llama_sp_f32", "llama3_bf16_sharded_mqa",
                                           "mistral_f16_window", "qwen2_f32_sharded_bias",
                                           "mistral_bf16_mha_no_window"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ---- the tokenizers, every text the library was run on ----

TEST(LlamaTokens, EveryLibraryCaseOfEachStyle) {
  // One folder per tokenizer style; each text's ids as the tokenizers library gave them (special
  // tokens typed in the text are those tokens; BOS where the post-processor adds it).
  for (const char* style : {"llama2", "llama3", "qwen2", "smollm2"}) {
    SCOPED_TRACE(style);
    test::LlamaSpec spec;
    spec.tokenizer = style;
    spec.n_layer = 1;
    spec.seed = 21;
    const test::LlamaModel m = test::make_llama_model(spec);
    const std::string dir = temp_path(std::string("tokens-") + style);
    test::write_llama_model(m, dir);
    int checked = 0, special = 0;
    for (const auto& [text, ids] : m.tok.cases) {
      if (text.empty()) continue;  // "--text: empty" is refused
      SCOPED_TRACE("text: \"" + text + "\"");
      const auto r = run_cli("lm tokens --model " + sh(dir) + " --text " + sh(text));
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(ids_of_lines(r.out), ids) << r.out;
      const bool bos = std::string(style) == "llama2" || std::string(style) == "llama3";
      if (bos) {
        EXPECT_EQ(ids.front(), std::string(style) == "llama2" ? 1 : 291);
      }
      if (text.find("<|") != std::string::npos || text.find("<s>") != std::string::npos ||
          text.find("</s>") != std::string::npos)
        ++special;
      ++checked;
    }
    EXPECT_GT(checked, 20);
    EXPECT_GT(special, 0);
  }
}

// ---- generation stops at the model's end-of-text token ----

TEST(LlamaGenerate, StopsEarlyAtEos) {
  test::LlamaSpec spec;
  spec.arch = "llama";
  spec.tokenizer = "smollm2";  // SmolLM2: <|endoftext|> (id 0) ends the text
  spec.bos = 0;
  spec.eos = 0;
  spec.force_eos = true;
  spec.seed = 31;
  const test::LlamaModel m = test::make_llama_model(spec);
  const std::string dir = temp_path("eos-model");
  test::write_llama_model(m, dir);
  const std::string text = "hello world";
  int tied_at = -1;
  const std::vector<int> want =
      test::llama_reference_greedy(m, m.tok.ids_of(text), 10, kTol, tied_at);
  ASSERT_EQ(want, std::vector<int>{0}) << "the fixture must make eos the first greedy token";
  const auto r =
      run_cli("lm generate --model " + sh(dir) + " --text " + sh(text) + " --tokens 10 --ids");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<int> got = ids_of_lines(r.out);
  EXPECT_LT(got.size(), 10u) << r.out;
  EXPECT_LE(got.size(), 1u) << r.out;
  for (int id : got) EXPECT_EQ(id, 0);
  const auto t = run_cli("lm generate --model " + sh(dir) + " --text " + sh(text) + " --tokens 10");
  EXPECT_EQ(t.status, 0) << t.err;
}

// ---- damaged folders ----

struct Damage {
  const char* what;
  bool sharded;
  std::function<void(test::LlamaModel&)> before;  // changes the model before it is written
  std::function<void(const std::string&)> after;  // changes the written folder
  std::vector<std::vector<std::string>> expect;   // each group: at least one in the error
  bool tokenizer = false;                         // lm tokens fails too
};

nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_bytes(path));
}
void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream(path) << j.dump(2);
}
void edit_config(const std::string& dir, const std::function<void(nlohmann::json&)>& f) {
  nlohmann::json c = read_json(dir + "/config.json");
  f(c);
  write_json(dir + "/config.json", c);
}

TEST(LlamaDamaged, FoldersAreExit2NamingFileAndField) {
  const std::vector<Damage> cases = {
      {"missing tokenizer.json",
       false,
       nullptr,
       [](const std::string& d) { std::remove((d + "/tokenizer.json").c_str()); },
       {{"tokenizer.json"}},
       true},
      {"heads not divisible by K/V heads",
       false,
       nullptr,
       [](const std::string& d) {
         edit_config(d, [](nlohmann::json& c) { c["num_key_value_heads"] = 3; });
       },
       {{"config.json"}, {"num_key_value_heads"}}},
      {"rope_type yarn",
       false,
       nullptr,
       [](const std::string& d) {
         edit_config(d, [](nlohmann::json& c) {
           c["rope_scaling"] = {
               {"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32}};
         });
       },
       {{"config.json"}, {"rope_type"}, {"yarn"}}},
      {"another architecture",
       false,
       nullptr,
       [](const std::string& d) {
         edit_config(d, [](nlohmann::json& c) {
           c["architectures"] = {"FalconForCausalLM"};
           c["model_type"] = "falcon";
         });
       },
       {{"config.json"}, {"architectures", "model_type"}}},
      {"gelu",
       false,
       nullptr,
       [](const std::string& d) {
         edit_config(d, [](nlohmann::json& c) { c["hidden_act"] = "gelu"; });
       },
       {{"config.json"}, {"hidden_act"}}},
      {"shard missing",
       true,
       nullptr,
       [](const std::string& d) { std::remove((d + "/model-00002-of-00002.safetensors").c_str()); },
       {{"model-00002-of-00002.safetensors"}}},
      {"tensor missing",
       false,
       [](test::LlamaModel& m) { m.tensors.erase("model.layers.1.mlp.up_proj.weight"); },
       nullptr,
       {{"model.layers.1.mlp.up_proj.weight"}}},
      {"tensor of the wrong shape",
       false,
       [](test::LlamaModel& m) {
         auto& t = m.tensors.at("model.layers.0.self_attn.k_proj.weight");
         t.first[0] += 2;
         t.second.resize(static_cast<size_t>(t.first[0] * t.first[1]), 0.5f);
       },
       nullptr,
       {{"model.layers.0.self_attn.k_proj.weight"}}},
      {"merge of a symbol not in the vocabulary",
       false,
       nullptr,
       [](const std::string& d) {
         nlohmann::json t = read_json(d + "/tokenizer.json");
         t["model"]["merges"].push_back("\xce\xa9 \xcf\x89");  // "Ω ω": neither is a token
         write_json(d + "/tokenizer.json", t);
       },
       {{"tokenizer.json"}, {"merges"}},
       true},
      {"NaN weight",
       false,
       [](test::LlamaModel& m) {
         m.tensors.at("model.layers.0.mlp.gate_proj.weight").second[5] = std::nanf("");
       },
       nullptr,
       {{"model.layers.0.mlp.gate_proj.weight"}}},
  };
  for (const Damage& c : cases) {
    SCOPED_TRACE(c.what);
    test::LlamaSpec spec;
    spec.sharded = c.sharded;
    spec.bos = 1;
    spec.eos = 2;
    test::LlamaModel m = test::make_llama_model(spec);
    if (c.before) c.before(m);
    const std::string dir = temp_path("damaged-llama");
    test::write_llama_model(m, dir);
    if (c.after) c.after(dir);
    const std::string npy = temp_path("out.npy"), logits = temp_path("logits.npy");
    std::vector<std::string> commands = {
        "lm attention --model " + sh(dir) + " --text hello --out " + npy,
        "lm next --model " + sh(dir) + " --text hello --logits " + logits,
        "lm generate --model " + sh(dir) + " --text hello --tokens 3"};
    if (c.tokenizer) commands.push_back("lm tokens --model " + sh(dir) + " --text hello");
    for (const std::string& args : commands) {
      const auto r = run_cli(args);
      EXPECT_EQ(r.status, 2) << args << ": " << r.err;
      EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
      for (const auto& group : c.expect) {
        bool any = false;
        for (const std::string& s : group) any = any || r.err.find(s) != std::string::npos;
        EXPECT_TRUE(any) << args << ": expected \"" << group[0] << "\" in: " << r.err;
      }
      EXPECT_EQ(r.out, "") << args;
    }
    EXPECT_FALSE(file_exists(npy));
    EXPECT_FALSE(file_exists(logits));
  }
}

// ---- GPT-2 folders keep working (test_lm_cli covers them in full) ----

TEST(LlamaGpt2, Gpt2FolderStillTokenizes) {
  test::TestModelSpec spec;
  const test::TestModel m = test::make_test_model(spec);
  const std::string dir = temp_path("gpt2-still");
  test::write_test_model(m, dir);
  const std::string text = "the teacher's heads";
  const auto r = run_cli("lm tokens --model " + sh(dir) + " --text " + sh(text));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ids_of_lines(r.out), test::reference_encode(m.vocab, text));
}

}  // namespace
}  // namespace attn
