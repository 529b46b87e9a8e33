// JSON from files a user can supply: the nesting depth is bounded before parsing, because
// nlohmann::json copies, compares and prints values recursively and a file of 10^5 nested
// brackets would overflow the stack (docs/robustness.md); and the field readers every such file
// (scenarios, lessons) shares, so their errors name the field in the same words.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
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

// A model folder's config.json: a JSON object nested at most kMaxJsonDepth levels, else
// "<path>: not valid JSON: …" or "<path>: expected a JSON object".
std::optional<nlohmann::json> parse_config_object(const std::string& text, const std::string& path,
                                                  std::string& error);

// A field that is not what it should be: `field` names it ("mask.window", "steps[2].head"; ""
// for the whole document), `what` says what was expected and what was found.
struct JsonFieldError {
  std::string field, what;
  // "field: what", or just `what` when no field is named.
  std::string message() const { return field.empty() ? what : field + ": " + what; }
};

[[noreturn]] inline void throw_field_error(const std::string& field, const std::string& what) {
  throw JsonFieldError{field, what};
}

// What a value is, for "expected X, got Y": "null", "a boolean", "a number", "a string \"abc\""
// (its first 20 bytes), "an array" or "an object".
std::string json_type_name(const nlohmann::json& j);

// The readers below throw JsonFieldError naming `field`.

// Every key of object `obj` (at `where`) is one of `allowed`: a misspelt field is an error, not
// silently ignored.
void check_json_keys(const nlohmann::json& obj, const std::string& where,
                     const std::set<std::string>& allowed);
std::string read_json_string(const nlohmann::json& j, const std::string& field);
// An integer in [lo, hi]; the default hi only keeps it an int.
constexpr int kJsonIntMax = 1000000000;
int read_json_int(const nlohmann::json& j, const std::string& field, int lo, int hi = kJsonIntMax);

}  // namespace attn
