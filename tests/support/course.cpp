#include "course.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace attn::test {

std::vector<Lesson> built_in_course() {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / "assets" / "lessons"))
    if (e.path().extension() == ".json") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  EXPECT_GE(paths.size(), 10u);
  std::vector<Lesson> lessons;
  std::string error;
  for (const std::string& p : paths) {
    std::optional<Lesson> lesson = load_lesson_file(p, error);
    if (!lesson)
      ADD_FAILURE() << error;
    else
      lessons.push_back(std::move(*lesson));
  }
  return lessons;
}

}  // namespace attn::test
