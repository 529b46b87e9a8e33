// Worksheets: the handout and the answer key as PDF (read back with pdftotext), the key's numbers
// against an independent double-precision computation, fresh numbers per seed, paper sizes, and
// the command's errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "attention/scenario.h"
#include "documents.h"
#include "io/examples.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string fixed(double x, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

// "output_TOKEN = [a, b, c]" for every query, from the reference computation.
std::vector<std::string> output_lines(const Scenario& s, int decimals) {
  const test::RefResult ref = test::reference_attention(to_problem(s));
  std::vector<std::string> lines;
  const test::RefMat& o = ref.output[0];
  for (int i = 0; i < o.rows; ++i) {
    std::string line = "output_" + s.query_tokens[static_cast<size_t>(i)] + " = [";
    for (int d = 0; d < o.cols; ++d) line += (d ? ", " : "") + fixed(o(i, d), decimals);
    lines.push_back(line + "]");
  }
  return lines;
}

Scenario example(const std::string& name) {
  std::string error;
  auto s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  return *s;
}

TEST(Worksheet, FearIsKeyShowsEveryNumber) {
  const std::string sheet = test::temp_path("fear-is-sheet.pdf"),
                    key = test::temp_path("fear-is-key.pdf");
  auto r =
      test::run_cli("worksheet --example fear-is --out '" + sheet + "' --answers '" + key + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = test::pdf_text(key);
  ASSERT_FALSE(text.empty()) << "pdftotext (poppler-utils) is needed";
  // The issue's numbers, and the same from the reference loop.
  EXPECT_NE(text.find("output_Fear = [0.4772, 0.3767, 0.2922]"), std::string::npos) << text;
  for (const auto& line : output_lines(example("fear-is"), 4))
    EXPECT_NE(text.find(line), std::string::npos) << line;
  // Every intermediate number: scores 0.27 and 0.54 (not the source's 0.38), scaled, weights.
  for (const char* s : {"0.2700", "0.5400", "0.1559", "0.3118", "0.4611", "0.5389", "Σ = 1.0000",
                        "Answer key", "e^", "Query “Fear”", "Query “is”"})
    EXPECT_NE(text.find(s), std::string::npos) << s;
  // The handout has the tables, blank grids and questions, and no answers.
  const std::string hand = test::pdf_text(sheet);
  for (const char* s : {"Attention by hand: fear-is", "Name", "Q (queries)", "K (keys)",
                        "V (values)", "Scores", "Weights", "Output", "Questions", "Fear", "0.8"})
    EXPECT_NE(hand.find(s), std::string::npos) << s;
  for (const char* s : {"0.4772", "0.5389", "0.2700", "Answer key"})
    EXPECT_EQ(hand.find(s), std::string::npos) << s << " gives the answer away";
  double w = 0, h = 0;
  ASSERT_TRUE(test::pdf_page_size(sheet, w, h));
  EXPECT_NEAR(w, 595.28, 0.5);  // A4 portrait
  EXPECT_NEAR(h, 841.89, 0.5);
}

TEST(Worksheet, MaskedScenarioHatchesHiddenCellsAndAsksAboutThem) {
  const std::string sheet = test::temp_path("fit-sheet.pdf"), key = test::temp_path("fit-key.pdf");
  auto r = test::run_cli("worksheet --example fear-is-the --paper letter --out '" + sheet +
                         "' --answers '" + key + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  double w = 0, h = 0;
  ASSERT_TRUE(test::pdf_page_size(sheet, w, h));
  EXPECT_EQ(w, 612);  // US Letter portrait
  EXPECT_EQ(h, 792);
  const std::string hand = test::pdf_text(sheet);
  EXPECT_NE(hand.find("hidden by the mask"), std::string::npos);
  EXPECT_NE(hand.find("causal mask"), std::string::npos);
  const std::string text = test::pdf_text(key);
  for (const auto& line : output_lines(example("fear-is-the"), 4))
    EXPECT_NE(text.find(line), std::string::npos) << line;
  EXPECT_NE(text.find("−∞"), std::string::npos);
}

TEST(Worksheet, EverySeedGivesItsOwnNumbersWithACorrectKey) {
  const Scenario base = example("fear-is-the");
  std::set<std::string> seen;
  for (uint64_t seed : {1u, 2u}) {
    const Scenario s = with_random_inputs(base, seed);
    // Same shapes, tokens and mask; one decimal each, positive like the example's.
    ASSERT_EQ(s.qkv.q[0].rows(), 3);
    ASSERT_EQ(s.qkv.q[0].cols(), 3);
    EXPECT_EQ(s.query_tokens, base.query_tokens);
    EXPECT_EQ(s.options.mask.causal, base.options.mask.causal);
    std::string numbers;
    for (const HeadStack* st : {&s.qkv.q, &s.qkv.k, &s.qkv.v})
      for (Eigen::Index k = 0; k < (*st)[0].size(); ++k) {
        const double x = (*st)[0].data()[k];
        EXPECT_GE(x, 0.1 - 1e-6);
        EXPECT_LE(x, 0.9 + 1e-6);
        EXPECT_NEAR(x * 10, std::round(x * 10), 1e-4);
        numbers += fixed(x, 1) + " ";
      }
    EXPECT_TRUE(seen.insert(numbers).second) << "seed " << seed << " repeats another's numbers";

    const std::string sheet = test::temp_path("seed-sheet.pdf"),
                      key = test::temp_path("seed-key.pdf");
    auto r = test::run_cli("worksheet --example fear-is-the --seed " + std::to_string(seed) +
                           " --out '" + sheet + "' --answers '" + key + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string text = test::pdf_text(key), hand = test::pdf_text(sheet);
    for (const auto& line : output_lines(s, 4))
      EXPECT_NE(text.find(line), std::string::npos) << "seed " << seed << ": " << line;
    EXPECT_NE(text.find("seed " + std::to_string(seed)), std::string::npos);
    EXPECT_NE(hand.find("seed " + std::to_string(seed)), std::string::npos);
    // The handout shows this seed's Q.
    EXPECT_NE(hand.find(fixed(s.qkv.q[0](0, 0), 1)), std::string::npos);
  }
  // The same seed gives the same numbers again.
  EXPECT_TRUE(with_random_inputs(base, 1).qkv.q[0].isApprox(with_random_inputs(base, 1).qkv.q[0]));
  // Signed examples keep signed numbers (gqa has negative values).
  const Scenario gqa = with_random_inputs(example("gqa"), 5);
  bool negative = false;
  for (const HeadStack* st : {&gqa.qkv.q, &gqa.qkv.k, &gqa.qkv.v})
    for (const Matrix& m : *st) negative = negative || m.minCoeff() < 0;
  EXPECT_TRUE(negative);
}

TEST(Worksheet, BadRequestsExitTwoAndWriteNothing) {
  const std::string out = test::temp_path("never-sheet.pdf");
  const std::pair<std::string, std::string> cases[] = {
      {"--example fear-is --out '" + out + ".png'", "--out"},
      {"--example fear-is --out '" + out + "' --answers '" + out + ".svg'", "--answers"},
      {"--example fear-is --out '" + out + "' --answers '" + out + "'", "--answers"},
      {"--example fear-is --paper slide --out '" + out + "'", "--paper"},
      {"--example fear-is --head 1 --out '" + out + "'", "--head"},
      {"--example fear-is --precision 9 --out '" + out + "'", "--precision"},
      {"--lesson intro.md --out '" + out + "'", "--lesson"},
      {"--out '" + out + "'", "--example"},
      {"--example no-such --out '" + out + "'", "no-such"},
      {"--example fear-is --out /nonexistent-folder/s.pdf", "--out"},
  };
  for (const auto& [args, flag] : cases) {
    auto r = test::run_cli("worksheet " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(exists(out)) << args;
  }
  // A scenario too large to work by hand says so.
  const std::string big = test::temp_path("big.json");
  std::string json = R"({"format": "attention-lab-scenario", "version": 1, "q": [)";
  for (int i = 0; i < 9; ++i) json += std::string(i ? "," : "") + "[0.1, 0.2]";
  json += R"(], "k": [[1, 0]], "v": [[1, 0]]})";
  test::write_bytes(big, json);
  auto r = test::run_cli("worksheet --scenario '" + big + "' --out '" + out + "'");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("too large to work by hand"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace attn
