// The built-in course as tests read it: every lesson file in the source tree's assets/lessons/,
// in file-name order (a lesson that fails to read is a test failure).
#pragma once

#include <vector>

#include "lessons/lesson.h"

namespace attn::test {

std::vector<Lesson> built_in_course();

}  // namespace attn::test
