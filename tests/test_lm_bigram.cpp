// The bigram baseline against numbers worked by hand on a six-token text.
#include <gtest/gtest.h>

#include <cmath>

#include "lm/bigram.h"

namespace attn::lm {
namespace {

// Train 0 1 0 1 0 2 over a vocabulary of 3: c(0) = 3, c(1) = 2, c(2) = 1, N = 6, so
// u = (4/9, 3/9, 2/9); pairs (0,1) twice, (1,0) twice, (0,2) once; as a first token 0 comes 3
// times, 1 twice, 2 never.
TEST(LmBigram, ProbabilitiesAreSmoothedCountsAsWorkedByHand) {
  const BigramModel m({0, 1, 0, 1, 0, 2}, 3);
  EXPECT_NEAR(m.probability(0, 1), (2 + 3.0 / 9) / 4, 1e-12);  // 7/12
  EXPECT_NEAR(m.probability(0, 2), (1 + 2.0 / 9) / 4, 1e-12);  // 11/36
  EXPECT_NEAR(m.probability(0, 0), (4.0 / 9) / 4, 1e-12);      // 1/9
  EXPECT_NEAR(m.probability(1, 2), (2.0 / 9) / 3, 1e-12);      // never seen: 2/27
  // A token never seen first falls back on the frequencies alone.
  EXPECT_NEAR(m.probability(2, 0), 4.0 / 9, 1e-12);
  for (int a = 0; a < 3; ++a) {
    double sum = 0;
    for (int b = 0; b < 3; ++b) sum += m.probability(a, b);
    EXPECT_NEAR(sum, 1.0, 1e-12) << a;
  }
}

TEST(LmBigram, FiguresCountEveryTokenAfterTheFirst) {
  const BigramModel m({0, 1, 0, 1, 0, 2}, 3);
  const CorpusFigures f = m.evaluate({0, 1, 2});
  EXPECT_EQ(f.tokens, 2);
  EXPECT_NEAR(f.loss, -(std::log(7.0 / 12) + std::log(2.0 / 27)) / 2, 1e-12);
  // After 0, 1 scores highest (7/3 against 11/9 and 4/9); after 1, 2 (2/9) trails 0 (2 + 4/9)
  // and 1 (3/9): second place is in the top 5 but not the top 1.
  EXPECT_DOUBLE_EQ(f.top1, 0.5);
  EXPECT_DOUBLE_EQ(f.top5, 1.0);
}

}  // namespace
}  // namespace attn::lm
