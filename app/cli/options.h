// Checks for command-line values shared by every subcommand, so every flag of a kind is refused
// the same way: floating-point flags must be finite and in their range (CLI::Range lets NaN pass,
// as NaN compares false), unsigned integers must not be negative (CLI11 would wrap -1 to 2^64-1),
// and names must not be empty (an empty --step or --colormap is not "the default").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace attn::cli {

// A finite number in [lo, hi]; the error names the range, e.g. "expected a finite number in
// 1e-07..1, got nan".
CLI::Validator finite_in(double lo, double hi);
// A finite number > 0.
CLI::Validator finite_positive();
// Digits only: 0 .. 2^64-1 without a sign.
CLI::Validator unsigned_integer();
// Any text but the empty string.
CLI::Validator non_empty();

}  // namespace attn::cli
