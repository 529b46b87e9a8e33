// Bounded JSON parsing (see json_input.h).
#include "io/json_input.h"

namespace attn {

bool check_json_depth(const char* text, size_t size, int limit, std::string& error) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) {
        error = "arrays and objects are nested more than " + std::to_string(limit) +
                " levels deep at byte " + std::to_string(i);
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

std::optional<nlohmann::json> parse_json_input(const std::string& text, const std::string& source,
                                               std::string& error, int max_depth) {
  std::string why;
  if (!check_json_depth(text, max_depth, why)) {
    error = source + ": invalid JSON: " + why;
    return std::nullopt;
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    const std::string what = e.what();
    const size_t pos = what.find("] ");
    error = source + ": invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2));
  }
  return std::nullopt;
}

}  // namespace attn
