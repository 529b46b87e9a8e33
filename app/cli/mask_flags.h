// The mask flags of cli.md (--causal, --window, --global, --key-length, --mask, --bias) and the
// .npy input checks shared by the subcommands that take tensors from files (compute, bench).
#pragma once

#include <optional>
#include <string>

#include "attention/attention.h"
#include "io/npy.h"

namespace CLI {
class App;
}

namespace attn::cli {

// The raw flag values, filled by CLI11.
struct MaskFlags {
  std::string causal;  // "" when absent; bare --causal gives "top-left"
  std::optional<int> window;
  std::optional<std::string> global;  // "I,J,..."
  std::optional<int> key_length;
  std::string mask_file, bias_file;
};

// Adds the mask flags to a subcommand.
void add_mask_flags(CLI::App& cmd, MaskFlags& flags);

// The parsed masks, with the ranks the mask/bias files had (0 when not given), so shape errors
// can quote the file's own shape.
struct LoadedMask {
  MaskSpec spec;
  int mask_rank = 0, bias_rank = 0;
};

// Parses the flags and reads --mask/--bias. Throws CliError (exit 2) naming the flag or file.
LoadedMask load_mask_flags(const MaskFlags& flags);

// Checks the loaded masks against the problem's H, n_q, n_k and their values (mask finite, bias
// finite or -inf). Throws CliError (exit 2) naming the flag and file.
void check_mask_against(const MaskFlags& flags, const LoadedMask& mask, int heads, int n_q,
                        int n_k);

// Reads a .npy input for `flag` or throws CliError (exit 2): "--q q.npy: <what is wrong>".
NpyTensor read_npy_input(const std::string& flag, const std::string& path, NpyContent content);

// "(2, 5, 3)": the shape as the file had it (rank 2: one head).
std::string npy_shape_text(const HeadStack& heads, int rank);

// Throws CliError (exit 2) at the first non-finite value, e.g.
// "--q q.npy: Q[0, 1, 2] is nan; expected a finite number", indexed as in the file.
void check_finite_input(const HeadStack& heads, int rank, const std::string& flag_and_file,
                        const std::string& tensor, bool allow_neg_inf = false);

}  // namespace attn::cli
