// Atomic outputs (see atomic_file.h): temporary files beside the targets, a signal-safe list of
// the named ones to remove on SIGINT/SIGTERM/SIGHUP, and an all-or-none commit.
#include "io/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
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
// Folders created by NewFolder and not yet kept, removed (when empty) after the files above.
constexpr int kDirSlots = 32;
Slot g_dir_slots[kDirSlots];
std::atomic<bool> g_named_for_testing{false};
const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temp_files_and_die(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
  for (int i = kDirSlots - 1; i >= 0; --i)  // deepest first: parents were registered first
    if (g_dir_slots[i].state.load() == 2) ::rmdir(g_dir_slots[i].path);
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
int register_in(Slot* slots, int n, const std::string& path) {
  install_cleanup_handlers();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < n; ++i) {
    int expected = 0;
    if (!slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(2);
    return i;
  }
  return -1;
}

int register_temp(const std::string& path) { return register_in(g_slots, kSlots, path); }

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

// This boot's id (/proc/sys/kernel/random/boot_id), its first 8 hex digits: with the process id
// in a temporary file's name, it tells a later run whether the writer can still be alive.
const std::string& boot_tag() {
  static const std::string tag = [] {
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::string id, out;
    std::getline(f, id);
    for (char c : id)
      if (std::isxdigit(static_cast<unsigned char>(c)) && out.size() < 8) out += c;
    return out.size() == 8 ? out : std::string("00000000");
  }();
  return tag;
}

// ".NAME.attn-tmp-<16 random hex>-<pid>-<boot tag>" (or .attn-bak- for a commit's backups),
// within NAME_MAX.
std::string temp_name(const std::string& name, const char* marker) {
  return "." + name.substr(0, 200) + marker + random_hex() + "-" + std::to_string(::getpid()) +
         "-" + boot_tag();
}

// A temporary file left by a writer that cannot finish it any more (docs/robustness.md):
// one of ours by name, a regular file of this user, and either written by a process of this boot
// that no longer exists, or (another machine, another boot, an older name without a process id)
// untouched for an hour. A running writer's file, here or elsewhere, is never taken.
bool is_stale_temp(int dir_fd, const char* entry) {
  if (entry[0] != '.') return false;
  const char* marker = std::strstr(entry, kTempFileMarker);
  if (!marker) marker = std::strstr(entry, ".attn-bak-");
  if (!marker) return false;
  struct stat st {};
  if (::fstatat(dir_fd, entry, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid())
    return false;
  // After the marker: 16 hex digits, then optionally -PID-BOOT.
  const char* p = marker + std::strlen(kTempFileMarker);
  for (int i = 0; i < 16; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(p[i]))) return false;
  p += 16;
  long pid = 0;
  std::string boot;
  if (*p == '-') {
    char* end = nullptr;
    pid = std::strtol(p + 1, &end, 10);
    if (end && *end == '-')
      boot = end + 1;
    else
      pid = 0;
  } else if (*p != '\0') {
    return false;
  }
  if (pid > 0 && boot == boot_tag()) {
    if (pid == ::getpid()) return false;
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
  }
  return std::time(nullptr) - st.st_mtime > kStaleTempSeconds;
}

}  // namespace

int sweep_stale_temp_files(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d))
    if (is_stale_temp(fd, e->d_name)) stale.emplace_back(e->d_name);
  int removed = 0;
  for (const std::string& name : stale) removed += ::unlinkat(fd, name.c_str(), 0) == 0 ? 1 : 0;
  ::closedir(d);
  return removed;
}

namespace {

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
  bool linked = false;   // commit gave the unnamed file the target's name itself (it was new)
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

  // Temporary files a killed writer left in this folder go now (once per folder and command).
  bool swept = false;
  for (const auto& other : outputs_) swept = swept || other->dir == o.dir;
  if (!swept) sweep_stale_temp_files(o.dir.empty() ? "/" : o.dir);

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
  // 1. Every file flushed; nothing visible has changed yet.
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
  }

  // 2. Each file put in place. An unnamed file whose target does not exist is linked under the
  // target's name directly: no other name ever exists, so even SIGKILL leaves nothing behind.
  // Otherwise (a target to replace, or no O_TMPFILE) the file has a temporary name and is
  // renamed over the target; a SIGKILL between the two leaves the temporary name, which the next
  // write to the folder sweeps (sweep_stale_temp_files). With several outputs, each existing
  // target is first hard-linked to a backup so a failed rename can be undone.
  auto undo = [&](size_t done) {
    for (size_t j = 0; j < done; ++j) {
      Output& d = *outputs_[j];
      if (!d.backup.empty()) {
        if (::renameat(d.dir_fd, d.backup.c_str(), d.dir_fd, d.name.c_str()) == 0)
          d.backup.clear(), unregister_temp(d.backup_slot);
      } else if (!d.existed || d.linked) {
        ::unlinkat(d.dir_fd, d.name.c_str(), 0);
      }
    }
    discard();
  };
  const bool several = outputs_.size() > 1;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    Output& o = *outputs_[i];
    if (o.unnamed) {
      const std::string proc = "/proc/self/fd/" + std::to_string(o.fd);
      if (::linkat(AT_FDCWD, proc.c_str(), o.dir_fd, o.name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        o.linked = true;
      } else if (errno != EEXIST) {
        fail(o, std::strerror(errno), error);
        undo(i);
        return false;
      }
      for (int attempt = 0; !o.linked && o.temp.empty() && attempt < 100; ++attempt) {
        const std::string name = temp_name(o.name, kTempFileMarker);
        o.temp_slot = register_temp(o.abs(name));
        if (::linkat(AT_FDCWD, proc.c_str(), o.dir_fd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
          o.temp = name;
          break;
        }
        const int e = errno;
        unregister_temp(o.temp_slot);
        if (e != EEXIST) {
          fail(o, std::strerror(e), error);
          undo(i);
          return false;
        }
      }
    }
    const bool named = o.linked || !o.temp.empty();
    if (!named || ::close(o.fd) != 0) {
      o.fd = -1;
      fail(o, !named ? "cannot name the temporary file" : std::strerror(errno), error);
      undo(i);
      return false;
    }
    o.fd = -1;
    if (o.linked) continue;
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
    undo(i);
    return false;
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

// ---------------------------------------------------------------- folders

namespace {

std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

}  // namespace

std::string check_output_folder(const std::string& path) {
  if (path.empty()) return "the folder name is empty";
  // The path itself, then its parents up to the first that exists: that one must be a folder
  // this process may create entries in.
  std::string p = path;
  for (int depth = 0; depth < 4096; ++depth) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        return p == path
                   ? "'" + path + "' exists and is " + file_kind_text(st.st_mode) + ", not a folder"
                   : "'" + p + "' is " + file_kind_text(st.st_mode) + ", not a folder";
      if (::access(p.c_str(), W_OK | X_OK) != 0)
        return "cannot write in folder '" + p + "': " + std::strerror(errno);
      return "";
    }
    if (errno != ENOENT) return "'" + p + "': " + std::strerror(errno);
    const std::string up = parent_of(p);
    if (up == p) break;
    p = up;
  }
  return "'" + path + "': no existing folder above it";
}

NewFolder::~NewFolder() {
  // Deepest first; rmdir removes only an empty folder, so nothing written is ever lost.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (!kept_) ::rmdir(it->first.c_str());
    if (it->second >= 0) g_dir_slots[it->second].state.store(0);
  }
}

bool NewFolder::create(const std::string& path, std::string& error) {
  if (std::string e = check_output_folder(path); !e.empty()) {
    error = "cannot create folder '" + path + "': " + e;
    return false;
  }
  // The missing folders, outermost first.
  std::vector<std::string> missing;
  for (std::string p = path;; p = parent_of(p)) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 || parent_of(p) == p) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    // Registered before it exists, so a signal between the two cannot leave it behind.
    char* parent = ::realpath(parent_of(*it).c_str(), nullptr);
    std::string absolute = *it;
    if (parent) {
      std::string base = *it;
      while (base.size() > 1 && base.back() == '/') base.pop_back();
      const size_t slash = base.find_last_of('/');
      absolute =
          std::string(parent) + "/" + (slash == std::string::npos ? base : base.substr(slash + 1));
      std::free(parent);
    }
    const int slot = register_in(g_dir_slots, kDirSlots, absolute);
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      const int e = errno;
      if (slot >= 0) g_dir_slots[slot].state.store(0);
      error = "cannot create folder '" + *it + "': " + std::strerror(e);
      return false;
    }
    created_.emplace_back(absolute, slot);
  }
  return true;
}

void NewFolder::keep() {
  kept_ = true;
  for (auto& [path, slot] : created_)
    if (slot >= 0) g_dir_slots[slot].state.store(0), slot = -1;
}

bool write_folder_files(const std::string& folder,
                        const std::vector<std::pair<std::string, std::string>>& files,
                        std::string& error) {
  NewFolder dir;
  if (!dir.create(folder, error)) return false;
  AtomicOutputs out;
  for (const auto& [name, bytes] : files) {
    const int index = out.add(folder + "/" + name, error);
    if (index < 0 || !out.write(index, bytes, error)) return false;
  }
  if (!out.commit(error)) return false;
  dir.keep();
  return true;
}

}  // namespace attn
