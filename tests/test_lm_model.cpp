// GPT-2-format models: the loader on test folders (F32, F16, BF16, with and without the
// "transformer." prefix), the forward pass against the double-precision reference written in the
// test, one head's trace through the attention engine against the same reference, the head
// scores against their definitions, and every damaged folder refused with a clear error.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "backends/backend.h"
#include "backends/compute.h"
#include "io/safetensors.h"
#include "lm/forward.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "lm_fixture.h"
#include "reference.h"

namespace attn::lm {
namespace {

constexpr double kTol = 1e-4;
const char* kText = "The teacher explains attention; the teacher shows the heads. Café 2024!";

std::string folder_for(const test::TestModel& tm, const std::string& name) {
  const std::string dir = test::temp_path(name);
  test::write_test_model(tm, dir);
  return dir;
}

struct Variant {
  std::string dtype, prefix;
};

class LmForward : public ::testing::TestWithParam<Variant> {};

TEST_P(LmForward, MatchesTheDoublePrecisionReference) {
  test::TestModelSpec spec;
  spec.dtype = GetParam().dtype;
  spec.prefix = GetParam().prefix;
  spec.n_layer = 3;
  spec.n_head = 4;
  spec.n_embd = 24;
  const test::TestModel tm = test::make_test_model(spec);
  const std::string dir = folder_for(tm, "model-" + spec.dtype);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(dir, m, error)) << error;
  EXPECT_EQ(m.dtype, spec.dtype);
  EXPECT_EQ(m.config.n_layer, 3);
  EXPECT_EQ(m.config.vocab_size, tm.vocab_size);
  // Parameters land where GPT-2's names say.
  EXPECT_EQ(m.params.ptr(kQkvW, 2)[5], tm.w("h.2.attn.c_attn.weight")[5]);
  EXPECT_EQ(m.params.ptr(kFcProjB, 1)[3], tm.w("h.1.mlp.c_proj.bias")[3]);

  const std::vector<int> ids = m.tokenizer.encode(kText);
  ASSERT_EQ(ids, test::reference_encode(tm.vocab, kText));
  const int T = static_cast<int>(ids.size());
  const test::ReferenceForward ref = test::reference_forward(tm, ids);
  Activations a;
  gpt_forward(m, ids, 1, T, a);
  double worst_att = 0, worst_logit = 0;
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 4; ++h)
      for (int t = 0; t < T; ++t)
        for (int u = 0; u < T; ++u)
          worst_att = std::max(
              worst_att, std::abs(a.att_at(m.config, l, 0, h)[t * T + u] -
                                  ref.att[((static_cast<size_t>(l) * 4 + h) * T + t) * T + u]));
  for (size_t i = 0; i < ref.logits.size(); ++i)
    worst_logit = std::max(worst_logit, std::abs(a.logits[i] - ref.logits[i]));
  EXPECT_LT(worst_att, kTol);
  EXPECT_LT(worst_logit, kTol);

  // Only the last position's logits: the same numbers.
  Activations last;
  ForwardOptions o;
  o.all_logits = false;
  o.threads = 1;
  gpt_forward(m, ids, 1, T, last, o);
  ASSERT_EQ(last.logits.size(), static_cast<size_t>(m.config.vocab_size));
  for (int v = 0; v < m.config.vocab_size; ++v)
    EXPECT_NEAR(last.logits[static_cast<size_t>(v)],
                ref.logits[static_cast<size_t>(T - 1) * m.config.vocab_size + v], kTol);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LmForward,
                         ::testing::Values(Variant{"F32", ""}, Variant{"F16", ""},
                                           Variant{"BF16", ""}, Variant{"F32", "transformer."},
                                           Variant{"F16", "transformer."}),
                         [](const auto& info) {
                           return info.param.dtype + (info.param.prefix.empty() ? "" : "_prefix");
                         });

TEST(LmModel, BatchedSequencesMatchSeparateRuns) {
  const test::TestModel tm = test::make_test_model({});
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "batch"), m, error)) << error;
  const std::vector<int> s1 = m.tokenizer.encode("the heads of the model"),
                         s2 = m.tokenizer.encode("one head looks back at it");
  const int T = static_cast<int>(std::min(s1.size(), s2.size()));
  std::vector<int> both(s1.begin(), s1.begin() + T);
  both.insert(both.end(), s2.begin(), s2.begin() + T);
  Activations ab, a2;
  gpt_forward(m, both, 2, T, ab);
  gpt_forward(m, std::vector<int>(s2.begin(), s2.begin() + T), 1, T, a2);
  const size_t V = static_cast<size_t>(m.config.vocab_size);
  for (size_t i = 0; i < static_cast<size_t>(T) * V; ++i)
    ASSERT_NEAR(ab.logits[static_cast<size_t>(T) * V + i], a2.logits[i], 1e-5);
}

TEST(LmModel, HeadTraceThroughTheEngineMatchesTheReference) {
  test::TestModelSpec spec;
  spec.n_head = 4;
  spec.n_embd = 32;
  const test::TestModel tm = test::make_test_model(spec);
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "head"), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode(kText);
  const int T = static_cast<int>(ids.size()), hs = 8, C = 32;
  const test::ReferenceForward ref = test::reference_forward(tm, ids);
  Activations a;
  gpt_forward(m, ids, 1, T, a);
  std::unique_ptr<Backend> cpu = make_backend("cpu", error);
  ASSERT_TRUE(cpu) << error;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 4; ++h) {
      const Scenario s = head_scenario(m, a, l, h, display_tokens(m.tokenizer, ids), kText);
      ASSERT_EQ(validate_scenario(s), "");
      const AttentionTrace tr = compute_scenario_trace(s, *cpu);
      ASSERT_EQ(tr.n_q, T);
      ASSERT_EQ(tr.d_k, hs);
      const Matrix& q = tr.head(StageId::kQ, 0);
      const Matrix& w = tr.head(StageId::kWeights, 0);
      const Matrix& out = tr.head(StageId::kOutput, 0);
      for (int t = 0; t < T; ++t) {
        for (int i = 0; i < hs; ++i) {
          const size_t at = (static_cast<size_t>(l) * T + t) * C + h * hs + i;
          ASSERT_NEAR(q(t, i), ref.q[at], kTol);
          // output = Σ_u w[t][u] v[u], from the reference's own weights and values.
          double o = 0;
          for (int u = 0; u <= t; ++u)
            o += ref.att[((static_cast<size_t>(l) * 4 + h) * T + t) * T + u] *
                 ref.v[(static_cast<size_t>(l) * T + u) * C + h * hs + i];
          ASSERT_NEAR(out(t, i), o, kTol);
        }
        for (int u = 0; u < T; ++u)
          ASSERT_NEAR(w(t, u), ref.att[((static_cast<size_t>(l) * 4 + h) * T + t) * T + u], kTol)
              << "layer " << l << " head " << h << " (" << t << ", " << u << ")";
      }
      EXPECT_EQ(tr.query_tokens.size(), static_cast<size_t>(T));
      EXPECT_EQ(tr.hidden_of(0)(0, 1), kHiddenCausal);
    }
}

TEST(LmModel, HeadScoresFollowTheirDefinitions) {
  // Induction targets: the key after the previous occurrence of the current token.
  EXPECT_EQ(induction_targets({5, 6, 7, 5, 6, 7}),
            (std::vector<std::pair<int, int>>{{3, 1}, {4, 2}, {5, 3}}));
  EXPECT_TRUE(induction_targets({1, 1, 2}).empty());  // s + 1 = t is the token itself
  EXPECT_EQ(induction_targets({1, 2, 1, 1}), (std::vector<std::pair<int, int>>{{2, 1}}));

  const test::TestModel tm = test::make_test_model({});
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "scores"), m, error)) << error;
  const std::string text = "the heads of the model see the heads of the model";
  const std::vector<int> ids = m.tokenizer.encode(text);
  const int T = static_cast<int>(ids.size());
  const test::ReferenceForward ref = test::reference_forward(tm, ids);
  Activations a;
  gpt_forward(m, ids, 1, T, a);
  const std::vector<HeadScores> s = head_scores(m.config, a);
  ASSERT_EQ(s.size(), 4u);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h) {
      auto w = [&](int t, int u) {
        return ref.att[((static_cast<size_t>(l) * 2 + h) * T + t) * T + u];
      };
      double prev = 0, first = 0, self = 0, ind = 0;
      int n_ind = 0;
      for (int t = 1; t < T; ++t) prev += w(t, t - 1), first += w(t, 0), self += w(t, t);
      for (int t = 0; t < T; ++t) {
        int s_prev = -1;
        for (int u = t - 1; u >= 0; --u)
          if (ids[static_cast<size_t>(u)] == ids[static_cast<size_t>(t)]) {
            s_prev = u;
            break;
          }
        if (s_prev >= 0 && s_prev + 1 < t) ind += w(t, s_prev + 1), ++n_ind;
      }
      ASSERT_GT(n_ind, 0);
      const HeadScores& hs = s[static_cast<size_t>(l * 2 + h)];
      EXPECT_NEAR(hs.previous, prev / (T - 1), kTol);
      EXPECT_NEAR(hs.first, first / (T - 1), kTol);
      EXPECT_NEAR(hs.self, self / (T - 1), kTol);
      EXPECT_NEAR(hs.induction, ind / n_ind, kTol);
      EXPECT_EQ(hs.induction_queries, n_ind);
    }
}

TEST(LmModel, NextTokensAndKvCache) {
  const test::TestModel tm = test::make_test_model({});
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "next"), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode("the teacher");
  const test::ReferenceForward ref = test::reference_forward(tm, ids);
  Activations a;
  gpt_forward(m, ids, 1, static_cast<int>(ids.size()), a);
  const int V = m.config.vocab_size, T = static_cast<int>(ids.size());
  for (double temp : {1.0, 0.5, 2.0}) {
    std::vector<double> p(static_cast<size_t>(V));
    double mx = -1e300, sum = 0;
    for (int v = 0; v < V; ++v)
      mx = std::max(mx, ref.logits[static_cast<size_t>((T - 1) * V + v)] / temp);
    for (int v = 0; v < V; ++v)
      sum += p[static_cast<size_t>(v)] =
          std::exp(ref.logits[static_cast<size_t>((T - 1) * V + v)] / temp - mx);
    const auto top = top_next_tokens(m.config, a, 5, temp);
    ASSERT_EQ(top.size(), 5u);
    for (size_t i = 0; i < top.size(); ++i) {
      EXPECT_NEAR(top[i].second, p[static_cast<size_t>(top[i].first)] / sum, kTol);
      if (i) {
        EXPECT_GE(top[i - 1].second, top[i].second);
      }
    }
    // Nothing outside the top 5 is more likely than the fifth.
    for (int v = 0; v < V; ++v) {
      bool listed = false;
      for (const auto& t : top) listed = listed || t.first == v;
      if (!listed) {
        EXPECT_LE(p[static_cast<size_t>(v)] / sum, top[4].second + kTol) << v;
      }
    }
  }
  Config gpt2;
  gpt2.n_layer = 12;
  gpt2.n_head = 12;
  gpt2.n_embd = 768;
  EXPECT_EQ(kv_cache_bytes_per_token(gpt2, 4), 73728u);  // 2 · 12 · 768 · 4
  EXPECT_EQ(kv_cache_bytes_per_token(gpt2, 2), 36864u);
  // SmolLM2-135M caches its 3 K/V heads of 64, not its 9 query heads: 2 · 30 · 3 · 64 · 2.
  Config smol;
  smol.arch = LmArch::kLlama;
  smol.n_layer = 30;
  smol.n_head = 9;
  smol.n_kv_head = 3;
  smol.n_embd = 576;
  EXPECT_EQ(kv_cache_bytes_per_token(smol, 2), 23040u);
}

TEST(LmModel, SavedModelsReadBack) {
  const test::TestModel tm = test::make_test_model({});
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "orig"), m, error)) << error;
  for (const char* dtype : {"F32", "BF16"}) {
    const std::string dir = test::temp_path(std::string("saved-") + dtype);
    ASSERT_TRUE(save_model(m, dir, error, dtype, "transformer.")) << error;
    Model r;
    ASSERT_TRUE(load_model(dir, r, error)) << error;
    EXPECT_EQ(r.config.vocab_size, m.config.vocab_size);
    EXPECT_EQ(r.tokenizer.encode(kText), m.tokenizer.encode(kText));
    ASSERT_EQ(r.params.total(), m.params.total());
    const bool exact = std::string(dtype) == "F32";
    for (size_t i = 0; i < m.params.total(); ++i) {
      // bfloat16 keeps 8 bits of mantissa: within half a unit in the last place, 2^-8 relative.
      const double tol = exact ? 0.0 : std::abs(m.params.memory[i]) / 256 + 1e-30;
      ASSERT_NEAR(r.params.memory[i], m.params.memory[i], tol) << i;
    }
  }
}

// ---- damaged folders ----

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

struct Damage {
  const char* name;
  std::function<void(const std::string& dir)> apply;
  const char* file;    // the file the error must name
  const char* expect;  // a piece of the error
};

std::vector<Damage> damages() {
  auto replace_in = [](const std::string& path, const std::string& from, const std::string& to) {
    std::string t = read_text(path);
    const size_t at = t.find(from);
    if (at != std::string::npos) t.replace(at, from.size(), to);
    write_text(path, t);
  };
  return {
      {"missing config", [](const std::string& d) { std::remove((d + "/config.json").c_str()); },
       "config.json", "no such file"},
      {"config not json", [](const std::string& d) { write_text(d + "/config.json", "{n_layer"); },
       "config.json", "not valid JSON"},
      {"n_embd not divisible",
       [=](const std::string& d) {
         replace_in(d + "/config.json", "\"n_head\": 2", "\"n_head\": 3");
       },
       "config.json", "not divisible by n_head"},
      {"config missing n_layer",
       [=](const std::string& d) { replace_in(d + "/config.json", "\"n_layer\"", "\"layers\""); },
       "config.json", "n_layer: missing"},
      {"shape disagrees with config",
       [=](const std::string& d) {
         replace_in(d + "/config.json", "\"n_positions\": 48", "\"n_positions\": 40");
       },
       "model.safetensors", "config.json implies"},
      {"more layers in config than in the file",
       [=](const std::string& d) {
         replace_in(d + "/config.json", "\"n_layer\": 2", "\"n_layer\": 3");
       },
       "model.safetensors", "no tensor 'h.2."},
      {"missing safetensors",
       [](const std::string& d) { std::remove((d + "/model.safetensors").c_str()); },
       "model.safetensors", "no such file"},
      {"truncated safetensors",
       [](const std::string& d) {
         const std::string t = read_text(d + "/model.safetensors");
         write_text(d + "/model.safetensors", t.substr(0, t.size() / 2));
       },
       "model.safetensors", "past the end"},
      {"junk safetensors",
       [](const std::string& d) { write_text(d + "/model.safetensors", "this is not a model"); },
       "model.safetensors", "safetensors"},
      {"header truncated",
       [](const std::string& d) {
         const std::string t = read_text(d + "/model.safetensors");
         write_text(d + "/model.safetensors", t.substr(0, 100));
       },
       "model.safetensors", "claims"},
      {"offsets past the end",
       [=](const std::string& d) {
         // Grow the last tensor's end offset in place (same header length).
         std::string t = read_text(d + "/model.safetensors");
         size_t header = 0;
         for (int i = 7; i >= 0; --i) header = (header << 8) | static_cast<unsigned char>(t[i]);
         const size_t at = t.rfind("]}", 8 + header);
         const size_t comma = t.rfind(',', at);
         std::string num = t.substr(comma + 1, at - comma - 1);
         std::string bigger = std::to_string(std::stoull(num) + 4);
         if (bigger.size() == num.size()) t.replace(comma + 1, num.size(), bigger);
         write_text(d + "/model.safetensors", t);
       },
       "model.safetensors", "tensor '"},
      {"missing merges", [](const std::string& d) { std::remove((d + "/merges.txt").c_str()); },
       "merges.txt", "no such file"},
      {"empty merges", [](const std::string& d) { write_text(d + "/merges.txt", ""); },
       "merges.txt", "no merges"},
      {"missing vocab", [](const std::string& d) { std::remove((d + "/vocab.json").c_str()); },
       "vocab.json", "no such file"},
      {"vocab id beyond vocab_size",
       [=](const std::string& d) {
         replace_in(d + "/vocab.json", "\"<|endoftext|>\":", "\"<|endoftext|>\":9");
       },
       "vocab.json", "not an integer in"},
      {"merges.txt is a folder",
       [](const std::string& d) {
         std::remove((d + "/merges.txt").c_str());
         ::mkdir((d + "/merges.txt").c_str(), 0755);
       },
       "merges.txt", "not a regular file"},
  };
}

TEST(LmModel, DamagedFoldersAreRefusedNamingTheFile) {
  const test::TestModel tm = test::make_test_model({});
  for (const Damage& d : damages()) {
    const std::string dir = folder_for(tm, "damaged");
    d.apply(dir);
    Model m;
    std::string error;
    EXPECT_FALSE(load_model(dir, m, error)) << d.name;
    EXPECT_NE(error.find(d.file), std::string::npos) << d.name << ": " << error;
    EXPECT_NE(error.find(d.expect), std::string::npos) << d.name << ": " << error;
  }
  Model m;
  std::string error;
  EXPECT_FALSE(load_model(test::temp_path("no-such-folder"), m, error));
  EXPECT_NE(error.find("no such folder"), std::string::npos) << error;
}

TEST(LmModel, NonFiniteWeightsAndWrongDtypesAreRefused) {
  test::TestModel tm = test::make_test_model({});
  tm.tensors["h.1.ln_2.bias"].second[3] = NAN;
  Model m;
  std::string error;
  EXPECT_FALSE(load_model(folder_for(tm, "nan"), m, error));
  EXPECT_NE(error.find("tensor 'h.1.ln_2.bias' holds a non-finite value at flat index 3"),
            std::string::npos)
      << error;
}

// Issue 28: the size check counts at least every value the pass keeps (summed here from the
// activations themselves), and the finiteness check names the first non-finite value in the
// order the pass computes, wherever it is put.
TEST(LmForwardChecks, TheSizeCountsEveryActivation) {
  const test::TestModel tm = test::make_test_model({});
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "sizes"), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode("the heads of the model look back");
  const int T = static_cast<int>(ids.size());
  for (bool all : {false, true}) {
    ForwardOptions o;
    o.all_logits = all;
    Activations a;
    gpt_forward(m, ids, 1, T, a, o);
    size_t floats = 0;
    for (const auto* v :
         {&a.encoded, &a.ln1,       &a.ln1_mean, &a.ln1_rstd, &a.qkv,      &a.att,   &a.atty,
          &a.attproj, &a.residual2, &a.ln2,      &a.ln2_mean, &a.ln2_rstd, &a.fch,   &a.fch_gelu,
          &a.fcproj,  &a.residual3, &a.lnf,      &a.lnf_mean, &a.lnf_rstd, &a.logits})
      floats += v->size();
    // Kept values plus the tokens, and one (T, T) score matrix per head as scratch.
    const double kept = 4.0 * floats + 4.0 * T;
    const double scratch = 4.0 * m.config.n_head * T * T;
    EXPECT_DOUBLE_EQ(forward_bytes(m.config, 1, T, o), kept + scratch);
    EXPECT_EQ(check_forward_size(m.config, 1, T, o), "");
    EXPECT_EQ(checked_forward(m, ids, 1, T, a, o), "");
  }
  // n_layer·n_head·n² alone past the limit: refused with the numbers, before any allocation.
  Config big = m.config;
  big.n_positions = 1 << 20;
  const std::string e = check_forward_size(big, 1, 1 << 16, ForwardOptions{});
  EXPECT_NE(e.find("n_layer·n_head·n² = 2·2·65536² = 17179869184 floats"), std::string::npos) << e;
  EXPECT_NE(e.find("at most 1.6 GB (1610612736 bytes)"), std::string::npos) << e;
}

TEST(LmForwardChecks, TheFirstNonFiniteValueIsNamedWhereItIs) {
  const test::TestModel tm = test::make_test_model({});  // 2 layers, 2 heads, n_embd 16
  Model m;
  std::string error;
  ASSERT_TRUE(load_model(folder_for(tm, "finite"), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode("the heads of the model");
  const int T = static_cast<int>(ids.size()), C = 16;
  ASSERT_GE(T, 4);
  Activations clean;
  gpt_forward(m, ids, 1, T, clean);
  ASSERT_EQ(check_forward_finite(m.config, clean), "");
  struct Case {
    std::function<void(Activations&)> spoil;
    std::string expect;
  };
  const float inf = INFINITY, nan = NAN;
  const std::vector<Case> cases = {
      {[&](Activations& a) { a.qkv[(1 * T + 2) * 3 * C + 5] = inf; },
       "layer 1, attention c_attn output (Q, K, V): value overflows float32 (inf at token 2, "
       "column 5)"},
      // Two at once: the earlier in the pass is named (layer 0's MLP before layer 1's c_attn).
      {[&](Activations& a) {
         a.qkv[(1 * T + 2) * 3 * C + 5] = inf;
         a.fch[(0 * T + 3) * 4 * C + 7] = -inf;
       },
       "layer 0, mlp c_fc output: value overflows float32 (-inf at token 3, column 7)"},
      {[&](Activations& a) { a.att[((0 * 2 + 1) * T + 3) * T + 1] = nan; },
       "layer 0, attention weights (softmax of Q·Kᵀ/√d): value overflows float32 (nan at head 1, "
       "query 3, key 1)"},
      {[&](Activations& a) { a.encoded[1 * C + 4] = inf; },
       "the embeddings (wte + wpe): value overflows float32 (inf at token 1, column 4)"},
      {[&](Activations& a) { a.logits[(T - 1) * m.config.vocab_size + 9] = nan; },
       "the logits: value overflows float32 (nan at token " + std::to_string(T - 1) +
           ", vocabulary id 9)"},
  };
  for (const Case& c : cases) {
    Activations a = clean;
    c.spoil(a);
    EXPECT_EQ(check_forward_finite(m.config, a), c.expect);
  }
}

}  // namespace
}  // namespace attn::lm
