// Parsing of the mask flags into a MaskSpec and the checks of .npy inputs, with errors that name
// the flag and the file.
#include "cli/mask_flags.h"

#include <CLI/CLI.hpp>
#include <climits>
#include <cmath>
#include <sstream>

#include "attention/format.h"
#include "cli/cli.h"

namespace attn::cli {
namespace {

[[noreturn]] void usage_error(const std::string& message) { throw CliError{kExitUsage, message}; }

std::vector<int> parse_global(const std::string& text) {
  std::vector<int> out;
  std::stringstream s(text);
  std::string item;
  size_t index = 0;
  while (std::getline(s, item, ',')) {
    const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    const std::string t = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    bool digits = !t.empty() && t.size() <= 9;
    for (char c : t) digits = digits && c >= '0' && c <= '9';
    if (!digits)
      usage_error("--global: entry " + std::to_string(index) + " '" + t +
                  "' is not a position; expected non-negative integers like 0,5,9");
    out.push_back(std::stoi(t));
    ++index;
  }
  if (out.empty() || text.empty() || text.back() == ',')
    usage_error("--global: expected a comma-separated list of positions like 0,5,9, got '" + text +
                "'");
  return out;
}

void check_stack_shape(const std::string& flag_and_file, const char* what, const HeadStack& stack,
                       int rank, int heads, int n_q, int n_k) {
  const Matrix& m = stack[0];
  std::ostringstream expected;
  expected << "expected (n_q, n_k) = (" << n_q << ", " << n_k << ") or (H, n_q, n_k) = (" << heads
           << ", " << n_q << ", " << n_k << ")";
  if (m.rows() != n_q || m.cols() != n_k ||
      (stack.size() != 1 && static_cast<int>(stack.size()) != heads))
    usage_error(flag_and_file + ": " + what + " has shape " + npy_shape_text(stack, rank) + "; " +
                expected.str());
}

}  // namespace

void add_mask_flags(CLI::App& cmd, MaskFlags& f) {
  cmd.add_flag("--causal{top-left}", f.causal,
               "causal mask; --causal=lower-right aligns the last query with the last key "
               "(decoding with a KV cache)");
  cmd.add_option("--window", f.window, "sliding window: key j visible iff |p_i - j| <= W");
  cmd.add_option("--global", f.global,
                 "global positions I,J,... (see every key, seen by every query; relax --window)");
  cmd.add_option("--key-length", f.key_length, "keys j >= L are padding, hidden from every query");
  cmd.add_option("--mask", f.mask_file,
                 ".npy (n_q, n_k) or (H, n_q, n_k), bool or 0/1 numbers; nonzero = may attend");
  cmd.add_option("--bias", f.bias_file,
                 ".npy (n_q, n_k) or (H, n_q, n_k) float added to the scaled scores; -inf allowed");
}

LoadedMask load_mask_flags(const MaskFlags& f) {
  LoadedMask out;
  MaskSpec& m = out.spec;
  if (!f.causal.empty()) {
    if (f.causal == "top-left")
      m.causal = CausalAlign::kTopLeft;
    else if (f.causal == "lower-right")
      m.causal = CausalAlign::kLowerRight;
    else
      usage_error("--causal: expected top-left or lower-right (as --causal=lower-right), got '" +
                  f.causal + "'");
  }
  if (f.window) {
    if (*f.window < 0)
      usage_error("--window: expected an integer >= 0, got " + std::to_string(*f.window));
    m.window = *f.window;
  }
  if (f.global) m.global = parse_global(*f.global);
  if (f.key_length) {
    if (*f.key_length < 0)
      usage_error("--key-length: expected an integer >= 0, got " + std::to_string(*f.key_length));
    m.key_length = *f.key_length;
  }
  if (!f.mask_file.empty()) {
    NpyTensor t = read_npy_input("--mask", f.mask_file, NpyContent::kMask);
    out.mask_rank = t.rank;
    m.custom = std::move(t.heads);
  }
  if (!f.bias_file.empty()) {
    NpyTensor t = read_npy_input("--bias", f.bias_file, NpyContent::kFloat);
    out.bias_rank = t.rank;
    m.bias = std::move(t.heads);
  }
  return out;
}

void check_mask_against(const MaskFlags& f, const LoadedMask& lm, int heads, int n_q, int n_k) {
  const MaskSpec& m = lm.spec;
  if (m.key_length && *m.key_length > n_k)
    usage_error("--key-length: " + std::to_string(*m.key_length) +
                " is more than n_k = " + std::to_string(n_k) + " keys");
  const int span = std::max(n_q, n_k);
  for (size_t i = 0; i < m.global.size(); ++i)
    if (m.global[i] >= span)
      usage_error("--global: position " + std::to_string(m.global[i]) + " (entry " +
                  std::to_string(i) + ") is outside 0.." + std::to_string(span - 1) +
                  " (max(n_q, n_k) - 1)");
  if (!m.custom.empty()) {
    check_stack_shape("--mask " + f.mask_file, "mask", m.custom, lm.mask_rank, heads, n_q, n_k);
    check_finite_input(m.custom, lm.mask_rank, "--mask " + f.mask_file, "mask");
  }
  if (!m.bias.empty()) {
    check_stack_shape("--bias " + f.bias_file, "bias", m.bias, lm.bias_rank, heads, n_q, n_k);
    check_finite_input(m.bias, lm.bias_rank, "--bias " + f.bias_file, "bias", true);
  }
}

NpyTensor read_npy_input(const std::string& flag, const std::string& path, NpyContent content) {
  std::string error;
  std::optional<NpyTensor> t = read_npy(path, content, error);
  if (!t) usage_error(flag + " " + error);  // the reader's errors start with the path
  return std::move(*t);
}

std::string npy_shape_text(const HeadStack& heads, int rank) {
  std::ostringstream s;
  s << "(";
  if (rank == 3) s << heads.size() << ", ";
  s << heads[0].rows() << ", " << heads[0].cols() << ")";
  return s.str();
}

void check_finite_input(const HeadStack& heads, int rank, const std::string& flag_and_file,
                        const std::string& tensor, bool allow_neg_inf) {
  for (size_t h = 0; h < heads.size(); ++h) {
    const Matrix& m = heads[h];
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        const float x = m(i, j);
        if (std::isfinite(x) || (allow_neg_inf && std::isinf(x) && x < 0)) continue;
        std::ostringstream s;
        s << flag_and_file << ": " << tensor << "[";
        if (rank == 3) s << h << ", ";
        s << i << ", " << j << "] is " << format_value(x) << "; expected a finite number";
        if (allow_neg_inf) s << " or -inf";
        usage_error(s.str());
      }
  }
}

}  // namespace attn::cli
