// The language models shipped in assets/models/lm/ load and do what docs/lm.md says. The induction
// model (issue 15; the README gives the command that trained it) must, on the repeated letter
// sequence the docs quote, have a previous-token head (layer 0) and an induction head (layer 1)
// each scoring at least 0.4, and predict the repeat's next token at least 80% of the time. The
// scores are computed here from the attention weights with the positions written out by hand, and
// must agree with lm::head_scores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "lm/generate.h"
#include "lm/head_trace.h"
#include "lm/model.h"

namespace attn::lm {
namespace {

const char* kProbe = " q x m b f k z r a w q x m b f k z r a w";

std::string shipped_folder(const std::string& name) {
  return std::string(ATTN_SOURCE_DIR) + "/assets/models/lm/" + name;
}

Model shipped(const std::string& name) {
  Model m;
  std::string error;
  EXPECT_TRUE(load_model(shipped_folder(name), m, error)) << error;
  return m;
}

TEST(LmShipped, TheModelsAreShippedByName) {
  const std::vector<std::string> names = shipped_models();
  for (const char* name : {"stories", "induction", "stories-llama"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(LmShipped, InductionModelHasTheCircuit) {
  const Model m = shipped("induction");
  const Config& c = m.config;
  ASSERT_EQ(c.n_layer, 2);
  const std::vector<int> ids = m.tokenizer.encode(kProbe);
  // One token per letter: ten distinct letters, then the same ten.
  ASSERT_EQ(ids.size(), 20u);
  for (int t = 0; t < 10; ++t) {
    EXPECT_EQ(ids[static_cast<size_t>(t)], ids[static_cast<size_t>(t + 10)]);
    for (int u = 0; u < t; ++u) EXPECT_NE(ids[static_cast<size_t>(t)], ids[static_cast<size_t>(u)]);
  }
  Activations a;
  ForwardOptions fo;
  fo.mlp = m.mlp;
  gpt_forward(m, ids, 1, 20, a, fo);

  // By hand: token t of the second copy (10 ≤ t ≤ 19) occurred at t − 10, followed by t − 9.
  auto weight = [&](int l, int h, int t, int u) { return a.att_at(c, l, 0, h)[t * 20 + u]; };
  const std::vector<HeadScores> scores = head_scores(c, a);
  double best_prev = 0, best_ind = 0;
  for (int h = 0; h < c.n_head; ++h) {
    double prev = 0, ind = 0;
    for (int t = 1; t < 20; ++t) prev += weight(0, h, t, t - 1);
    for (int t = 10; t < 20; ++t) ind += weight(1, h, t, t - 9);
    prev /= 19;
    ind /= 10;
    EXPECT_NEAR(scores[static_cast<size_t>(h)].previous, prev, 1e-6) << "layer 0 head " << h;
    EXPECT_NEAR(scores[static_cast<size_t>(c.n_head + h)].induction, ind, 1e-6)
        << "layer 1 head " << h;
    best_prev = std::max(best_prev, prev);
    best_ind = std::max(best_ind, ind);
  }
  EXPECT_GE(best_prev, 0.4) << "layer 0's best previous-token score";
  EXPECT_GE(best_ind, 0.4) << "layer 1's best induction score";

  // Positions 10 … 18 of the repeat: the next token is the one that followed last time.
  const int V = c.vocab_size;
  int right = 0;
  for (int t = 10; t < 19; ++t) {
    const float* z = a.logits.data() + static_cast<size_t>(t) * V;
    right += static_cast<int>(std::max_element(z, z + V) - z) == ids[static_cast<size_t>(t + 1)];
  }
  EXPECT_GE(right, 8) << "of 9 (80% is 7.2)";
  const CopyAccuracy copy = copy_accuracy(c, a);
  EXPECT_EQ(copy.total, 9);
  EXPECT_EQ(copy.correct, right);
}

// The stories recipe in today's architecture: a Llama folder (RoPE, RMSNorm, SwiGLU, 4 query
// heads sharing 2 K/V heads, tied), with the stories' own merges, whose KV cache is half what one
// K/V head per query head would take, and whose cached generation is the whole-text pass.
TEST(LmShipped, StoriesLlamaIsTodaysArchitecture) {
  const Model m = shipped("stories-llama");
  const Config& c = m.config;
  EXPECT_EQ(c.arch, LmArch::kLlama);
  EXPECT_EQ(c.n_layer, 2);
  EXPECT_EQ(c.n_head, 4);
  EXPECT_EQ(c.kv_heads(), 2);
  EXPECT_EQ(c.head_size(), 16);
  EXPECT_TRUE(c.tied);
  EXPECT_EQ(m.tokenizer.encode(" the").size(), 1u);
  const std::vector<int> ids = m.tokenizer.encode("One day Mia");
  Generator g(m, 1);
  ASSERT_EQ(g.feed(ids), "");
  const double n = static_cast<double>(ids.size());
  // K and V, 2 layers, 2 K/V heads of 16 floats, n tokens: 512 bytes a token (GPT-2's 4 heads:
  // 1024).
  EXPECT_EQ(g.cache_bytes(), 2 * 2 * 2 * 16 * 4 * n);
  std::vector<int> all = ids;
  for (int step = 0; step < 8; ++step) {
    const std::vector<float>& z = g.logits();
    const int next = static_cast<int>(std::max_element(z.begin(), z.end()) - z.begin());
    // The cached step gives the whole-text pass's last row.
    Activations a;
    gpt_forward(m, all, 1, static_cast<int>(all.size()), a);
    for (size_t v = 0; v < z.size(); ++v)
      ASSERT_NEAR(z[v], a.logits[(all.size() - 1) * z.size() + v], 1e-3) << step << " " << v;
    all.push_back(next);
    ASSERT_EQ(g.feed({next}), "");
  }
  // Words of the stories: letters, spaces and punctuation only.
  const std::string text = m.tokenizer.decode(all);
  EXPECT_EQ(text.rfind("One day Mia", 0), 0u) << text;
  for (char ch : text)
    EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(ch)) || ch == ' ' || ch == '.' ||
                ch == ',' || ch == '!' || ch == '"' || ch == '\'')
        << text;
}

TEST(LmShipped, StoriesModelWritesItsOwnWords) {
  const Model m = shipped("stories");
  // Its own merges: common words of the stories are single tokens.
  const std::vector<int> ids = m.tokenizer.encode(" the");
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_TRUE(m.mlp);
}

}  // namespace
}  // namespace attn::lm
