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
// A finite number (not nan, inf or -inf); no description, so --help is unchanged.
CLI::Validator finite_number();

// The rule for every floating-point flag, applied once to the whole command line after every
// subcommand is registered: each option whose type is a floating-point number (CLI11's "FLOAT",
// single values and lists) also gets finite_number(), so `--weight-decay nan` is refused with the
// flag's name even where its own check (CLI::Range lets NaN through) would accept it.
void require_finite_floats(CLI::App& app);

}  // namespace attn::cli
