// Reading files a user names, as untrusted input: regular files only (no folders, FIFOs or
// devices that would block or never end), sizes checked before anything is allocated, and large
// files mapped read-only instead of copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/input_file.h"  // read_regular_file

namespace attn {

// A read-only memory map of a whole regular file. Move-only; unmapped on destruction.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;

  // Maps `path`; on failure sets error to "<path>: <reason>" (missing, not a regular file, …).
  bool open(const std::string& path, std::string& error);
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void close();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace attn
