// Hostile tokenizer.json files (docs/robustness.md, "Tokenizer work bounds"; issue 40): many added
// tokens sharing a long prefix are matched through a trie, a Split pattern that backtracks at
// every position runs out of the text's matching budget, and chained Replace normalizers of an
// empty pattern stop at the growth limit — each answered in well under a second, the errors
// naming the part of tokenizer.json.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lm/hf_tokenizer.h"
#include "reference.h"

namespace attn::lm {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A BPE model over single letters a-z (ids 0-25), no merges.
json base_tokenizer() {
  json vocab = json::object();
  for (int i = 0; i < 26; ++i) vocab[std::string(1, static_cast<char>('a' + i))] = i;
  return {{"version", "1.0"},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}}}};
}

// Well under a second in a release build; the sanitizers' build runs several times slower.
const double kBound = test::kSanitized ? 5.0 : 1.0;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(HfHostile, ManyAddedTokensSharingALongPrefixAreMatchedQuickly) {
  // 20,000 added tokens: a 200-byte prefix of 'x' and a distinct 6-letter tail each; 60 KB of
  // text made of the prefix and tails that match none of them except where placed. A comparison
  // per token at each position (before the trie) is 60,000 · 20,000 · up to 206 bytes: minutes.
  // (The 150,000 tokens encode as fast; their 33 MB tokenizer.json alone takes seconds
  // to read, too slow for a test.)
  const std::string prefix(200, 'x');
  json t = base_tokenizer();
  json added = json::array();
  auto tail = [](int i) {
    std::string s;
    for (int k = 0; k < 6; ++k, i /= 26) s += static_cast<char>('a' + i % 26);
    return s;
  };
  constexpr int kTokens = 20000;
  for (int i = 0; i < kTokens; ++i)
    added.push_back({{"id", 1000 + i},
                     {"content", prefix + tail(i)},
                     {"special", false},
                     {"normalized", false}});
  t["added_tokens"] = added;
  t["model"]["vocab"]["x"] = 26;
  HfTokenizer tok;
  std::string error;
  ASSERT_TRUE(tok.parse(t.dump(), "tokenizer.json", error)) << error;
  // The text: the prefix followed by a tail no token has ("zzzzzz" would be token 26⁶−1, beyond
  // kTokens), over and over, then one real token.
  std::string text;
  while (text.size() < 60000) text += prefix + "zzzzzz";
  text += prefix + tail(1234);
  const auto t0 = Clock::now();
  std::vector<int> ids;
  ASSERT_TRUE(tok.encode(text, ids, error)) << error;
  const double s = seconds_since(t0);
  std::printf("%d added tokens, %zu bytes of text: encoded in %.3f s\n", kTokens, text.size(), s);
  EXPECT_LT(s, kBound);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), 1000 + 1234);  // the real one is found (its whole 206 bytes)
  // Everything before it is letters: 'x' (26) and 'z' (25) tokens, one per byte.
  EXPECT_EQ(ids.size(), text.size() - prefix.size() - 6 + 1);
}

TEST(HfHostile, ASplitThatBacktracksEverywhereRunsOutOfTheTextsBudget) {
  // (?:a|a){0,20}[bc] on 3,000 'a's and no b or c: from every position PCRE2 tries each of the
  // 2²⁰ ways to take up to 20 a's (about 2 million steps, within its per-match limit of 10
  // million) before it moves on: billions of steps over the text without a budget.
  json t = base_tokenizer();
  t["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers", json::array({{{"type", "Digits"}, {"individual_digits", false}},
                                     {{"type", "Split"},
                                      {"pattern", {{"Regex", "(?:a|a){0,20}[bc]"}}},
                                      {"behavior", "Isolated"},
                                      {"invert", false}}})}};
  HfTokenizer tok;
  std::string error;
  ASSERT_TRUE(tok.parse(t.dump(), "tokenizer.json", error)) << error;
  // Ordinary text with the same pattern is fine.
  std::vector<int> ids;
  ASSERT_TRUE(tok.encode("aab abc cab", ids, error)) << error;
  const auto t0 = Clock::now();
  EXPECT_FALSE(tok.encode(std::string(3000, 'a'), ids, error));
  const double s = seconds_since(t0);
  std::printf("backtracking Split on 3,000 characters: refused in %.3f s\n", s);
  EXPECT_LT(s, kBound);
  EXPECT_NE(error.find("tokenizer.json's pre_tokenizer.pretokenizers[1] (Split)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("budget of matching work"), std::string::npos) << error;
}

TEST(HfHostile, ChainedReplacementsOfAnEmptyPatternStopAtTheGrowthLimit) {
  // An empty regex matches before every byte and at the end: each Replace turns n bytes into
  // n + 10·(n + 1); eight of them would make 10 bytes into 11⁸·10 ≈ 2 GB.
  json t = base_tokenizer();
  json list = json::array();
  for (int i = 0; i < 8; ++i)
    list.push_back({{"type", "Replace"}, {"pattern", {{"Regex", ""}}}, {"content", "abcdefghij"}});
  t["normalizer"] = {{"type", "Sequence"}, {"normalizers", list}};
  HfTokenizer tok;
  std::string error;
  ASSERT_TRUE(tok.parse(t.dump(), "tokenizer.json", error)) << error;
  const auto t0 = Clock::now();
  std::vector<int> ids;
  EXPECT_FALSE(tok.encode("abcdefghij", ids, error));
  EXPECT_LT(seconds_since(t0), kBound);
  // The first gives 10 + 11·10 = 120 bytes (under 16·10 + 1024 = 1184); the second would give
  // 120 + 121·10 = 1330.
  EXPECT_NE(error.find("tokenizer.json's normalizer.normalizers[1] (Replace)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("would be 1330 bytes"), std::string::npos) << error;
  // One Replace alone is within the limit: 120 bytes of letters, 120 ids.
  t["normalizer"] = list[0];
  ASSERT_TRUE(tok.parse(t.dump(), "tokenizer.json", error)) << error;
  ASSERT_TRUE(tok.encode("abcdefghij", ids, error)) << error;
  EXPECT_EQ(ids.size(), 120u);
}

}  // namespace
}  // namespace attn::lm
