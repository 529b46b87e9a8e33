// Regular-file reads and read-only memory maps for input a user supplies.
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/input_file.h"

namespace attn {

MappedFile::~MappedFile() { close(); }

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    close();
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void MappedFile::close() {
  if (data_ && size_) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

bool MappedFile::open(const std::string& path, std::string& error) {
  close();
  path_ = path;
  uint64_t size = 0;
  std::string why;
  const int fd = open_input_file(path, size, why);  // the one opener (io/input_file.h)
  if (fd < 0) {
    error = path + ": " + why;
    return false;
  }
  size_ = static_cast<size_t>(size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = path + ": cannot map: " + std::strerror(errno);
      size_ = 0;
      ::close(fd);
      return false;
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  return true;
}

}  // namespace attn
