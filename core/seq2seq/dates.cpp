// Date generator for the seq2seq task: many input formats, one ISO output (see dates.h).
#include "seq2seq/dates.h"

#include <cstdio>
#include <iterator>

#include "seq2seq/tensor.h"

namespace attn::s2s {

namespace {

const char* const kMonths[] = {"january",   "february", "march",    "april",
                               "may",       "june",     "july",     "august",
                               "september", "october",  "november", "december"};
const char* const kWeekdays[] = {"monday", "tuesday",  "wednesday", "thursday",
                                 "friday", "saturday", "sunday"};

// Context around some dates, so inputs range from 6 to 112 characters and a long input holds the
// date far from its ends (the regime where a fixed-size summary struggles).
const char* const kPrefixes[] = {"on ",
                                 "due ",
                                 "born on ",
                                 "meeting on ",
                                 "deadline: ",
                                 "delivered on ",
                                 "the concert is on ",
                                 "invoice date ",
                                 "please note that the meeting moved to ",
                                 "the package should now arrive on "};
// Some suffixes carry digits, so a summary read left to right is overwritten after the date.
const char* const kSuffixes[] = {" at noon",
                                 " in the morning",
                                 " at 9 am",
                                 " at 10:30",
                                 " (ref 4471)",
                                 ", room 204",
                                 ", as agreed",
                                 " unless the weather turns bad",
                                 " according to the revised schedule 7b"};

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int days_in_month(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

std::string two(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", v % 100);
  return buf;
}
std::string ordinal(int d) {
  const char* suffix = "th";
  if (d % 10 == 1 && d != 11) suffix = "st";
  if (d % 10 == 2 && d != 12) suffix = "nd";
  if (d % 10 == 3 && d != 13) suffix = "rd";
  return std::to_string(d) + suffix;
}

}  // namespace

const std::vector<std::string>& date_format_names() {
  static const std::vector<std::string> kNames = {"dd.mm.yyyy",
                                                  "d.m.yy",
                                                  "mm/dd/yyyy",
                                                  "m/d/yy",
                                                  "yyyy-mm-dd",
                                                  "yyyymmdd",
                                                  "yyyy/mm/dd",
                                                  "d mon yyyy",
                                                  "dd-mon-yyyy",
                                                  "mon d yy",
                                                  "mon d, yyyy",
                                                  "month d, yyyy",
                                                  "d month yyyy",
                                                  "weekday, d month yyyy",
                                                  "wkd d mon yyyy",
                                                  "weekday, month d, yyyy",
                                                  "the dth of month yyyy",
                                                  "weekday the dth of month, yyyy",
                                                  "month dth, yyyy",
                                                  "wkd, mon. d, 'yy"};
  return kNames;
}

int day_number(int year, int month, int day) {
  int n = 0;
  for (int y = kFirstYear; y < year; ++y) n += is_leap(y) ? 366 : 365;
  for (int m = 1; m < month; ++m) n += days_in_month(year, m);
  return n + day - 1;
}

int day_count() { return day_number(kLastYear, 12, 31) + 1; }

void date_from_day_number(int n, int& year, int& month, int& day) {
  year = kFirstYear;
  while (n >= (is_leap(year) ? 366 : 365)) n -= is_leap(year++) ? 366 : 365;
  month = 1;
  while (n >= days_in_month(year, month)) n -= days_in_month(year, month++);
  day = n + 1;
}

bool is_held_out_date(int n) {
  Rng h(0xD47E5u ^ (static_cast<uint64_t>(n) << 20));
  return h.next() % 5 == 0;  // about 20% of the calendar
}

std::string format_date(int n, int format) {
  int y = 0, m = 0, d = 0;
  date_from_day_number(n, y, m, d);
  const std::string month = kMonths[m - 1];
  const std::string mon = month.substr(0, 3);
  // 1950-01-01 was a Sunday (index 6 with Monday = 0).
  const std::string wd = kWeekdays[(n + 6) % 7];
  const std::string wkd = wd.substr(0, 3);
  const std::string yyyy = std::to_string(y), yy = two(y), dd = two(d), mm = two(m);
  const std::string ds = std::to_string(d), ms = std::to_string(m);
  switch (format) {
    case 0:
      return dd + "." + mm + "." + yyyy;
    case 1:
      return ds + "." + ms + "." + yy;
    case 2:
      return mm + "/" + dd + "/" + yyyy;
    case 3:
      return ms + "/" + ds + "/" + yy;
    case 4:
      return yyyy + "-" + mm + "-" + dd;
    case 5:
      return yyyy + mm + dd;
    case 6:
      return yyyy + "/" + mm + "/" + dd;
    case 7:
      return ds + " " + mon + " " + yyyy;
    case 8:
      return dd + "-" + mon + "-" + yyyy;
    case 9:
      return mon + " " + ds + " " + yy;
    case 10:
      return mon + " " + ds + ", " + yyyy;
    case 11:
      return month + " " + ds + ", " + yyyy;
    case 12:
      return ds + " " + month + " " + yyyy;
    case 13:
      return wd + ", " + ds + " " + month + " " + yyyy;
    case 14:
      return wkd + " " + ds + " " + mon + " " + yyyy;
    case 15:
      return wd + ", " + month + " " + ds + ", " + yyyy;
    case 16:
      return "the " + ordinal(d) + " of " + month + " " + yyyy;
    case 17:
      return wd + " the " + ordinal(d) + " of " + month + ", " + yyyy;
    case 18:
      return month + " " + ordinal(d) + ", " + yyyy;
    default:
      return wkd + ", " + mon + ". " + ds + ", '" + yy;
  }
}

bool generate_dates(const DateSetOptions& o, std::vector<DateExample>& out, std::string& error) {
  out.clear();
  if (o.count < 0) {
    error = "count must be >= 0";
    return false;
  }
  const int formats = static_cast<int>(date_format_names().size());
  // Shortest and longest possible inputs bound what a length window can admit.
  if (o.min_length > o.max_length || o.max_length < 6 || o.min_length > 112) {
    error = "input length bounds " + std::to_string(o.min_length) + ".." +
            std::to_string(o.max_length) + " admit no date (inputs are 6 to 112 characters)";
    return false;
  }
  Rng rng(o.seed * 0x2545F4914F6CDD1Dull + (o.split == Split::kTrain ? 11 : 23));
  const int days = day_count();
  out.reserve(static_cast<size_t>(o.count));
  long attempts = 0;
  while (static_cast<int>(out.size()) < o.count) {
    if (++attempts > 1000L + 2000L * o.count) {
      error = "input length bounds " + std::to_string(o.min_length) + ".." +
              std::to_string(o.max_length) + " admit too few dates";
      return false;
    }
    const int n = rng.below(days);
    const int f = rng.below(formats);
    const int context = rng.below(4);  // 0: bare, 1: prefix, 2: suffix, 3: both
    const int pre = rng.below(static_cast<int>(std::size(kPrefixes)));
    const int suf = rng.below(static_cast<int>(std::size(kSuffixes)));
    if (is_held_out_date(n) != (o.split == Split::kHeldOut)) continue;
    DateExample ex;
    ex.input = format_date(n, f);
    if (context & 1) ex.input = kPrefixes[pre] + ex.input;
    if (context & 2) ex.input += kSuffixes[suf];
    const int len = static_cast<int>(ex.input.size());
    if (len < o.min_length || len > o.max_length) continue;
    ex.target = format_date(n, 4);
    ex.format = f;
    out.push_back(std::move(ex));
  }
  return true;
}

}  // namespace attn::s2s
