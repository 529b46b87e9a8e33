// Outputs written whole or not at all (io/atomic_file.h) and inputs read only from regular files
// within a limit (io/input_file.h): targets that are devices, FIFOs or folders, modes, owners,
// hard and symbolic links, several outputs committed together, clean-up on signals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::file_exists;
using test::read_bytes;
using test::temp_path;
using test::write_bytes;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

// Each test runs with O_TMPFILE (the normal path here) and with named temporary files (file
// systems without O_TMPFILE).
class AtomicFile : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { use_named_temp_files_for_testing(GetParam()); }
  void TearDown() override { use_named_temp_files_for_testing(false); }
};

TEST_P(AtomicFile, WritesANewFileWithTheUmaskAndLeavesNothingElse) {
  const std::string dir = test::temp_dir("new");
  const mode_t old = ::umask(027);
  std::string error;
  const bool ok = write_file_atomically(dir + "/a.txt", "hello", error);
  ::umask(old);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(read_bytes(dir + "/a.txt"), "hello");
  EXPECT_EQ(mode_of(dir + "/a.txt"), 0640u);
  EXPECT_EQ(test::dir_entries(dir), std::vector<std::string>{"a.txt"});
}

TEST_P(AtomicFile, KeepsTheTargetsModeAndDocumentsThatHardLinksKeepTheOldContents) {
  const std::string dir = test::temp_dir("mode");
  const std::string target = dir + "/secret.npy", link = dir + "/link.npy";
  ASSERT_TRUE(write_bytes(target, "old"));
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  ASSERT_EQ(::link(target.c_str(), link.c_str()), 0);
  std::string error;
  ASSERT_TRUE(write_file_atomically(target, "new", error)) << error;
  EXPECT_EQ(read_bytes(target), "new");
  EXPECT_EQ(mode_of(target), 0600u);
  // Replaced by rename: the other name still holds the old file (atomic_file.h says so).
  EXPECT_EQ(read_bytes(link), "old");
  EXPECT_EQ(test::dir_entries(dir), (std::vector<std::string>{"link.npy", "secret.npy"}));
}

TEST_P(AtomicFile, RefusesTargetsThatAreNotRegularFiles) {
  const std::string dir = test::temp_dir("kinds");
  const std::string fifo = dir + "/fifo", folder = dir + "/folder";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  std::string error;
  EXPECT_FALSE(write_file_atomically(fifo, "x", error));
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  EXPECT_FALSE(write_file_atomically(folder, "x", error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  EXPECT_FALSE(write_file_atomically(dir + "/", "x", error));
  // A character device: only root can make one in a test folder (/dev/null itself is never
  // touched, even by a broken writer).
  if (::geteuid() == 0) {
    const std::string dev = dir + "/null";
    ASSERT_EQ(::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    EXPECT_FALSE(write_file_atomically(dev, "x", error));
    EXPECT_NE(error.find("character device"), std::string::npos) << error;
    struct stat st {};
    ASSERT_EQ(::lstat(dev.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(test::dir_entries(folder).size(), 0u);
  for (const std::string& e : test::dir_entries(dir))
    EXPECT_EQ(e.find(kTempFileMarker), std::string::npos) << e;
}

TEST_P(AtomicFile, RefusesAMissingFolderAndAReadOnlyFile) {
  const std::string dir = test::temp_dir("ro");
  std::string error;
  EXPECT_FALSE(write_file_atomically(dir + "/no/such/x.npy", "x", error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  const std::string ro = dir + "/ro.npy";
  ASSERT_TRUE(write_bytes(ro, "keep"));
  ASSERT_EQ(::chmod(ro.c_str(), 0444), 0);
  if (::geteuid() != 0) {  // root may write anything
    EXPECT_FALSE(write_file_atomically(ro, "x", error));
    EXPECT_NE(error.find("read-only"), std::string::npos) << error;
  } else {
    GTEST_LOG_(INFO) << "running as root: a read-only file is writable, not checked";
    return;
  }
  EXPECT_EQ(read_bytes(ro), "keep");
}

TEST_P(AtomicFile, FollowsASymbolicLinkToItsFileAndRefusesADanglingOne) {
  const std::string dir = test::temp_dir("symlink");
  const std::string real = dir + "/real.txt", link = dir + "/link.txt";
  ASSERT_TRUE(write_bytes(real, "old"));
  ASSERT_EQ(::symlink("real.txt", link.c_str()), 0);
  std::string error;
  ASSERT_TRUE(write_file_atomically(link, "new", error)) << error;
  EXPECT_EQ(read_bytes(real), "new");
  struct stat st {};
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced by a file";
  ASSERT_EQ(::symlink("nowhere.txt", (dir + "/dangling").c_str()), 0);
  EXPECT_FALSE(write_file_atomically(dir + "/dangling", "x", error));
  EXPECT_FALSE(file_exists(dir + "/nowhere.txt"));
}

// The old writer used "OUT.tmp-PID" opened without O_EXCL: a symbolic link planted under that
// name redirected the write. Nothing a writer creates has a predictable name any more.
TEST_P(AtomicFile, APlantedSymlinkAtAPredictableNameIsNeverWrittenThrough) {
  const std::string dir = test::temp_dir("plant");
  const std::string victim = dir + "/victim.txt", out = dir + "/out.npy";
  ASSERT_TRUE(write_bytes(victim, "precious"));
  for (const std::string& name :
       {out + ".tmp-" + std::to_string(::getpid()), out + ".tmp", dir + "/.out.npy.tmp",
        out + ".staged-" + std::to_string(::getpid())})
    ASSERT_EQ(::symlink(victim.c_str(), name.c_str()), 0);
  std::string error;
  ASSERT_TRUE(write_file_atomically(out, "data", error)) << error;
  EXPECT_EQ(read_bytes(victim), "precious");
  EXPECT_EQ(read_bytes(out), "data");
}

TEST_P(AtomicFile, SeveralOutputsAreWrittenAllOrNone) {
  const std::string dir = test::temp_dir("set");
  const std::string a = dir + "/a.npy", b = dir + "/b.npy";
  ASSERT_TRUE(write_bytes(a, "old a"));
  std::string error;
  {  // The second target cannot be written: the set fails before anything is written.
    AtomicOutputs out;
    ASSERT_GE(out.add(a, error), 0) << error;
    EXPECT_LT(out.add(dir + "/missing/b.npy", error), 0);
  }
  EXPECT_EQ(read_bytes(a), "old a");
  EXPECT_EQ(test::dir_entries(dir), std::vector<std::string>{"a.npy"});
  {  // Both written: both appear together.
    AtomicOutputs out;
    const int ia = out.add(a, error), ib = out.add(b, error);
    ASSERT_TRUE(ia >= 0 && ib >= 0) << error;
    ASSERT_TRUE(out.write(ia, "new a", error) && out.write(ib, "new b", error)) << error;
    EXPECT_EQ(read_bytes(a), "old a");  // nothing visible before commit
    EXPECT_FALSE(file_exists(b));
    ASSERT_TRUE(out.commit(error)) << error;
  }
  EXPECT_EQ(read_bytes(a), "new a");
  EXPECT_EQ(read_bytes(b), "new b");
  EXPECT_EQ(test::dir_entries(dir), (std::vector<std::string>{"a.npy", "b.npy"}));
  {  // Never committed (an error in between): nothing changes.
    AtomicOutputs out;
    const int ia = out.add(a, error);
    ASSERT_TRUE(out.write(ia, "newer a", error));
  }
  EXPECT_EQ(read_bytes(a), "new a");
  EXPECT_EQ(test::dir_entries(dir), (std::vector<std::string>{"a.npy", "b.npy"}));
}

// A rename that fails in the middle of a commit (here the second target became a non-empty
// folder after it was checked) puts the first target back as it was.
TEST_P(AtomicFile, AFailedRenameInTheMiddleOfACommitRestoresTheEarlierTargets) {
  const std::string dir = test::temp_dir("rollback");
  const std::string a = dir + "/a.npy", b = dir + "/b.npy", c = dir + "/c.npy";
  ASSERT_TRUE(write_bytes(a, "old a"));
  std::string error;
  AtomicOutputs out;
  const int ia = out.add(a, error), ic = out.add(c, error), ib = out.add(b, error);
  ASSERT_TRUE(ia >= 0 && ib >= 0 && ic >= 0) << error;
  ASSERT_TRUE(out.write(ia, "new a", error) && out.write(ib, "new b", error) &&
              out.write(ic, "new c", error));
  ASSERT_EQ(::mkdir(b.c_str(), 0755), 0);
  ASSERT_TRUE(write_bytes(b + "/inside", "x"));
  EXPECT_FALSE(out.commit(error));
  EXPECT_NE(error.find("b.npy"), std::string::npos) << error;
  EXPECT_EQ(read_bytes(a), "old a");
  EXPECT_FALSE(file_exists(c));
  EXPECT_EQ(test::dir_entries(dir), (std::vector<std::string>{"a.npy", "b.npy"}));
}

TEST_P(AtomicFile, TheSameFileTwiceInOneSetIsRefused) {
  const std::string dir = test::temp_dir("same");
  const std::string a = dir + "/a.npy";
  ASSERT_TRUE(write_bytes(a, "old"));
  ASSERT_EQ(::symlink("a.npy", (dir + "/sym.npy").c_str()), 0);
  ASSERT_EQ(::link(a.c_str(), (dir + "/hard.npy").c_str()), 0);
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0755), 0);
  for (const std::string& other :
       {a, dir + "/./a.npy", dir + "/sub/../a.npy", dir + "/sym.npy", dir + "/hard.npy"}) {
    AtomicOutputs out;
    std::string error;
    ASSERT_GE(out.add(a, error), 0) << error;
    EXPECT_LT(out.add(other, error), 0) << other;
    EXPECT_NE(error.find("same file"), std::string::npos) << error;
  }
  // A new file named twice.
  AtomicOutputs out;
  std::string error;
  ASSERT_GE(out.add(dir + "/new.npy", error), 0);
  EXPECT_LT(out.add(dir + "/sub/../new.npy", error), 0);
  EXPECT_EQ(read_bytes(a), "old");
}

// Dies of `sig` after writing half of an output, the way a user's Ctrl+C, a `kill` or a closed
// terminal ends a command in the middle of a large write.
void write_then_die(const std::string& path, int sig) {
  std::string error;
  AtomicOutputs out;
  const int i = out.add(path, error);
  if (i < 0 || !out.write(i, std::string(1 << 20, 'x'), error)) ::_exit(3);
  ::raise(sig);
  ::_exit(4);  // not reached
}

TEST_P(AtomicFile, TemporaryFilesAreRemovedOnSigintSigtermAndSighup) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    const std::string dir = test::temp_dir("signal" + std::to_string(sig));
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) write_then_die(dir + "/big.npy", sig);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_EQ(test::dir_entries(dir).size(), 0u) << "left " << test::dir_entries(dir)[0];
  }
}

// SIGKILL cannot be caught. With O_TMPFILE the half-written file has no name and disappears with
// the process; with named temporary files it stays, recognisable by its name, is not reused, and
// the next write to the folder removes it (its writer is dead).
TEST_P(AtomicFile, SigkillLeavesNothingOrARecognisableFileThatTheNextWriteSweeps) {
  const std::string dir = test::temp_dir("sigkill");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) write_then_die(dir + "/big.npy", SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::vector<std::string> left = test::dir_entries(dir);
  if (!GetParam()) {
    EXPECT_EQ(left.size(), 0u);
    return;
  }
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].rfind(std::string(".big.npy") + kTempFileMarker, 0), 0u) << left[0];
  // The name says which process wrote it: ".big.npy.attn-tmp-<16 hex>-<pid>-<boot>".
  EXPECT_NE(left[0].find("-" + std::to_string(pid) + "-"), std::string::npos) << left[0];
  std::string error;
  ASSERT_TRUE(write_file_atomically(dir + "/big.npy", "small", error)) << error;
  EXPECT_EQ(read_bytes(dir + "/big.npy"), "small");
  EXPECT_EQ(test::dir_entries(dir), std::vector<std::string>{"big.npy"});
}

// The first 8 hex digits of this boot's id, read here independently of atomic_file.cpp.
std::string boot_tag() {
  const std::string id = read_bytes("/proc/sys/kernel/random/boot_id");
  std::string tag;
  for (char c : id)
    if (std::isxdigit(static_cast<unsigned char>(c)) && tag.size() < 8) tag += c;
  return tag;
}

// Only what a writer that can no longer finish left is swept: a running writer's temporary file
// (here a live child's pid), another user's pattern, links and folders stay.
TEST(AtomicFileSweep, OnlyTemporaryFilesOfDeadWritersAreRemoved) {
  const std::string dir = test::temp_dir("sweep");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(dead, &status, 0), dead);
  const pid_t alive = ::fork();  // a concurrently running writer
  if (alive == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string hex = "0123456789abcdef", boot = boot_tag();
  const std::string dead_tmp = ".a.npy.attn-tmp-" + hex + "-" + std::to_string(dead) + "-" + boot;
  const std::string dead_bak = ".b.npy.attn-bak-" + hex + "-" + std::to_string(dead) + "-" + boot;
  const std::string live_tmp = ".c.npy.attn-tmp-" + hex + "-" + std::to_string(alive) + "-" + boot;
  const std::string old_unknown = ".d.npy.attn-tmp-" + hex;  // no pid: by age
  const std::string new_unknown = ".e.npy.attn-tmp-" + hex;
  const std::string other_boot =
      ".f.npy.attn-tmp-" + hex + "-" + std::to_string(dead) + "-zzzzzzzz";
  const std::string not_ours = ".g.npy.attn-tmp-notours";
  const std::string link = ".h.npy.attn-tmp-" + hex + "-" + std::to_string(dead) + "-" + boot;
  const std::string folder = ".i.npy.attn-tmp-" + hex + "-" + std::to_string(dead) + "-" + boot;
  for (const std::string& f :
       {dead_tmp, dead_bak, live_tmp, old_unknown, new_unknown, other_boot, not_ours})
    write_bytes(dir + "/" + f, "x");
  ASSERT_EQ(::symlink("a.npy", (dir + "/" + link).c_str()), 0);
  ASSERT_EQ(::mkdir((dir + "/" + folder).c_str(), 0700), 0);
  // Two hours old: past kStaleTempSeconds (one hour).
  const timespec two_hours_ago[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir + "/" + old_unknown).c_str(), two_hours_ago, 0), 0);

  std::string error;
  ASSERT_TRUE(write_file_atomically(dir + "/out.npy", "new", error)) << error;
  std::vector<std::string> expect = {link,       folder,   live_tmp, new_unknown,
                                     other_boot, not_ours, "out.npy"};
  std::sort(expect.begin(), expect.end());
  EXPECT_EQ(test::dir_entries(dir), expect);
  // The sweep on its own says how many it removed: none while the writer runs, its file once it
  // has died.
  EXPECT_EQ(sweep_stale_temp_files(dir), 0);
  ::kill(alive, SIGKILL);
  ::waitpid(alive, &status, 0);
  EXPECT_EQ(sweep_stale_temp_files(dir), 1);
  EXPECT_FALSE(file_exists(dir + "/" + live_tmp));
}

INSTANTIATE_TEST_SUITE_P(Temp, AtomicFile, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("Named") : std::string("Unnamed");
                         });

// ---------------------------------------------------------------- inputs

TEST(InputFile, RefusesAFifoWithoutWaitingForAWriter) {
  const std::string fifo = temp_path("in.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::string out, error;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(read_input_file(fifo, 1000, out, error));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // no hang
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST(InputFile, RefusesDevicesFoldersAndFilesOverTheLimit) {
  std::string out, error;
  EXPECT_FALSE(read_input_file("/dev/zero", kDefaultInputLimit, out, error));
  EXPECT_NE(error.find("character device"), std::string::npos) << error;
  EXPECT_FALSE(read_input_file(ATTN_TEST_TMP, kDefaultInputLimit, out, error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  const std::string big = temp_path("big.txt");
  ASSERT_TRUE(write_bytes(big, std::string(2000, 'x')));
  EXPECT_FALSE(read_input_file(big, 1999, out, error));
  EXPECT_NE(error.find("at most 1,999 bytes"), std::string::npos) << error;
  EXPECT_EQ(error.rfind("cannot read '" + big + "': it is 2,000 bytes", 0), 0u) << error;
  ASSERT_TRUE(read_input_file(big, 2000, out, error)) << error;
  EXPECT_EQ(out, std::string(2000, 'x'));
  EXPECT_FALSE(read_input_file(temp_path("missing"), 10, out, error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

TEST(InputFile, SizesAreWrittenForPeople) {
  EXPECT_EQ(byte_size_text(0), "0 bytes");
  EXPECT_EQ(byte_size_text(9999), "9,999 bytes");
  EXPECT_EQ(byte_size_text(1234567), "1.2 MB (1,234,567 bytes)");
  EXPECT_EQ(byte_size_text(uint64_t{4} << 30), "4.3 GB (4,294,967,296 bytes)");
}

}  // namespace
}  // namespace attn
