// JSON from files a user can supply: the nesting depth is bounded before parsing, because
// nlohmann::json copies, compares and prints values recursively and a file of 10^5 nested
// brackets would overflow the stack (docs/robustness.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace attn {

// No file this program reads needs more than a handful of levels (a scenario's 3-D mask inside
// "mask" inside the top-level object is 5).
constexpr int kMaxJsonDepth = 64;

// Checks that arrays and objects in `text` nest at most `limit` levels (strings are skipped); on
// failure sets error to "nested more than N levels deep at byte B".
bool check_json_depth(const char* text, size_t size, int limit, std::string& error);
inline bool check_json_depth(const std::string& text, int limit, std::string& error) {
  return check_json_depth(text.data(), text.size(), limit, error);
}

// Parses `text` after check_json_depth; errors start with `source`: "<source>: invalid JSON: ...".
std::optional<nlohmann::json> parse_json_input(const std::string& text, const std::string& source,
                                               std::string& error, int max_depth = kMaxJsonDepth);

}  // namespace attn
