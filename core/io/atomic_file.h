// Output files written whole or not at all, and the input reader (io/input_file.h) beside them.
//
// How an output is written (docs/robustness.md, "Outputs"):
// - Its bytes go to a temporary file in the target's folder: an unnamed one (O_TMPFILE) that
//   disappears by itself if the process dies, or, on file systems without O_TMPFILE, a file named
//   ".NAME.attn-tmp-<16 random hex digits>" created with O_CREAT|O_EXCL|O_NOFOLLOW, so a planted
//   file or symbolic link can never be written through. Named temporary files are removed on
//   SIGINT, SIGTERM and SIGHUP; SIGKILL cannot be caught, so a leftover can only come from it,
//   is recognisable by its name, is never reused, and is removed by the next write to its folder
//   (sweep_stale_temp_files). An unnamed file whose target is new is linked under the target's
//   name directly at commit, so it never has another name.
// - Only regular files are replaced. A directory, FIFO, device or socket is refused; a symbolic
//   link is followed (the file it points to is replaced, the link stays).
// - The replacement keeps the target's permission bits and, where the process may set them, its
//   owner and group; a new file gets 0666 minus the umask. A read-only target is refused.
// - The target is replaced by rename(2): readers see the old file or the new one, never a mix.
//   Other hard links to the old file keep the old contents (they are not the target any more).
// - Several outputs of one command are committed together: all are written and flushed first,
//   then renamed into place with SIGINT/SIGTERM/SIGHUP blocked; if one rename fails, the targets
//   already replaced are put back from hard-linked backups, so the command writes all or none.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/input_file.h"

namespace attn {

class AtomicOutputs {
 public:
  AtomicOutputs();
  ~AtomicOutputs();  // discards the temporary files of a set that was not committed
  AtomicOutputs(const AtomicOutputs&) = delete;
  AtomicOutputs& operator=(const AtomicOutputs&) = delete;

  // Checks `path` and creates its temporary file now, so a path that cannot be written fails
  // before any work is done. Refuses a target that is not a regular file, a read-only one, a
  // missing folder, and a target this set already holds under another name. Returns the output's
  // index, or -1 with error = "cannot write '<path>': <reason>".
  int add(const std::string& path, std::string& error);
  // Appends bytes to output `index`.
  bool write(int index, const void* data, size_t size, std::string& error);
  bool write(int index, const std::string& data, std::string& error);
  // Flushes every output and puts all of them in place, or none of them.
  bool commit(std::string& error);
  // Removes every temporary file; nothing at the targets changes.
  void discard();

  size_t size() const { return outputs_.size(); }
  const std::string& path(int index) const;

 private:
  struct Output;
  bool fail(Output& o, const std::string& why, std::string& error);
  std::vector<std::unique_ptr<Output>> outputs_;
};

// One output written whole or not at all (an AtomicOutputs of one file).
bool write_file_atomically(const std::string& path, const std::string& data, std::string& error);

// For tests: use named temporary files even where O_TMPFILE works, to exercise the fallback and
// its clean-up on signals.
void use_named_temp_files_for_testing(bool on);

// The pattern of a named temporary file left by SIGKILL, for docs and tests: ".NAME.attn-tmp-".
// The full name is ".NAME.attn-tmp-<16 random hex digits>-<writer's pid>-<boot id tag>".
inline constexpr const char* kTempFileMarker = ".attn-tmp-";
// A temporary file of ours whose writer cannot be told alive or dead (another machine on a shared
// folder, an older name without a pid) is stale once untouched this long.
inline constexpr long kStaleTempSeconds = 3600;

// Removes the temporary files (.attn-tmp-, .attn-bak-) a killed writer left in `folder`: regular
// files of this user whose writer process (this boot) no longer exists, or untouched for
// kStaleTempSeconds when that cannot be told. A running writer's file is never removed. Every
// AtomicOutputs::add does this for its folder. Returns how many it removed.
int sweep_stale_temp_files(const std::string& folder);

// ---- folders (docs/robustness.md, "No partial folders") ----
// A command that writes a folder (lm init, lm train, lm bench's model, save_model) creates it only
// when there is something complete to put in it: check_output_folder before any work, NewFolder
// right before the files are committed.

// "" when `path` is an existing folder this process may write in, or a missing one that could be
// created (the nearest existing folder above it is writable); else why not. Creates nothing.
std::string check_output_folder(const std::string& path);

// Creates a folder and its missing parents right before its files are written. Until keep() the
// folders it created are removed again (when still empty) by the destructor (an error on the way)
// and on SIGINT/SIGTERM/SIGHUP (after the temporary files), so no empty folder is left behind.
class NewFolder {
 public:
  NewFolder() = default;
  ~NewFolder();
  NewFolder(const NewFolder&) = delete;
  NewFolder& operator=(const NewFolder&) = delete;
  bool create(const std::string& path, std::string& error);
  void keep();  // the files are in place

 private:
  std::vector<std::pair<std::string, int>> created_;  // absolute path, signal slot; outer first
  bool kept_ = false;
};

// Writes the files of a folder (name in the folder, bytes) together or not at all: the folder is
// created (NewFolder) only when every file is ready to be put in place, each file is written
// to a temporary and renamed (AtomicOutputs), and on failure nothing new is left behind.
bool write_folder_files(const std::string& folder,
                        const std::vector<std::pair<std::string, std::string>>& files,
                        std::string& error);

}  // namespace attn
