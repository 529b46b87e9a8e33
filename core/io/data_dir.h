// Where the program finds the data it ships (trained models, lessons): <its folder>/../share/
// attention-lab, in an installed copy and in a build folder alike, or wherever ATTN_DATA_DIR
// points. io/shipped.h names the items in it by short name.
#pragma once

#include <string>

namespace attn {

// The folder holding the shipped data (examples/, models/, models/lm/NAME/, lessons/, …), without
// a trailing slash: $ATTN_DATA_DIR when set, else <folder of the executable>/../share/attention-lab
// when it exists. An installed copy has that folder beside bin/ under any prefix; a build folder
// has build/share/attention-lab, a link to the source tree's assets/. "" when neither exists.
std::string data_dir();

// Where data_dir() looks, for messages: "$ATTN_DATA_DIR (PATH)" or the share folder's path.
std::string data_dir_description();

// The folder of the running executable ("" when it cannot be found).
std::string executable_dir();

}  // namespace attn
