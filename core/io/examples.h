// The built-in example scenarios (assets/examples/*.json, embedded into the binary).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/scenario.h"

namespace attn {

struct ExampleInfo {
  std::string name;
  std::string description;
};
// The built-in examples in a stable teaching order; fear-is-the first.
std::vector<ExampleInfo> list_examples();
std::optional<Scenario> load_example(const std::string& name, std::string& error);

}  // namespace attn
