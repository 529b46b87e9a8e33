// The date task's generator: seeded determinism, train/held-out disjointness by calendar date,
// length control, the calendar itself and the alphabets.
#include <gtest/gtest.h>

#include <set>

#include "seq2seq/dates.h"
#include "seq2seq/vocab.h"

namespace attn::s2s {
namespace {

std::vector<DateExample> make(int count, uint64_t seed, Split split, int lo = 1, int hi = 200) {
  DateSetOptions o;
  o.count = count;
  o.seed = seed;
  o.split = split;
  o.min_length = lo;
  o.max_length = hi;
  std::vector<DateExample> out;
  std::string error;
  EXPECT_TRUE(generate_dates(o, out, error)) << error;
  return out;
}

TEST(Seq2SeqDates, SameSeedSameData_DifferentSeedDifferentData) {
  const auto a = make(500, 3, Split::kTrain), b = make(500, 3, Split::kTrain);
  const auto c = make(500, 4, Split::kTrain);
  ASSERT_EQ(a.size(), 500u);
  int same = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].input, b[i].input);
    EXPECT_EQ(a[i].target, b[i].target);
    same += a[i].input == c[i].input ? 1 : 0;
  }
  EXPECT_LT(same, 10);
}

TEST(Seq2SeqDates, TrainAndHeldOutNeverShareADate) {
  std::set<std::string> train_dates;
  for (const auto& ex : make(20000, 1, Split::kTrain)) train_dates.insert(ex.target);
  const auto held = make(3000, 20261122, Split::kHeldOut);
  for (const auto& ex : held) EXPECT_EQ(train_dates.count(ex.target), 0u) << ex.target;
  // About a fifth of the calendar is held out.
  int held_days = 0;
  for (int n = 0; n < day_count(); ++n) held_days += is_held_out_date(n) ? 1 : 0;
  EXPECT_GT(held_days, day_count() / 6);
  EXPECT_LT(held_days, day_count() / 4);
}

TEST(Seq2SeqDates, KnownDatesInSeveralFormats) {
  // 2026-11-22 is a Sunday (checked against a printed calendar); 1950-01-01 too.
  const int n = day_number(2026, 11, 22);
  EXPECT_EQ(format_date(n, 4), "2026-11-22");
  EXPECT_EQ(format_date(n, 0), "22.11.2026");
  EXPECT_EQ(format_date(n, 9), "nov 22 26");
  EXPECT_EQ(format_date(n, 13), "sunday, 22 november 2026");
  EXPECT_EQ(format_date(n, 17), "sunday the 22nd of november, 2026");
  EXPECT_EQ(format_date(day_number(1950, 1, 1), 14), "sun 1 jan 1950");
  EXPECT_EQ(format_date(day_number(2000, 2, 29), 1), "29.2.00");
  EXPECT_EQ(format_date(day_number(2049, 12, 31), 5), "20491231");
  EXPECT_EQ(format_date(day_number(1999, 3, 3), 18), "march 3rd, 1999");
  EXPECT_EQ(format_date(day_number(2011, 1, 11), 16), "the 11th of january 2011");
  int y = 0, m = 0, d = 0;
  date_from_day_number(n, y, m, d);
  EXPECT_EQ(y * 10000 + m * 100 + d, 20261122);
  EXPECT_EQ(day_count(), 36525);  // 100 years with 25 leap days (2000 is one)
}

TEST(Seq2SeqDates, LengthControlAndAlphabet) {
  const Vocab in = default_input_vocab(), out = default_output_vocab();
  int lo = 1000, hi = 0;
  std::vector<int> ids;
  std::string error;
  for (const auto& ex : make(5000, 9, Split::kTrain)) {
    lo = std::min(lo, static_cast<int>(ex.input.size()));
    hi = std::max(hi, static_cast<int>(ex.input.size()));
    EXPECT_TRUE(encode(in, ex.input, ids, error)) << error;
    EXPECT_TRUE(encode(out, ex.target, ids, error)) << error;
    EXPECT_EQ(ex.target.size(), 10u);
  }
  EXPECT_LE(lo, 8);
  EXPECT_GE(hi, 90);
  for (const auto& ex : make(300, 2, Split::kHeldOut, 40, 50)) {
    EXPECT_GE(ex.input.size(), 40u);
    EXPECT_LE(ex.input.size(), 50u);
  }
  DateSetOptions bad;
  bad.min_length = 120;
  bad.max_length = 130;
  std::vector<DateExample> none;
  EXPECT_FALSE(generate_dates(bad, none, error));
  EXPECT_NE(error.find("120..130"), std::string::npos);
  EXPECT_FALSE(encode(in, "22 Nov", ids, error));
  EXPECT_NE(error.find("character 3"), std::string::npos) << error;
}

}  // namespace
}  // namespace attn::s2s
