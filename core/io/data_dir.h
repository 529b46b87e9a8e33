// Where the program finds the data it ships (trained models, lessons): beside the installed
// binary, in the source tree when run from a build folder, or wherever ATTN_DATA_DIR points.
#pragma once

#include <string>

namespace attn {

// The folder holding the shipped data (models/, models/lm/NAME/, lessons/, …), without a
// trailing slash. In order: $ATTN_DATA_DIR when set; <dir of the executable>/../share/attention-lab
// when it exists (an installed copy, from any prefix); the source tree's assets/ (a build folder).
// "" when none exists.
std::string data_dir();

// The folder of the running executable ("" when it cannot be found).
std::string executable_dir();

}  // namespace attn
