// The shared value checks of options.h.
#include "cli/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "attention/format.h"

namespace attn::cli {
namespace {

// The number CLI11 will store, or NaN when the text is not one (CLI11 reports that itself).
bool parse_double(const std::string& text, double& x) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  x = std::strtod(text.c_str(), &end);
  return end && *end == '\0';
}

}  // namespace

CLI::Validator finite_in(double lo, double hi) {
  const std::string range = format_value(lo) + ".." + format_value(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        double x = 0;
        if (!parse_double(text, x)) return "expected a number in " + range + ", got '" + text + "'";
        if (!std::isfinite(x) || x < lo || x > hi)
          return "expected a finite number in " + range + ", got " + text;
        return "";
      },
      "FLOAT in " + range);
}

CLI::Validator finite_positive() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double x = 0;
        if (!parse_double(text, x)) return "expected a number > 0, got '" + text + "'";
        if (!std::isfinite(x) || !(x > 0)) return "expected a finite number > 0, got " + text;
        return "";
      },
      "FLOAT > 0");
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        bool digits = !text.empty() && text.size() <= 20;
        for (char c : text) digits = digits && c >= '0' && c <= '9';
        if (!digits) return "expected a non-negative integer, got '" + text + "'";
        errno = 0;
        std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return "expected an integer below 2^64, got " + text;
        return "";
      },
      "UINT");
}

CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "expected a value, got an empty string" : "";
      },
      "TEXT");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double x = 0;
        if (parse_double(text, x) && !std::isfinite(x))
          return "expected a finite number, got " + text;
        return "";  // not a number at all: CLI11's own conversion reports it
      },
      "");
}

void require_finite_floats(CLI::App& app) {
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name().rfind("FLOAT", 0) == 0) o->check(finite_number());
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    require_finite_floats(*sub);
}

}  // namespace attn::cli
