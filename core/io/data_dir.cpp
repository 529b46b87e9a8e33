// The shipped data's folder, found relative to the executable so an installed copy is
// relocatable and needs no source tree.
#include "io/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace attn {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string executable_dir() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  std::string path(buf.data(), static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string data_dir() {
  if (const char* env = std::getenv("ATTN_DATA_DIR"); env && *env) {
    std::string dir = env;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir;
  }
  const std::string exe = executable_dir();
  if (!exe.empty() && is_dir(exe + "/../share/attention-lab"))
    return exe + "/../share/attention-lab";
#ifdef ATTN_ASSET_DIR
  if (is_dir(ATTN_ASSET_DIR)) return ATTN_ASSET_DIR;
#endif
  return "";
}

}  // namespace attn
