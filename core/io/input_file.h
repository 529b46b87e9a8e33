// The one way input files are read: regular files only, never more than a documented limit, so
// /dev/zero, a FIFO with no writer or a huge file is a clear error instead of a hang or gigabytes
// of memory (docs/robustness.md).
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// Limits on what one input file may hold, per kind (docs/robustness.md lists them). Readers check
// every size a file declares against the bytes really present before they allocate; these caps
// bound the file itself.
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kMaxScenarioFileBytes = 64 * kMiB;   // scenario JSON, the app's recovery file
constexpr uint64_t kMaxNpyFileBytes = 1024 * kMiB;      // one .npy tensor
constexpr uint64_t kMaxSeq2seqModelBytes = 256 * kMiB;  // a seq2seq model file
constexpr uint64_t kMaxSettingsFileBytes = 1 * kMiB;    // the app's settings.ini
constexpr uint64_t kDefaultInputLimit = 256 * kMiB;     // anything else read whole

// Reads the whole of `path` into `out`. Refuses anything but a regular file (directories, FIFOs,
// character devices such as /dev/zero, sockets) without blocking, and a file larger than `limit`
// bytes. On failure sets error to "cannot read '<path>': <reason>".
bool read_input_file(const std::string& path, uint64_t limit, std::string& out, std::string& error);

// read_input_file with kDefaultInputLimit.
bool read_text_file(const std::string& path, std::string& out, std::string& error);

// read_input_file with errors that start with the path ("<path>: <reason>"), as the model-folder
// readers (core/lm) word them.
bool read_regular_file(const std::string& path, size_t max_bytes, std::string& out,
                       std::string& error);

// The opening half of read_input_file, for readers that map a file instead of copying it
// (io/mapped_file.h): opens `path` for reading without blocking and checks that it is a regular
// file. Returns the descriptor and its size, or -1 with `why` saying what is wrong (without the
// path: "it is a FIFO (named pipe), not a regular file", "no such file or folder", ...).
int open_input_file(const std::string& path, uint64_t& size, std::string& why);

// "12.3 MB (12,345,678 bytes)": a byte count for messages.
std::string byte_size_text(uint64_t bytes);

// What a file type is called in messages ("a directory", "a FIFO (named pipe)", ...), from
// stat's st_mode.
std::string file_kind_text(unsigned mode);

}  // namespace attn
