// Bounded JSON parsing and the field readers inputs share (see json_input.h).
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

std::optional<nlohmann::json> parse_config_object(const std::string& text, const std::string& path,
                                                  std::string& error) {
  std::string deep;
  if (!check_json_depth(text, kMaxJsonDepth, deep)) {
    error = path + ": not valid JSON: " + deep;
    return std::nullopt;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    error = path + ": not valid JSON: " + e.what();
    return std::nullopt;
  }
  if (!j.is_object()) {
    error = path + ": expected a JSON object";
    return std::nullopt;
  }
  return j;
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

std::string json_type_name(const nlohmann::json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string \"" + j.get<std::string>().substr(0, 20) + "\"";
  if (j.is_array()) return "an array";
  return "an object";
}

void check_json_keys(const nlohmann::json& obj, const std::string& where,
                     const std::set<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!allowed.count(it.key())) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw_field_error(where.empty() ? it.key() : where + "." + it.key(),
                        "unknown field; expected one of " + list);
    }
}

std::string read_json_string(const nlohmann::json& j, const std::string& field) {
  if (!j.is_string()) throw_field_error(field, "expected a string, got " + json_type_name(j));
  return j.get<std::string>();
}

int read_json_int(const nlohmann::json& j, const std::string& field, int lo, int hi) {
  if (!j.is_number_integer() && !j.is_number_unsigned())
    throw_field_error(field, "expected an integer, got " + json_type_name(j));
  // Unsigned values past long long's range read as negative: compare them as unsigned.
  const bool huge = j.is_number_unsigned() && j.get<unsigned long long>() > 0x7fffffffffffffffULL;
  const long long v = huge ? static_cast<long long>(kJsonIntMax) + 1 : j.get<long long>();
  if (v < lo || v > hi)
    throw_field_error(field, "expected an integer " +
                                 (hi == kJsonIntMax ? ">= " + std::to_string(lo)
                                                    : "from " + std::to_string(lo) + " to " +
                                                          std::to_string(hi)) +
                                 ", got " + (huge ? j.dump() : std::to_string(v)));
  return static_cast<int>(v);
}

}  // namespace attn
