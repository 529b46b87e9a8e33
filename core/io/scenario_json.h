// Scenarios as JSON files (docs/scenario.md): parsed with errors that name the file, the field and
// the index, and saved through a temporary file so a failure never leaves half a file.
#pragma once

#include <optional>
#include <string>

#include "attention/scenario.h"

namespace attn {

// `source` names the file in messages. The result has passed validate_scenario.
std::optional<Scenario> parse_scenario_json(const std::string& text, const std::string& source,
                                            std::string& error);
std::optional<Scenario> load_scenario_file(const std::string& path, std::string& error);
std::string scenario_to_json(const Scenario& s);
// Writes to a temporary file beside `path` and renames it, so a failure never leaves half a file.
bool save_scenario_file(const Scenario& s, const std::string& path, std::string& error);

}  // namespace attn
