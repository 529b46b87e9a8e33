// A model folder's README.md read as its one-paragraph summary (lm/model_card.h): Hugging Face's
// front matter, headings and images skipped, lines joined, long text cut at a word.
#include <gtest/gtest.h>

#include <filesystem>

#include "lm/model_card.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn::lm {
namespace {

std::string card(const std::string& name, const std::string& readme) {
  const std::string d = test::temp_path(name);
  std::filesystem::create_directories(d);
  test::write_bytes(d + "/README.md", readme);
  return d;
}

TEST(ModelCard, TheFirstParagraphOfProseIsTheSummary) {
  EXPECT_EQ(model_card_summary(card("card-plain",
                                    "# tiny\n\nA small model\nof letters.\n\n"
                                    "- **Data**: letters.\n")),
            "A small model of letters.");
  // As Hugging Face's cards begin: front matter, a title, an image, then the prose.
  EXPECT_EQ(model_card_summary(card("card-hf",
                                    "---\nlicense: apache-2.0\nlanguage:\n- en\n---\n\n"
                                    "# SmolLM2\n\n![image/png](logo.png)\n\n"
                                    "<!-- a comment -->\nSmolLM2 is a family of "
                                    "compact language models.\n")),
            "SmolLM2 is a family of compact language models.");
  EXPECT_EQ(model_card_summary(card("card-empty", "# only a title\n\n")), "");
  EXPECT_EQ(model_card_summary(test::temp_path("card-no-folder")), "");
}

TEST(ModelCard, ALongParagraphIsCutAtAWord) {
  std::string words;
  for (int i = 0; i < 100; ++i) words += "wörd ";
  const std::string s = model_card_summary(card("card-long", words + "\n"), 50);
  ASSERT_GE(s.size(), 4u);
  EXPECT_EQ(s.substr(s.size() - 3), "…");
  const std::string kept = s.substr(0, s.size() - 3);
  EXPECT_LE(kept.size(), 50u);
  EXPECT_EQ(kept.size() % 6, 5u) << kept;  // whole "wörd" (5 bytes) plus the spaces between
  EXPECT_EQ(kept.substr(kept.size() - 5), "wörd");
}

// Every shipped model has a card whose summary says what it reads.
TEST(ModelCard, EveryShippedModelSaysWhatItIs) {
  for (const char* m : {"austen", "induction", "induction-llama", "stories", "stories-llama"}) {
    const std::string folder = std::string(ATTN_SOURCE_DIR) + "/assets/models/lm/" + m;
    const std::string s = model_card_summary(folder);
    EXPECT_GT(s.size(), 60u) << m;
    EXPECT_LT(s.size(), 400u) << m;
    EXPECT_NE(s.find("English"), std::string::npos) << m << ": " << s;
  }
}

}  // namespace
}  // namespace attn::lm
