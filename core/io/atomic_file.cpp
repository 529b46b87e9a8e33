// Atomic outputs (see atomic_file.h): temporary files beside the targets, a signal-safe list of
// the named ones to remove on SIGINT/SIGTERM/SIGHUP, and an all-or-none commit.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace attn {
namespace {

// ---------------------------------------------------------------- clean-up on signals

// Absolute paths of the named temporary files that exist right now. The handler may run at any
// moment, so the list is fixed-size and each slot is published with an atomic state.
constexpr int kSlots = 128;
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 holds a path
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
std::atomic<bool> g_named_for_testing{false};
const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temp_files_and_die(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
  // Die of the same signal, so the parent sees what happened.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Installs the handler for the signals whose action is still the default (a program's own
// handler is left alone), once.
void install_cleanup_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  for (int sig : kCleanupSignals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_temp_files_and_die;
    sigemptyset(&sa.sa_mask);
    for (int other : kCleanupSignals) sigaddset(&sa.sa_mask, other);
    ::sigaction(sig, &sa, nullptr);
  }
}

// Returns the slot now holding `path`, or -1 when the list is full or the path too long (the
// file is then only removed by discard()).
int register_temp(const std::string& path) {
  install_cleanup_handlers();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2);
    return i;
  }
  return -1;
}

void unregister_temp(int& slot) {
  if (slot >= 0) g_slots[slot].state.store(0);
  slot = -1;
}

// Blocks SIGINT/SIGTERM/SIGHUP while the renames of a commit run, so they happen all together.
struct BlockSignals {
  sigset_t old;
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kCleanupSignals) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &old);
  }
  ~BlockSignals() { ::pthread_sigmask(SIG_SETMASK, &old, nullptr); }
};

// ---------------------------------------------------------------- names and modes

std::string random_hex() {
  unsigned char bytes[8];
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    // No entropy yet (early boot): time, pid and a counter still make collisions unlikely, and
    // O_EXCL makes a collision a retry, never a shared file.
    static std::atomic<uint64_t> counter{0};
    uint64_t x =
        static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 32) ^ (counter++ * 0x9E3779B97F4A7C15ull);
    std::memcpy(bytes, &x, sizeof bytes);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

// ".NAME.attn-tmp-XXXXXXXXXXXXXXXX" (or .attn-bak- for a commit's backups), within NAME_MAX.
std::string temp_name(const std::string& name, const char* marker) {
  return "." + name.substr(0, 200) + marker + random_hex();
}

mode_t current_umask() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::strtol(line.c_str() + 6, nullptr, 8));
  const mode_t m = ::umask(022);  // no /proc: read it the old way
  ::umask(m);
  return m;
}

bool proc_fd_available() {
  static const bool available = ::access("/proc/self/fd", X_OK) == 0;
  return available;
}

}  // namespace

// ---------------------------------------------------------------- one output

struct AtomicOutputs::Output {
  std::string path;       // as the caller gave it, for messages
  std::string dir, name;  // the resolved target: absolute folder and file name
  int dir_fd = -1;
  int fd = -1;
  bool unnamed = false;  // O_TMPFILE: no name until commit
  std::string temp;      // the temporary file's name in dir, once it has one
  int temp_slot = -1;
  bool existed = false;  // the target existed when added
  struct stat target {};
  std::string backup;  // commit: hard link to the old target
  int backup_slot = -1;
  bool failed = false;

  std::string abs(const std::string& n) const { return dir + "/" + n; }
  void remove_temp() {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (!temp.empty()) ::unlinkat(dir_fd, temp.c_str(), 0);
    temp.clear();
    unregister_temp(temp_slot);
  }
  void remove_backup() {
    if (!backup.empty()) ::unlinkat(dir_fd, backup.c_str(), 0);
    backup.clear();
    unregister_temp(backup_slot);
  }
  ~Output() {
    remove_temp();
    remove_backup();
    if (dir_fd >= 0) ::close(dir_fd);
  }
};

AtomicOutputs::AtomicOutputs() = default;
AtomicOutputs::~AtomicOutputs() { discard(); }

const std::string& AtomicOutputs::path(int index) const {
  return outputs_[static_cast<size_t>(index)]->path;
}

bool AtomicOutputs::fail(Output& o, const std::string& why, std::string& error) {
  error = "cannot write '" + o.path + "': " + why;
  o.failed = true;
  return false;
}

int AtomicOutputs::add(const std::string& path, std::string& error) {
  install_cleanup_handlers();  // before anything exists, so a program's own handlers chain to it
  auto out = std::make_unique<Output>();
  Output& o = *out;
  o.path = path;
  auto refuse = [&](const std::string& why) {
    error = "cannot write '" + path + "': " + why;
    return -1;
  };
  if (path.empty()) return refuse("the file name is empty");
  if (path.back() == '/') return refuse("it names a folder; expected a file name");

  // Follow a symbolic link to the file it names; refuse one that points nowhere.
  std::string target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) return refuse("it is a symbolic link to a missing file or folder");
    target = real;
    std::free(real);
  }
  o.existed = ::stat(target.c_str(), &o.target) == 0;
  if (!o.existed && errno != ENOENT) return refuse(std::strerror(errno));
  if (o.existed && !S_ISREG(o.target.st_mode))
    return refuse("it is " + file_kind_text(o.target.st_mode) +
                  "; only regular files are replaced (give a new file name)");
  if (o.existed && ::access(target.c_str(), W_OK) != 0)
    return refuse(errno == EACCES || errno == EROFS
                      ? std::string("the file is read-only (") + std::strerror(errno) + ")"
                      : std::string(std::strerror(errno)));

  const size_t slash = target.find_last_of('/');
  const std::string folder =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  o.name = slash == std::string::npos ? target : target.substr(slash + 1);
  if (o.name == "." || o.name == "..") return refuse("it names a folder; expected a file name");
  char* real_dir = ::realpath(folder.c_str(), nullptr);
  if (!real_dir)
    return refuse(errno == ENOENT ? "folder '" + folder + "' does not exist"
                                  : "folder '" + folder + "': " + std::strerror(errno));
  o.dir = real_dir;
  std::free(real_dir);
  if (o.dir == "/") o.dir.clear();  // abs() adds the slash
  o.dir_fd = ::open(o.dir.empty() ? "/" : o.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (o.dir_fd < 0)
    return refuse(errno == ENOTDIR ? "'" + folder + "' is not a folder"
                                   : "folder '" + folder + "': " + std::strerror(errno));

  // The same file twice in one command (--weights equal to --out, by any name) would leave one
  // output holding the other's bytes.
  for (const auto& other : outputs_) {
    const bool same_name = other->dir == o.dir && other->name == o.name;
    const bool same_file = o.existed && other->existed && other->target.st_dev == o.target.st_dev &&
                           other->target.st_ino == o.target.st_ino;
    if (same_name || same_file)
      return refuse("it is the same file as '" + other->path + "', another output of this command");
  }

  // The temporary file: unnamed where the file system allows it, else a fresh random name.
  if (!g_named_for_testing.load() && proc_fd_available()) {
    o.fd = ::openat(o.dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (o.fd >= 0) {
      o.unnamed = true;
    } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
      return refuse("cannot create a file in folder '" + folder + "': " + std::strerror(errno));
    }
  }
  for (int attempt = 0; o.fd < 0 && attempt < 100; ++attempt) {
    o.temp = temp_name(o.name, kTempFileMarker);
    o.temp_slot = register_temp(o.abs(o.temp));
    o.fd = ::openat(o.dir_fd, o.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
    if (o.fd >= 0) break;
    const int e = errno;
    o.temp.clear();
    unregister_temp(o.temp_slot);
    if (e != EEXIST)
      return refuse("cannot create a file in folder '" + folder + "': " + std::strerror(e));
  }
  if (o.fd < 0) return refuse("cannot create a temporary file in folder '" + folder + "'");

  // The replacement keeps the target's owner (where allowed) and permission bits; fchown first,
  // as it clears set-user-ID bits.
  if (o.existed && (o.target.st_uid != ::geteuid() || o.target.st_gid != ::getegid()) &&
      ::fchown(o.fd, o.target.st_uid, o.target.st_gid) != 0 &&
      ::fchown(o.fd, static_cast<uid_t>(-1), o.target.st_gid) != 0) {
    // Only root may give a file away: the replacement stays ours, with the target's mode.
  }
  const mode_t mode = o.existed ? (o.target.st_mode & 07777) : (0666 & ~current_umask());
  if (::fchmod(o.fd, mode) != 0) return refuse(std::strerror(errno));

  outputs_.push_back(std::move(out));
  return static_cast<int>(outputs_.size()) - 1;
}

bool AtomicOutputs::write(int index, const void* data, size_t size, std::string& error) {
  Output& o = *outputs_[static_cast<size_t>(index)];
  if (o.failed || o.fd < 0) return fail(o, "an earlier write failed", error);
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(o.fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(o, std::strerror(errno), error);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool AtomicOutputs::write(int index, const std::string& data, std::string& error) {
  return write(index, data.data(), data.size(), error);
}

bool AtomicOutputs::commit(std::string& error) {
  // SIGINT/SIGTERM/SIGHUP wait until the commit is over (the handler then removes what is left),
  // so they cannot stop it between two renames.
  BlockSignals block;
  // 1. Every file flushed and given a name in its folder; nothing visible has changed yet.
  for (auto& op : outputs_) {
    Output& o = *op;
    if (o.failed || o.fd < 0) {
      fail(o, "an earlier write failed", error);
      discard();
      return false;
    }
    if (::fsync(o.fd) != 0) {
      fail(o, std::strerror(errno), error);
      discard();
      return false;
    }
    for (int attempt = 0; o.unnamed && o.temp.empty() && attempt < 100; ++attempt) {
      const std::string name = temp_name(o.name, kTempFileMarker);
      o.temp_slot = register_temp(o.abs(name));
      const std::string proc = "/proc/self/fd/" + std::to_string(o.fd);
      if (::linkat(AT_FDCWD, proc.c_str(), o.dir_fd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        o.temp = name;
        break;
      }
      const int e = errno;
      unregister_temp(o.temp_slot);
      if (e != EEXIST) {
        fail(o, std::strerror(e), error);
        discard();
        return false;
      }
    }
    if (o.temp.empty() || ::close(o.fd) != 0) {
      o.fd = -1;
      fail(o, o.temp.empty() ? "cannot name the temporary file" : std::strerror(errno), error);
      discard();
      return false;
    }
    o.fd = -1;
  }

  // 2. The renames. With several outputs, each existing target is first hard-linked to a backup
  // so a failed rename can be undone.
  {
    const bool several = outputs_.size() > 1;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      Output& o = *outputs_[i];
      struct stat now {};
      if (several && ::fstatat(o.dir_fd, o.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0) {
        const std::string name = temp_name(o.name, ".attn-bak-");
        o.backup_slot = register_temp(o.abs(name));
        if (::linkat(o.dir_fd, o.name.c_str(), o.dir_fd, name.c_str(), 0) == 0)
          o.backup = name;
        else
          unregister_temp(o.backup_slot);  // no hard links here: this one cannot be put back
      }
      if (::renameat(o.dir_fd, o.temp.c_str(), o.dir_fd, o.name.c_str()) == 0) {
        o.temp.clear();
        unregister_temp(o.temp_slot);
        continue;
      }
      fail(o, std::strerror(errno), error);
      for (size_t j = 0; j < i; ++j) {  // undo the renames already done
        Output& d = *outputs_[j];
        if (!d.backup.empty()) {
          if (::renameat(d.dir_fd, d.backup.c_str(), d.dir_fd, d.name.c_str()) == 0)
            d.backup.clear(), unregister_temp(d.backup_slot);
        } else if (!d.existed) {
          ::unlinkat(d.dir_fd, d.name.c_str(), 0);
        }
      }
      discard();
      return false;
    }
  }

  // 3. Done: drop the backups and make the new names durable.
  for (auto& op : outputs_) {
    op->remove_backup();
    ::fsync(op->dir_fd);
  }
  outputs_.clear();
  return true;
}

void AtomicOutputs::discard() { outputs_.clear(); }

bool write_file_atomically(const std::string& path, const std::string& data, std::string& error) {
  AtomicOutputs out;
  const int i = out.add(path, error);
  return i >= 0 && out.write(i, data, error) && out.commit(error);
}

void use_named_temp_files_for_testing(bool on) { g_named_for_testing.store(on); }

}  // namespace attn
