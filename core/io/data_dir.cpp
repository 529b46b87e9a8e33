// The shipped data's folder, found relative to the executable so an installed copy is
// relocatable and needs no source tree.
#include "io/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace attn {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string env_data_dir() {
  const char* env = std::getenv("ATTN_DATA_DIR");
  if (!env || !*env) return "";
  std::string dir = env;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// <folder of the executable>/../share/attention-lab, written without the "..".
std::string share_dir() {
  const std::string exe = executable_dir();
  if (exe.empty()) return "";
  return std::filesystem::path(exe + "/../share/attention-lab").lexically_normal().string();
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
  if (std::string env = env_data_dir(); !env.empty()) return env;
  const std::string share = share_dir();
  return is_dir(share) ? share : "";
}

std::string data_dir_description() {
  if (std::string env = env_data_dir(); !env.empty()) return "$ATTN_DATA_DIR (" + env + ")";
  return share_dir();
}

}  // namespace attn
