// Looks up the OpenCL kernels and GLSL shaders embedded into the binary at build time.
#pragma once

#include <string>
#include <vector>

namespace attn {
// Returns the text of shaders/<name> (e.g. "attention.cl"), or nullptr if no such file was
// embedded.
const char* embedded_shader(const char* name);
std::vector<std::string> embedded_shader_names();
}  // namespace attn
