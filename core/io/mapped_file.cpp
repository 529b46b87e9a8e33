// Regular-file reads and read-only memory maps for input a user supplies.
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace attn {
namespace {

// Opens a regular file for reading. O_NONBLOCK keeps a FIFO from blocking the open; it is then
// refused as not regular.
int open_regular(const std::string& path, struct stat& st, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": " + (errno == ENOENT ? std::string("no such file") : std::strerror(errno));
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    error = path + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

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
  struct stat st {};
  const int fd = open_regular(path, st, error);
  if (fd < 0) return false;
  size_ = static_cast<size_t>(st.st_size);
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

bool read_regular_file(const std::string& path, size_t max_bytes, std::string& out,
                       std::string& error) {
  struct stat st {};
  const int fd = open_regular(path, st, error);
  if (fd < 0) return false;
  const auto size = static_cast<unsigned long long>(st.st_size);
  if (size > max_bytes) {
    error = path + ": " + std::to_string(size) + " bytes is larger than the " +
            std::to_string(max_bytes) + " bytes such a file may have";
    ::close(fd);
    return false;
  }
  out.assign(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, &out[done], out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;  // the file shrank while being read
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  ::close(fd);
  return true;
}

}  // namespace attn
