// `attention-lab lm …` and `trace/explain/export --model` end to end on test folders, against the
// double-precision reference; and every damaged folder or bad flag giving exit 2, "error: …"
// naming the file, nothing on standard output and no output file.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

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
const std::string kText = "The teacher explains attention, and the teacher shows the heads.";

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
  EXPECT_EQ(b.substr(0, 6), "\x93NUMPY");
  const size_t hlen = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  const std::string header = b.substr(10, hlen);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos) << header;
  std::smatch m;
  const std::string shape = header.substr(header.find("'shape': ("));
  std::regex num("[0-9]+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.begin() + shape.find(')'), num);
       it != std::sregex_iterator(); ++it)
    n.shape.push_back(std::stoul(it->str()));
  n.data.resize((b.size() - 10 - hlen) / 4);
  std::memcpy(n.data.data(), b.data() + 10 + hlen, n.data.size() * 4);
  return n;
}

class LmCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::TestModelSpec spec;
    spec.n_layer = 2;
    spec.n_head = 3;
    spec.n_embd = 18;
    spec.dtype = "F16";
    model = new test::TestModel(test::make_test_model(spec));
    folder = new std::string(temp_path("cli-model"));
    test::write_test_model(*model, *folder);
    ids = new std::vector<int>(test::reference_encode(model->vocab, kText));
    ref = new test::ReferenceForward(test::reference_forward(*model, *ids));
  }
  static void TearDownTestSuite() {
    delete model;
    delete folder;
    delete ids;
    delete ref;
  }
  static test::TestModel* model;
  static std::string* folder;
  static std::vector<int>* ids;
  static test::ReferenceForward* ref;
};
test::TestModel* LmCli::model;
std::string* LmCli::folder;
std::vector<int>* LmCli::ids;
test::ReferenceForward* LmCli::ref;

TEST_F(LmCli, TokensAreTheReferenceEncoding) {
  const auto r = run_cli("lm tokens --model " + sh(*folder) + " --text " + sh(kText));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expect;
  for (int id : *ids)
    expect += std::to_string(id) + "\t" + model->vocab.tokens[static_cast<size_t>(id)] + "\n";
  EXPECT_EQ(r.out, expect);
}

TEST_F(LmCli, AttentionOfEveryLayerAndHead) {
  const std::string out = temp_path("att.npy");
  const auto r =
      run_cli("lm attention --model " + sh(*folder) + " --text " + sh(kText) + " --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const Npy n = parse_npy_f32(read_bytes(out));
  const size_t T = ids->size();
  ASSERT_EQ(n.shape, (std::vector<size_t>{2, 3, T, T}));
  ASSERT_EQ(n.data.size(), ref->att.size());
  for (size_t i = 0; i < n.data.size(); ++i) ASSERT_NEAR(n.data[i], ref->att[i], kTol) << i;
}

TEST_F(LmCli, NextTokensAndLogits) {
  const std::string logits = temp_path("logits.npy");
  const auto r = run_cli("lm next --model " + sh(*folder) + " --text " + sh(kText) +
                         " --top 4 --logits " + logits);
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t V = static_cast<size_t>(model->vocab_size), T = ids->size();
  std::vector<double> p(V);
  double mx = -1e300, sum = 0;
  for (size_t v = 0; v < V; ++v) mx = std::max(mx, ref->logits[(T - 1) * V + v]);
  for (size_t v = 0; v < V; ++v) sum += p[v] = std::exp(ref->logits[(T - 1) * V + v] - mx);
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  double previous = 2;
  while (std::getline(lines, line)) {
    const size_t a = line.find('\t'), b = line.rfind('\t');
    const int id = std::stoi(line.substr(0, a));
    const double prob = std::stod(line.substr(b + 1));
    EXPECT_NEAR(prob, p[static_cast<size_t>(id)] / sum, kTol) << line;
    EXPECT_LE(prob, previous);
    EXPECT_EQ(line.substr(a + 1, b - a - 1), static_cast<size_t>(id) < model->vocab.tokens.size()
                                                 ? model->vocab.tokens[static_cast<size_t>(id)]
                                                 : "<no token " + std::to_string(id) + ">");
    previous = prob;
    ++count;
  }
  EXPECT_EQ(count, 4);
  const Npy n = parse_npy_f32(read_bytes(logits));
  ASSERT_EQ(n.shape, (std::vector<size_t>{V}));
  for (size_t v = 0; v < V; ++v) ASSERT_NEAR(n.data[v], ref->logits[(T - 1) * V + v], kTol);
}

TEST_F(LmCli, TraceExplainAndExportOfARealHead) {
  const std::string head =
      " --model " + sh(*folder) + " --text " + sh(kText) + " --layer 1 --head 2";
  const auto r = run_cli("trace" + head);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const size_t T = ids->size();
  ASSERT_EQ(j["query_tokens"].size(), T);
  bool found = false;
  for (const auto& step : j["steps"]) {
    if (step["id"] != "weights") continue;
    found = true;
    const auto& data = step["heads"][0]["data"];
    for (size_t t = 0; t < T; ++t)
      for (size_t u = 0; u < T; ++u)
        ASSERT_NEAR(data[t][u].get<double>(), ref->att[((1 * 3 + 2) * T + t) * T + u], kTol);
  }
  EXPECT_TRUE(found);

  const auto e = run_cli("explain" + head + " --query 3");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("causal"), std::string::npos) << e.out;

  const std::string png = temp_path("head.png");
  const auto x = run_cli("export" + head + " --step weights --out " + png);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(read_bytes(png).substr(1, 3), "PNG");
}

struct BadRun {
  const char* what;
  std::string args;
  const char* expect;
};

TEST_F(LmCli, BadFlagsAreExit2) {
  const std::string m = " --model " + sh(*folder);
  const std::vector<BadRun> runs = {
      {"layer out of range", "trace" + m + " --text hi --layer 2", "--layer: 2 is out of range"},
      {"head out of range", "explain" + m + " --text hi --head 3 --query 0", "--head: 3"},
      {"empty text", "lm next" + m + " --text ''", "--text: empty"},
      {"bad utf-8", "lm tokens" + m + " --text \"$(printf '\\377')\"", "not valid UTF-8"},
      {"too long", "lm next" + m + " --text " + sh(std::string(200, 'x') + " y z"),
       "more than the model's n_positions"},
      {"no such model", "lm tokens --model /no/such/model --text hi", "neither a folder"},
      {"text without model", "trace --example fear-is --text hi", "--text"},
      {"model and example", "trace --example fear-is" + m + " --text hi", "--model"},
  };
  for (const BadRun& b : runs) {
    const auto r = run_cli(b.args);
    EXPECT_EQ(r.status, 2) << b.what << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << b.what << ": " << r.err;
    EXPECT_NE(r.err.find(b.expect), std::string::npos) << b.what << ": " << r.err;
    EXPECT_EQ(r.out, "") << b.what;
  }
}

TEST_F(LmCli, DamagedFoldersAreExit2WithNoOutput) {
  struct Case {
    const char* what;
    std::function<void(const std::string&)> damage;
    const char* file;
  };
  auto write = [](const std::string& p, const std::string& t) { std::ofstream(p) << t; };
  const std::vector<Case> cases = {
      {"truncated",
       [&](const std::string& d) {
         const std::string t = read_bytes(d + "/model.safetensors");
         write(d + "/model.safetensors", t.substr(0, t.size() - 10));
       },
       "model.safetensors"},
      {"junk", [&](const std::string& d) { write(d + "/model.safetensors", std::string(64, 'j')); },
       "model.safetensors"},
      {"shape disagrees",
       [&](const std::string& d) {
         std::string t = read_bytes(d + "/config.json");
         t.replace(t.find("\"n_embd\": 18"), 12, "\"n_embd\": 12");
         write(d + "/config.json", t);
       },
       "model.safetensors"},
      {"n_embd not divisible",
       [&](const std::string& d) {
         std::string t = read_bytes(d + "/config.json");
         t.replace(t.find("\"n_head\": 3"), 11, "\"n_head\": 4");
         write(d + "/config.json", t);
       },
       "config.json"},
      {"missing merges", [](const std::string& d) { std::remove((d + "/merges.txt").c_str()); },
       "merges.txt"},
      {"missing vocab", [](const std::string& d) { std::remove((d + "/vocab.json").c_str()); },
       "vocab.json"},
      {"missing config", [](const std::string& d) { std::remove((d + "/config.json").c_str()); },
       "config.json"},
      {"missing weights",
       [](const std::string& d) { std::remove((d + "/model.safetensors").c_str()); },
       "model.safetensors"},
  };
  for (const Case& c : cases) {
    const std::string dir = temp_path("damaged-cli");
    test::write_test_model(*model, dir);
    c.damage(dir);
    const std::string npy = temp_path("out.npy"), logits = temp_path("logits.npy"),
                      png = temp_path("out.png");
    for (const std::string& args :
         {"lm attention --model " + dir + " --text hello --out " + npy,
          "lm next --model " + dir + " --text hello --logits " + logits,
          "lm tokens --model " + dir + " --text hello",
          "export --model " + dir + " --text hello --step weights --out " + png}) {
      const auto r = run_cli(args);
      EXPECT_EQ(r.status, 2) << c.what << ": " << args << ": " << r.err;
      EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.what << ": " << r.err;
      EXPECT_NE(r.err.find(c.file), std::string::npos) << c.what << ": " << r.err;
      EXPECT_EQ(r.out, "") << c.what;
    }
    EXPECT_FALSE(file_exists(npy)) << c.what;
    EXPECT_FALSE(file_exists(logits)) << c.what;
    EXPECT_FALSE(file_exists(png)) << c.what;
  }
}

TEST(LmInit, WritesAFolderEveryCommandReads) {
  const std::string corpus = temp_path("corpus.txt");
  std::ofstream(corpus) << test::kLmCorpus;
  const std::string dir = temp_path("init-model");
  const auto r = run_cli("lm init --out " + dir + " --corpus " + corpus +
                         " --merges 50 --layers 2 --heads 2 --embd 8 --positions 32 --dtype BF16");
  ASSERT_EQ(r.status, 0) << r.err;
  // The merges are GPT-2's procedure on the corpus: the test's own learner finds the same.
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 50);
  const auto t = run_cli("lm tokens --model " + dir + " --text " + sh("the teacher's heads"));
  ASSERT_EQ(t.status, 0) << t.err;
  std::string expect;
  for (int id : test::reference_encode(v, "the teacher's heads"))
    expect += std::to_string(id) + "\t" + v.tokens[static_cast<size_t>(id)] + "\n";
  EXPECT_EQ(t.out, expect);
  const auto n = run_cli("lm next --model " + dir + " --text hello --top 3");
  EXPECT_EQ(n.status, 0) << n.err;
  const auto bad = run_cli("lm init --out " + temp_path("bad") + " --embd 10 --heads 3");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--embd: 10 is not divisible by --heads 3"), std::string::npos) << bad.err;
}

// ---- issue 28: finite but huge weights, control characters in tokens, sizes beyond the limit ----

// A float32 folder whose layer-0 c_attn weights are multiplied by `factor` (all finite).
test::TestModel scaled_c_attn_model(double factor) {
  test::TestModelSpec spec;
  spec.n_layer = 2;
  spec.n_head = 2;
  spec.n_embd = 16;
  test::TestModel m = test::make_test_model(spec);
  for (float& w : m.tensors.at("h.0.attn.c_attn.weight").second) w = static_cast<float>(w * factor);
  return m;
}

// Every command that runs the forward pass, on `folder`, writing into fresh paths: each must exit
// 2 with an error holding `expect`, print nothing and write nothing.
void expect_every_forward_command_refuses(const std::string& folder, const std::string& text,
                                          const std::string& expect) {
  const std::string npy = temp_path("refused.npy"), png = temp_path("refused.png"),
                    pdf = temp_path("refused.pdf"), logits = temp_path("refused-logits.npy");
  const std::string m = " --model " + sh(folder) + " --text " + sh(text);
  for (const std::string& args :
       {"lm next" + m + " --logits " + logits, "lm attention" + m + " --out " + npy,
        "lm rollout" + m + " --out " + npy, "lm heads" + m, "trace" + m,
        "explain" + m + " --query 0", "export" + m + " --step weights --out " + png,
        "worksheet" + m + " --out " + pdf}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << args;
  }
  for (const std::string& f : {npy, png, pdf, logits}) EXPECT_FALSE(file_exists(f)) << f;
}

TEST(LmRobust, ACAttnOutputBeyondFloat32IsAnErrorNamingIt) {
  // The largest weight scaled to just under FLT_MAX: c_attn's output overflows float32 while
  // every weight is finite. The double-precision reference says so, independently of core/lm.
  test::TestModel m = scaled_c_attn_model(1.0);
  float biggest = 0;
  for (float w : m.w("h.0.attn.c_attn.weight")) biggest = std::max(biggest, std::fabs(w));
  for (float& w : m.tensors.at("h.0.attn.c_attn.weight").second)
    w = static_cast<float>(w * (0.999 * FLT_MAX / biggest));
  const std::string text = "the teacher";
  const test::ReferenceForward ref =
      test::reference_forward(m, test::reference_encode(m.vocab, text));
  double qkv_max = 0;
  for (const auto* v : {&ref.q, &ref.k, &ref.v})
    for (size_t i = 0; i < static_cast<size_t>(ref.T) * 16; ++i)  // layer 0
      qkv_max = std::max(qkv_max, std::fabs((*v)[i]));
  ASSERT_GT(qkv_max, FLT_MAX) << "the test model must overflow in c_attn";
  const std::string folder = temp_path("huge-c-attn");
  test::write_test_model(m, folder);
  expect_every_forward_command_refuses(folder, text,
                                       "layer 0, attention c_attn output (Q, K, V): value "
                                       "overflows float32");
}

TEST(LmRobust, WeightsTimes3e37AreAnErrorNamingTheFirstOverflow) {
  // The battery's case: c_attn × 3·10³⁷. Where float32 first overflows is found from the
  // reference in double: c_attn's output if a Q, K or V value is beyond FLT_MAX, else the scores
  // Q·Kᵀ/√d of the softmax.
  const test::TestModel m = scaled_c_attn_model(3e37);
  const std::string text = "the teacher explains";
  const test::ReferenceForward ref =
      test::reference_forward(m, test::reference_encode(m.vocab, text));
  double qkv_max = 0;
  for (const auto* v : {&ref.q, &ref.k, &ref.v})
    for (size_t i = 0; i < static_cast<size_t>(ref.T) * 16; ++i)
      qkv_max = std::max(qkv_max, std::fabs((*v)[i]));
  // Q·K of one head (8 channels) would be beyond float32 too: the softmax of inf is nan.
  ASSERT_GT(qkv_max * qkv_max, FLT_MAX);
  const std::string where =
      qkv_max > FLT_MAX ? "layer 0, attention c_attn output" : "layer 0, attention weights";
  const std::string folder = temp_path("huge-3e37");
  test::write_test_model(m, folder);
  expect_every_forward_command_refuses(folder, text, where);
  // The tokens need no forward pass: still fine.
  const auto t = run_cli("lm tokens --model " + sh(folder) + " --text " + sh(text));
  EXPECT_EQ(t.status, 0) << t.err;
}

TEST(LmRobust, ControlCharactersInTokensAreEscaped) {
  test::TestModelSpec spec;
  test::TestModel m = test::make_test_model(spec);
  // Tokens no text encodes to but `lm next --top V` lists: ESC sequences, a newline, a tab, C1.
  const std::vector<std::string> hostile = {"\x1b[2J\x1b[31mred", "a\nb\tc",
                                            "\xc2\x9b"
                                            "1m"};
  for (const std::string& h : hostile) m.vocab.tokens.push_back(h);
  ASSERT_LE(m.vocab.tokens.size(), static_cast<size_t>(m.vocab_size));
  const std::string folder = temp_path("escape-model");
  test::write_test_model(m, folder);
  const auto r = run_cli("lm next --model " + sh(folder) + " --text hello --top " +
                         std::to_string(m.vocab_size));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* escaped : {"\\x1b[2J\\x1b[31mred", "a\\x0ab\\x09c", "\\xc2\\x9b1m"})
    EXPECT_NE(r.out.find(escaped), std::string::npos) << escaped << "\n" << r.out;
  // Each line is ID<TAB>TOKEN<TAB>PROBABILITY: exactly two tabs, no raw control byte.
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_EQ(std::count(line.begin(), line.end(), '\t'), 2) << line;
    for (unsigned char c : line) EXPECT_TRUE(c == '\t' || (c >= 0x20 && c != 0x7f)) << line;
  }
  EXPECT_EQ(count, m.vocab_size);
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(LmRobust, AForwardPassBeyondTheLimitIsRefusedUpFront) {
  // A small folder declaring n_positions 2^20 (its wpe holds them all), and a long text: the
  // attention weights alone would be n_layer·n_head·n² floats.
  test::TestModelSpec spec;
  spec.n_layer = 2;
  spec.n_head = 2;
  spec.n_embd = 4;
  spec.n_positions = 1 << 20;
  spec.n_merges = 0;
  spec.dtype = "F16";
  const test::TestModel m = test::make_test_model(spec);
  const std::string folder = temp_path("huge-positions");
  test::write_test_model(m, folder);
  std::string text;
  for (int i = 0; i < 30000; ++i) text += static_cast<char>('a' + i % 26);
  const size_t n = test::reference_encode(m.vocab, text).size();
  const double cells = 2.0 * 2.0 * static_cast<double>(n) * static_cast<double>(n);
  char expect[128];
  std::snprintf(expect, sizeof expect, "n_layer·n_head·n² = 2·2·%zu² = %.0f floats", n, cells);
  expect_every_forward_command_refuses(folder, text, expect);
  expect_every_forward_command_refuses(folder, text, "at most 1.6 GB (1610612736 bytes)");
  // lm bench: refused before any text is built, not minutes of work.
  const auto b = run_cli("lm bench --model " + sh(folder) + " --tokens 1048576 --runs 1");
  EXPECT_EQ(b.status, 2) << b.err;
  EXPECT_NE(b.err.find("--tokens: the forward pass of 1048576 tokens is too large"),
            std::string::npos)
      << b.err;
  const auto g = run_cli("lm bench --folder " + temp_path("no-bench-model") + " --tokens 1048576");
  EXPECT_EQ(g.status, 2) << g.err;
  EXPECT_NE(g.err.find("--tokens: 1048576 is more than"), std::string::npos) << g.err;
  // Every run above stayed far below 2 GB (the children's largest resident size).
  rusage ru{};
  ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &ru), 0);
  EXPECT_LT(static_cast<double>(ru.ru_maxrss) * 1024.0, 2e9);
}

}  // namespace
}  // namespace attn
