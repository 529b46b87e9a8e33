// The synthetic translation task: human-readable dates in many formats ("tuesday, 22 november
// 2026", "nov 22 26", "22.11.2026") to ISO dates ("2026-11-22"). Seeded and deterministic, with
// train and held-out sets that never share a calendar date.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn::s2s {

struct DateExample {
  std::string input;   // e.g. "tuesday, 22 november 2026"
  std::string target;  // e.g. "2026-11-22"
  int format = 0;      // index into date_format_names() (context phrases aside)
};

enum class Split { kTrain, kHeldOut };

struct DateSetOptions {
  int count = 1000;
  uint64_t seed = 1;
  Split split = Split::kTrain;
  int min_length = 1;  // input length bounds in characters (inclusive)
  int max_length = 200;
};

// Dates run from 1950-01-01 to 2049-12-31, so a two-digit year is unambiguous (50–99 → 19xx).
constexpr int kFirstYear = 1950;
constexpr int kLastYear = 2049;

// One example name per format, e.g. "dd.mm.yyyy", in the order of DateExample::format.
const std::vector<std::string>& date_format_names();
// Days since 1950-01-01 → (year, month 1–12, day 1–31) and back.
void date_from_day_number(int n, int& year, int& month, int& day);
int day_number(int year, int month, int day);
int day_count();
// Whether a date (day number) belongs to the held-out split: a fixed hash of the date, so the
// split is the same for every seed and a held-out date never appears in training.
bool is_held_out_date(int day_number);
// Writes the date in one format.
std::string format_date(int day_number, int format);
// Generates `count` examples: a seeded date from the split, a seeded format, for three in four a
// context phrase before and/or after ("meeting on …", "… at 10:30"), kept only when the input
// length is within bounds. Returns false with `error` when the bounds admit no format.
bool generate_dates(const DateSetOptions& options, std::vector<DateExample>& out,
                    std::string& error);

}  // namespace attn::s2s
