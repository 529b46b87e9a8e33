// Placeholder entry for the desktop app until the app issue lands: a clear error, exit 1.
#include <iostream>

#include "gui.h"

namespace attn {

int run_gui(const GuiOptions&) {
  std::cerr
      << "error: the desktop app is not built yet; use the subcommands (attention-lab --help)\n";
  return 1;
}

}  // namespace attn
