// The language models shipped in assets/models/lm/ load and do what docs/lm.md says. The induction
// model (issue 15; the README gives the command that trained it) must, on the repeated letter
// sequence the docs quote, have a previous-token head (layer 0) and an induction head (layer 1)
// each scoring at least 0.4, and predict the repeat's next token at least 80% of the time. The
// scores are computed here from the attention weights with the positions written out by hand, and
// must agree with lm::head_scores; the induction head's winning scores must come mostly from what
// layer 0's heads wrote (K-composition, split by lm/circuit.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "lm/circuit.h"
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
  for (const char* name : {"stories", "induction", "induction-llama", "stories-llama", "austen"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

// The induction models (GPT-2-style `induction`, Llama-style `induction-llama`) on kProbe.
void expect_induction_circuit(const std::string& name) {
  SCOPED_TRACE(name);
  const Model m = shipped(name);
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
  int ind_head = 0;
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
    if (ind > best_ind) best_ind = ind, ind_head = h;
  }
  EXPECT_GE(best_prev, 0.4) << "layer 0's best previous-token score";
  EXPECT_GE(best_ind, 0.4) << "layer 1's best induction score";

  // K-composition (the Circuit tab's step 3): the induction head's score for the key after the
  // earlier occurrence comes mostly from what layer 0's heads wrote at that key — not from the
  // key's own token or position — and its largest part is one of them.
  for (int t = 10; t < 19; ++t) {
    const std::vector<ScorePart> parts = key_score_parts(m, a, 1, ind_head, t, t - 9);
    double score = 0, written = 0;
    const ScorePart* largest = &parts[0];
    for (const ScorePart& p : parts) {
      score += p.value;
      if (p.layer == 0 && p.head >= 0) written += p.value;
      if (p.value > largest->value) largest = &p;
    }
    EXPECT_GT(written, 0.5 * score) << "query " << t;
    EXPECT_TRUE(largest->layer == 0 && largest->head >= 0)
        << "query " << t << ": " << largest->name;
  }

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

TEST(LmShipped, InductionModelHasTheCircuit) { expect_induction_circuit("induction"); }

// Today's architecture (RoPE, RMSNorm, 4 query heads with their own K/V heads, no MLP), trained
// with attention shaping (docs/lm.md): the same circuit, and it copies at every distance, which
// a RoPE model's fixed look-backs could not.
TEST(LmShipped, InductionLlamaHasTheCircuit) {
  expect_induction_circuit("induction-llama");
  const Model m = shipped("induction-llama");
  const Config& c = m.config;
  EXPECT_EQ(c.arch, LmArch::kLlama);
  EXPECT_EQ(c.kv_heads(), 4);
  const std::vector<int> segment = m.tokenizer.encode(" q x m b f k z r a w");
  const std::vector<int> filler = m.tokenizer.encode(" c d e g h i j l n o p s t u v y c d e g h");
  ASSERT_EQ(segment.size(), 10u);
  ASSERT_EQ(filler.size(), 21u);
  for (int gap : {0, 4, 8, 15, 21}) {
    SCOPED_TRACE("distance " + std::to_string(10 + gap));
    std::vector<int> ids = segment;
    ids.insert(ids.end(), filler.begin(), filler.begin() + gap);
    ids.insert(ids.end(), segment.begin(), segment.end());
    const int T = static_cast<int>(ids.size()), d = 10 + gap;
    Activations a;
    gpt_forward(m, ids, 1, T, a);
    // By hand: the second copy's token at t (t ≥ d) occurred at t − d, followed by t − d + 1.
    int right = 0;
    double induction = 0;
    for (int t = d; t < T - 1; ++t) {
      const float* z = a.logits.data() + static_cast<size_t>(t) * c.vocab_size;
      right += static_cast<int>(std::max_element(z, z + c.vocab_size) - z) ==
               ids[static_cast<size_t>(t + 1)];
      induction += a.att_at(c, 1, 0, 0)[t * T + t - d + 1];
    }
    induction /= 9;
    std::printf("distance %d: induction (layer 1 head 0) %.3f, copied %d of 9\n", d, induction,
                right);
    EXPECT_GE(induction, 0.4);
    EXPECT_GE(right, 8) << "of 9 (80% is 7.2)";
  }
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

// The English model (docs/lm.md, "The shipped austen model"): a Llama folder of today's shape,
// trained on Jane Austen's six novels, their last chapters held out (scripts/make-austen-model.sh).
TEST(LmShipped, AustenIsASmallLlamaStyleEnglishModel) {
  const Model m = shipped("austen");
  const Config& c = m.config;
  EXPECT_EQ(c.arch, LmArch::kLlama);
  EXPECT_EQ(c.n_layer, 6);
  EXPECT_EQ(c.n_head, 8);
  EXPECT_EQ(c.kv_heads(), 2);
  EXPECT_EQ(c.head_size(), 32);
  EXPECT_EQ(c.n_positions, 256);
  EXPECT_EQ(c.vocab_size, 4096);
  EXPECT_TRUE(c.tied);
  EXPECT_TRUE(m.mlp);
  EXPECT_LE(m.parameter_count(), 40e6);
  // Its own byte-level BPE: common words and the heroines' names are single tokens.
  for (const char* word : {" the", " she", " Elizabeth", " Emma", " Darcy"})
    EXPECT_EQ(m.tokenizer.encode(word).size(), 1u) << word;
}

// Two paragraphs of the last chapters of Sense and Sensibility, which training never saw
// (make-austen-corpus.sh holds them out). The loss and top-5 accuracy are computed here in double
// precision from the logits. Measured: loss 4.21 nats (perplexity 68), top-5 46 %; a bigram model
// counted on the training text in the same tokens (lm eval --bigram) has 5.30 and 39 % on it, and
// 4096 equally likely tokens would give ln 4096 = 8.32. The bounds leave room for rounding only
// in the last digits of a different machine's float sums, not for a model that reads no English.
const char* kHeldOutPassage =
    "Unaccountable, however, as the circumstances of his release might appear to the whole "
    "family, it was certain that Edward was free; and to what purpose that freedom would be "
    "employed was easily pre-determined by all;--for after experiencing the blessings of ONE "
    "imprudent engagement, contracted without his mother's consent, as he had already done for "
    "more than four years, nothing less could be expected of him in the failure of THAT, than the "
    "immediate contraction of another.\n"
    "The change which a few hours had wrought in the minds and the happiness of the Dashwoods, "
    "was such--so great--as promised them all, the satisfaction of a sleepless night.  Mrs. "
    "Dashwood, too happy to be comfortable, knew not how to love Edward, nor praise Elinor "
    "enough, how to be enough thankful for his release without wounding his delicacy, nor how at "
    "once to give them leisure for unrestrained conversation together, and yet enjoy, as she "
    "wished, the sight and society of both.\n";

struct NextTokenFigures {
  double loss = 0;  // mean −ln p(next token), nats
  double top5 = 0;  // share of next tokens among the five most likely
};

NextTokenFigures next_token_figures(const Model& m, const std::vector<int>& ids) {
  Activations a;
  const int n = static_cast<int>(ids.size());
  gpt_forward(m, ids, 1, n, a);
  const int V = m.config.vocab_size;
  NextTokenFigures f;
  for (int t = 0; t + 1 < n; ++t) {
    const float* z = a.logits.data() + static_cast<size_t>(t) * V;
    const double top = *std::max_element(z, z + V);
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += std::exp(static_cast<double>(z[v]) - top);
    const int target = ids[static_cast<size_t>(t) + 1];
    f.loss += top + std::log(sum) - z[target];
    f.top5 += std::count_if(z, z + V, [&](float x) { return x > z[target]; }) < 5;
  }
  f.loss /= n - 1;
  f.top5 /= n - 1;
  return f;
}

TEST(LmShipped, AustenPredictsEnglishItNeverSaw) {
  const Model m = shipped("austen");
  const std::vector<int> ids = m.tokenizer.encode(kHeldOutPassage);
  ASSERT_EQ(ids.size(), 230u);
  const NextTokenFigures text = next_token_figures(m, ids);
  EXPECT_LT(text.loss, 4.3) << "perplexity " << std::exp(text.loss);
  std::printf("held-out passage: loss %.4f, top-5 %.4f\n", text.loss, text.top5);
  EXPECT_GT(text.top5, 0.44);
  // The same tokens in a shuffled order: the model reads the order, not only which words occur.
  std::vector<int> shuffled = ids;
  for (size_t i = shuffled.size() - 1; i > 0; --i)
    std::swap(shuffled[i], shuffled[(i * 7919 + 13) % (i + 1)]);
  const NextTokenFigures salad = next_token_figures(m, shuffled);
  EXPECT_GT(salad.loss, text.loss + 1.5);
  EXPECT_LT(salad.top5, text.top5 - 0.2);
  std::printf("shuffled: loss %.4f, top-5 %.4f\n", salad.loss, salad.top5);
}

// What docs/lm.md says its heads do, recomputed from the attention weights: a previous-token head
// (layer 5 head 0) on a repeated sentence, and no induction head (the model does not copy).
TEST(LmShipped, AustenHasAPreviousTokenHeadButNoInductionHead) {
  const Model m = shipped("austen");
  const Config& c = m.config;
  // The sentence's tokens twice over.
  std::vector<int> ids = m.tokenizer.encode(
      " When the ladies returned to the drawing-room, Miss Bingley was at the piano, and "
      "Elizabeth sat down by the fire with her work.");
  const int half = static_cast<int>(ids.size()), n = 2 * half;
  const std::vector<int> once = ids;
  ids.insert(ids.end(), once.begin(), once.end());
  Activations a;
  gpt_forward(m, ids, 1, n, a);
  const std::vector<HeadScores> scores = head_scores(c, a);
  double best_prev = 0, best_ind = 0;
  int best_prev_at = -1;
  for (int l = 0; l < c.n_layer; ++l)
    for (int h = 0; h < c.n_head; ++h) {
      const float* w = a.att_at(c, l, 0, h);
      double prev = 0, ind = 0;
      for (int t = 1; t < n; ++t) prev += w[t * n + t - 1];
      // The second copy's token t occurred first at t − half, followed by t − half + 1 (the
      // sentence has words that repeat inside it, which this mean counts at their first use too,
      // so it is compared with lm heads' latest-occurrence score only loosely).
      for (int t = half + 1; t < n; ++t) ind += w[t * n + t - half + 1];
      prev /= n - 1;
      ind /= n - half - 1;
      EXPECT_NEAR(scores[static_cast<size_t>(l * c.n_head + h)].previous, prev, 1e-6);
      if (prev > best_prev) {
        best_prev = prev;
        best_prev_at = l * c.n_head + h;
      }
      best_ind = std::max(best_ind, ind);
    }
  std::printf("best previous-token %.3f (head %d), best induction %.3f\n", best_prev, best_prev_at,
              best_ind);
  EXPECT_GE(best_prev, 0.4);
  EXPECT_EQ(best_prev_at, 5 * c.n_head + 0) << "layer 5 head 0";
  EXPECT_LT(best_ind, 0.2) << "an induction head formed: docs/lm.md and the lessons say none did";
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
