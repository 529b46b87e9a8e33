// Every fuzz target (tests/fuzz/targets.h) on every seed of its corpus and every input the fuzzer
// ever crashed on (tests/fuzz/regressions/NAME/), in the normal suite and under the sanitizers:
// a crash found once stays found.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "npy_fixture.h"
#include "targets.h"

namespace attn {
namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string path = dir + "/" + e->d_name;
      struct stat st {};
      if (e->d_name[0] != '.' && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        out.push_back(path);
    }
    ::closedir(d);
  }
  return out;
}

TEST(FuzzRegressions, EveryTargetHasSeedsAndSurvivesEveryKeptInput) {
  for (const fuzz::Target& t : fuzz::targets()) {
    const std::string base = ATTN_FUZZ_DIR;
    const std::vector<std::string> seeds = files_in(base + "/corpus/" + t.name);
    EXPECT_FALSE(seeds.empty()) << t.name << " has no seed files in tests/fuzz/corpus/" << t.name;
    std::vector<std::string> all = seeds;
    for (const std::string& f : files_in(base + "/regressions/" + t.name)) all.push_back(f);
    for (const std::string& path : all) {
      SCOPED_TRACE(path);
      const std::string bytes = test::read_bytes(path);
      EXPECT_EQ(t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    }
    // Nothing at all, and one byte.
    EXPECT_EQ(t.run(nullptr, 0), 0);
    const uint8_t one = 0;
    EXPECT_EQ(t.run(&one, 1), 0);
  }
}

}  // namespace
}  // namespace attn
