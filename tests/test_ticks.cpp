// Round steps and tick values (render/ticks.h), against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "render/ticks.h"

namespace attn {
namespace {

TEST(Ticks, StepIsTheSmallestRoundNumberAtLeastAsLarge) {
  EXPECT_DOUBLE_EQ(nice_step(1), 1);
  EXPECT_DOUBLE_EQ(nice_step(1.5), 2);
  EXPECT_DOUBLE_EQ(nice_step(2.2), 5);
  EXPECT_DOUBLE_EQ(nice_step(7), 10);
  EXPECT_DOUBLE_EQ(nice_step(37), 50);
  EXPECT_DOUBLE_EQ(nice_step(200), 200);
  EXPECT_DOUBLE_EQ(nice_step(1000), 1000);  // log10 may round just below 3
  EXPECT_DOUBLE_EQ(nice_step(0.3), 0.5);
  EXPECT_DOUBLE_EQ(nice_step(0.25), 0.5);
  EXPECT_DOUBLE_EQ(nice_step(0.1 + 0.1), 0.2);
  EXPECT_DOUBLE_EQ(nice_step(0.0023), 0.005);
  // 2.5 only when asked for.
  EXPECT_DOUBLE_EQ(nice_step(2.2, true), 2.5);
  EXPECT_DOUBLE_EQ(nice_step(0.021, true), 0.025);
  EXPECT_DOUBLE_EQ(nice_step(3, true), 5);
  // Nothing to round: 1.
  EXPECT_DOUBLE_EQ(nice_step(0), 1);
  EXPECT_DOUBLE_EQ(nice_step(-3), 1);
  EXPECT_DOUBLE_EQ(nice_step(NAN), 1);
  EXPECT_DOUBLE_EQ(nice_step(INFINITY), 1);
}

void expect_ticks(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(Ticks, TicksAreTheStepsMultiplesInsideTheRange) {
  // (1 − 0) / 4 = 0.25 → step 0.5.
  expect_ticks(nice_ticks(0, 1, 4), {0, 0.5, 1});
  // 0.2 is round already.
  expect_ticks(nice_ticks(0, 1, 5), {0, 0.2, 0.4, 0.6, 0.8, 1});
  // (137 − 1) / 5 = 27.2 → step 50; 0 is outside.
  expect_ticks(nice_ticks(1, 137, 5), {50, 100});
  // (0.7 − 0.1) / 3 = 0.2.
  expect_ticks(nice_ticks(0.1, 0.7, 3), {0.2, 0.4, 0.6});
  // Signed: (0.7 + 0.3) / 4 = 0.25 → 0.5; the tick at zero is +0, not −0.
  const std::vector<double> t = nice_ticks(-0.3, 0.7, 4);
  expect_ticks(t, {0, 0.5});
  EXPECT_FALSE(std::signbit(t[0]));
  // 500 / 4 = 125 → step 200.
  expect_ticks(nice_ticks(-250, 250, 4), {-200, 0, 200});
  // An empty range: its one value.
  expect_ticks(nice_ticks(3, 3, 4), {3});
  expect_ticks(nice_ticks(5, 2, 4), {5});
}

}  // namespace
}  // namespace attn
