// Reading input files: regular files only, capped (see input_file.h).
#include "io/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attn {

std::string byte_size_text(uint64_t bytes) {
  std::string digits = std::to_string(bytes);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<size_t>(at), ",");
  if (bytes < 10000) return digits + " bytes";
  const char* units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double x = static_cast<double>(bytes);
  int u = -1;
  while (x >= 1000 && u < 5) x /= 1000, ++u;
  char head[32];
  std::snprintf(head, sizeof head, "%.1f %s", x, units[u]);
  return std::string(head) + " (" + digits + " bytes)";
}

std::string file_kind_text(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

int open_input_file(const std::string& path, uint64_t& size, std::string& why) {
  // O_NONBLOCK: opening a FIFO that has no writer returns at once instead of waiting forever;
  // the type check below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    why = errno == ENOENT ? "no such file or folder" : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "it is " + file_kind_text(st.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

namespace {

// read_input_file with the reason alone in `why`.
bool read_input(const std::string& path, uint64_t limit, std::string& out, std::string& why) {
  uint64_t size = 0;
  const int fd = open_input_file(path, size, why);
  if (fd < 0) return false;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (size > limit) {
    why = "it is " + byte_size_text(size) + "; files of this kind may hold at most " +
          byte_size_text(limit) + " (docs/robustness.md)";
    return false;
  }
  out.clear();
  out.reserve(static_cast<size_t>(size));
  // Read until the end, whatever st_size said (the file may change while it is read), but never
  // past the limit.
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      why = "it grew past " + byte_size_text(limit) +
            " while it was read, the most files of this kind may hold (docs/robustness.md)";
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool read_input_file(const std::string& path, uint64_t limit, std::string& out,
                     std::string& error) {
  std::string why;
  if (read_input(path, limit, out, why)) return true;
  error = "cannot read '" + path + "': " + why;
  return false;
}

bool read_regular_file(const std::string& path, size_t max_bytes, std::string& out,
                       std::string& error) {
  std::string why;
  if (read_input(path, max_bytes, out, why)) return true;
  error = path + ": " + why;
  return false;
}

bool read_text_file(const std::string& path, std::string& out, std::string& error) {
  return read_input_file(path, kDefaultInputLimit, out, error);
}

}  // namespace attn
