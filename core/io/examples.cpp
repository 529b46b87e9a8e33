// The built-in example scenarios, embedded from assets/examples/*.json.
#include "io/examples.h"

#include <algorithm>

#include "attention/scenario.h"
#include "io/embedded_assets.h"
#include "io/scenario_json.h"

namespace attn {
namespace {
// Teaching order: the seed's two tables first, then the variants.
const char* const kOrder[] = {
    "fear-is-the", "fear-is", "cross-attention", "padding",     "sliding-window", "multi-head",
    "mqa",         "gqa",     "linformer",       "multi-token", "head-mixing",    "additive"};
}  // namespace

std::vector<ExampleInfo> list_examples() {
  std::vector<std::string> names;
  for (const std::string& file : embedded_example_names())
    if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0)
      names.push_back(file.substr(0, file.size() - 5));
  auto rank = [](const std::string& n) {
    for (size_t i = 0; i < std::size(kOrder); ++i)
      if (n == kOrder[i]) return i;
    return std::size(kOrder);
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  std::vector<ExampleInfo> out;
  for (const std::string& n : names) {
    std::string error;
    std::optional<Scenario> s = load_example(n, error);
    out.push_back({n, s ? s->description : "(invalid: " + error + ")"});
  }
  return out;
}

std::optional<Scenario> load_example(const std::string& name, std::string& error) {
  const char* text = embedded_example((name + ".json").c_str());
  if (!text) {
    error = "example: unknown example '" + name + "'";
    return std::nullopt;
  }
  std::optional<Scenario> s = parse_scenario_json(text, "example " + name, error);
  if (s) s->name = name;
  return s;
}

}  // namespace attn
