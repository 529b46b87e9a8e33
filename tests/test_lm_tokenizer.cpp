// GPT-2's byte-level BPE: the pre-tokenizer against the pattern run by PCRE2, the encoder against
// encoder.py's algorithm written in the test, round trips of any UTF-8, the byte table, and the
// errors for malformed vocab.json and merges.txt.
#include <gtest/gtest.h>

#include <random>

#include "lm/tokenizer.h"
#include "lm_fixture.h"

namespace attn::lm {
namespace {

std::string utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

// Pieces that exercise every branch of the pattern: contractions (and near misses), letters of
// several scripts, numbers of every kind (Nd, Nl, No), marks and symbols, emoji and ZWJ
// sequences, and every kind of white space (including NEL, NBSP, ideographic space and U+001C,
// which Python's isspace() calls space but White_Space does not).
const std::vector<std::string>& pieces() {
  static const std::vector<std::string> p = [] {
    std::vector<std::string> v = {
        "'s",          "'t",     "'re",    "'ve",     "'m",     "'ll",    "'d",     "'S",
        "'x",          "'",      "''",     "don",     "'tis",   "a",      "The",    "word",
        "café",        "naïve",  "Ωμέγα",  "Привет",  "中文",   "日本語", "한국어", "عربي",
        "עברית",       "हिन्दी",  "1",      "42",      "3.14",   "٣",      "²",      "Ⅻ",
        "½",           "1st",    "!",      "?!",      "...",    ",",      "-",      "(",
        ")",           "\"",     "#",      "$",       "€",      "@",      "😀",      "👍🏽",
        "👩‍💻", "🇫🇷",     "\u0301", "e\u0301", "\u200D", "©",      "™",      "→",
        "∑",           " ",      "  ",     "   ",     "\t",     "\n",     "\n\n",   "\r\n",
        " \n",         "\u00A0", "\u2003", "\u3000",  "\u2028", "\u0085", "\u1680", "\x1C",
        "\x0B",        "\x0C"};
    return v;
  }();
  return p;
}

std::string random_text(std::mt19937& rng, int max_pieces) {
  std::string s;
  const int n = static_cast<int>(rng() % static_cast<unsigned>(max_pieces + 1));
  for (int i = 0; i < n; ++i) s += pieces()[rng() % pieces().size()];
  return s;
}

TEST(LmTokenizer, ByteTableIsGpt2s) {
  const auto& t = byte_to_unicode();
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(t[static_cast<size_t>(b)], test::test_byte_char(static_cast<unsigned char>(b))) << b;
  // Values known from GPT-2's vocabulary: space is Ġ, newline Ċ, byte 0 Ā, soft hyphen Ń.
  EXPECT_EQ(t[' '], "Ġ");
  EXPECT_EQ(t['\n'], "Ċ");
  EXPECT_EQ(t[0], "Ā");
  EXPECT_EQ(t[0xAD], "Ń");
  EXPECT_EQ(t['A'], "A");
  EXPECT_EQ(t[0xE9], "é");
}

TEST(LmTokenizer, PretokenizerMatchesThePatternRunByPcre2) {
  const std::vector<std::string> fixed = {
      "",
      "Hello world",
      "I'm sure they're right; it's John's book and we'll see what you've done, I'd say.",
      "  leading and trailing  ",
      "a  b   c\t\td\n\ne \n f",
      "tabs\tbefore\twords and\u00A0nbsp",
      "numbers 123 4567 3.14 and ٣٤ Ⅻ ²",
      "emoji 😀👍🏽 and 👩‍💻 flags 🇫🇷🇩🇪",
      "end with spaces   ",
      "\n",
      " ",
      "x'S 'LL",
  };
  for (const std::string& s : fixed) EXPECT_EQ(pretokenize(s), test::pcre2_pretokenize(s)) << s;
  std::mt19937 rng(11);
  for (int i = 0; i < 4000; ++i) {
    const std::string s = random_text(rng, 12);
    ASSERT_EQ(pretokenize(s), test::pcre2_pretokenize(s)) << "'" << s << "'";
  }
}

TEST(LmTokenizer, EncodeMatchesEncoderPyOnManyStrings) {
  for (int merges : {0, 60, 400}) {
    const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, merges);
    Tokenizer tok;
    std::string error;
    ASSERT_TRUE(tok.build(v.tokens, v.merges, error)) << error;
    // Text like the corpus (so merges fire) and random text.
    EXPECT_EQ(tok.encode(test::kLmCorpus), test::reference_encode(v, test::kLmCorpus));
    std::mt19937 rng(static_cast<unsigned>(merges + 3));
    const std::string words[] = {"the",   " the",   " teacher", " attention", " heads",
                                 "The",   " model", " token",   "'s",         " they're",
                                 " café", " 2024",  "\n"};
    for (int i = 0; i < 1500; ++i) {
      std::string s = i % 2 ? random_text(rng, 10) : "";
      for (int w = 0; w < 6; ++w) s += words[rng() % std::size(words)];
      ASSERT_EQ(tok.encode(s), test::reference_encode(v, s)) << "'" << s << "'";
    }
  }
}

TEST(LmTokenizer, RoundTripsAnyUtf8) {
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 200);
  Tokenizer tok;
  std::string error;
  ASSERT_TRUE(tok.build(v.tokens, v.merges, error)) << error;
  std::mt19937 rng(17);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    const int n = static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) {
      // Any scalar value: ASCII often, then every plane (no surrogates).
      char32_t c = rng() % 3 == 0 ? static_cast<char32_t>(rng() % 128)
                                  : static_cast<char32_t>(rng() % 0x110000);
      if (c >= 0xD800 && c <= 0xDFFF) c = 'x';
      s += utf8(c);
    }
    ASSERT_TRUE(valid_utf8(s));
    const std::vector<int> ids = tok.encode(s);
    ASSERT_EQ(tok.decode(ids), s);
    ASSERT_EQ(ids, test::reference_encode(v, s));
  }
}

TEST(LmTokenizer, RefusesMalformedUtf8) {
  size_t at = 99;
  EXPECT_FALSE(valid_utf8("ab\xff", &at));
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(valid_utf8("\xc3", &at));              // truncated sequence
  EXPECT_FALSE(valid_utf8("\xc0\xaf", &at));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80", &at));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80", &at));  // beyond U+10FFFF
  EXPECT_TRUE(valid_utf8("café 😀"));
}

TEST(LmTokenizer, DisplayIsReadable) {
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 60);
  Tokenizer tok;
  std::string error;
  ASSERT_TRUE(tok.build(v.tokens, v.merges, error)) << error;
  EXPECT_EQ(tok.display(tok.find("Ġ")), " ");
  EXPECT_EQ(tok.display(tok.find("Ċ")), "↵");
  EXPECT_EQ(tok.display(tok.find("ĉ")), "⇥");
  EXPECT_EQ(tok.display(tok.find("Ā")), "<0x00>");
  EXPECT_EQ(tok.display(tok.find("â")), "<0xE2>");  // the first byte of a 3-byte character
  EXPECT_EQ(tok.display(tok.find("<|endoftext|>")), "<|endoftext|>");
  const std::vector<int> ids = tok.encode(" the teacher");
  std::string joined;
  for (int id : ids) joined += tok.display(id);
  EXPECT_EQ(joined, " the teacher");
}

TEST(LmTokenizer, WrittenFilesReadBack) {
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 80);
  Tokenizer a, b;
  std::string error;
  ASSERT_TRUE(a.build(v.tokens, v.merges, error)) << error;
  ASSERT_TRUE(b.parse(a.vocab_json(), a.merges_txt(), "vocab.json", "merges.txt",
                      static_cast<int>(v.tokens.size()), error))
      << error;
  EXPECT_EQ(b.merges(), a.merges());
  for (int id = 0; id < a.size(); ++id) EXPECT_EQ(b.token(id), a.token(id));
  EXPECT_EQ(b.encode(test::kLmCorpus), a.encode(test::kLmCorpus));
}

TEST(LmTokenizer, MalformedFilesNameTheFileAndEntry) {
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 10);
  Tokenizer good;
  std::string error;
  ASSERT_TRUE(good.build(v.tokens, v.merges, error));
  const std::string vocab = good.vocab_json(), merges = good.merges_txt();
  const int V = static_cast<int>(v.tokens.size());
  struct Case {
    const char* what;
    std::string vocab, merges;
    int vocab_size;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"not json", "{", merges, V, "vocab.json: not valid JSON"},
      {"not an object", "[1]", merges, V, "vocab.json: expected a JSON object"},
      {"id too large", vocab, merges, V - 1, "not an integer in [0,"},
      {"id not a number", R"({"a": "1"})", merges, V, "token 'a'"},
      {"two tokens, one id", R"({"a": 1, "b": 1})", merges, V, "id 1 is given to both"},
      {"byte missing", R"({"a": 0})", merges, V, "is missing"},
      {"empty merges", vocab, "", V, "merges.txt: no merges"},
      {"bad merge line", vocab, "#version: 0.2\na b c\n", V, "merges.txt: line 2"},
      {"unknown merge", vocab, "#version: 0.2\nq zz\n", V, "'zz' is not in the vocabulary"},
      {"merge result unknown", vocab, "#version: 0.2\nq q\n", V, "'qq' is not in the vocabulary"},
  };
  for (const Case& c : cases) {
    Tokenizer t;
    error.clear();
    EXPECT_FALSE(t.parse(c.vocab, c.merges, "vocab.json", "merges.txt", c.vocab_size, error))
        << c.what;
    EXPECT_NE(error.find(c.expect), std::string::npos) << c.what << ": " << error;
  }
  // A header with no merges is a byte-level tokenizer (every byte its own token).
  Tokenizer bytes_only;
  EXPECT_TRUE(bytes_only.parse(vocab, "#version: 0.2\n", "vocab.json", "merges.txt", V, error))
      << error;
  EXPECT_EQ(bytes_only.encode("ab").size(), 2u);
}

TEST(LmTokenizer, LearnedMergesMatchTheTestsLearner) {
  // The same algorithm written twice (core for `lm init`, the test fixture's own): same merges.
  const test::TestVocab v = test::learn_test_vocab(test::kLmCorpus, 80);
  const Tokenizer t = learn_bpe(test::kLmCorpus, 80);
  ASSERT_EQ(t.merges().size(), v.merges.size());
  for (size_t i = 0; i < v.merges.size(); ++i) EXPECT_EQ(t.merges()[i], v.merges[i]) << i;
  EXPECT_EQ(t.encode(test::kLmCorpus), test::reference_encode(v, test::kLmCorpus));
}

}  // namespace
}  // namespace attn::lm
