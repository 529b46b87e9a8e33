// Looks up the example scenarios embedded into the binary at build time (assets/examples/*.json).
#pragma once

#include <string>
#include <vector>

namespace attn {
// Text of assets/examples/<name> (e.g. "fear-is.json"), or nullptr.
const char* embedded_example(const char* name);
std::vector<std::string> embedded_example_names();
}  // namespace attn
