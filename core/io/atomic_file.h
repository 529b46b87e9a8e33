// Whole-file reads and atomic writes (temporary file + rename), so no output is ever half written.
#pragma once

#include <string>

namespace attn {

// Reads the whole file; on failure sets error to "cannot read '<path>': <reason>".
bool read_text_file(const std::string& path, std::string& out, std::string& error);
// Writes `data` to a temporary file in the same folder, flushes it, and renames it over `path`.
// On failure nothing at `path` changes and error says why.
bool write_file_atomically(const std::string& path, const std::string& data, std::string& error);

}  // namespace attn
