// Looks up the data embedded into the binary at build time: the example scenarios
// (assets/examples/*.json), the window icon (assets/icons) and the web pages (assets/class/*.html).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn {
// Text of assets/examples/<name> (e.g. "fear-is.json"), or nullptr.
const char* embedded_example(const char* name);
std::vector<std::string> embedded_example_names();
// The icon's PNG file named by its size ("16x16", "32x32", "48x48", "64x64"); false for others.
bool embedded_icon_png(const std::string& size, const unsigned char*& data, size_t& bytes);
// Text of assets/class/<name> ("student.html": class mode's page; "lesson.html": the template
// of a lesson as one web page), or nullptr.
const char* embedded_class_page(const char* name);
}  // namespace attn
