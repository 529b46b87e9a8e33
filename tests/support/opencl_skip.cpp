// See opencl_skip.h.
#include "opencl_skip.h"

#include <cstdlib>

#include "backends/opencl_backend.h"

namespace attn::test {

bool opencl_skipped(std::string& why) {
  if (std::getenv("ATTN_SKIP_OPENCL")) {
    why = "ATTN_SKIP_OPENCL is set (sanitizer run)";
    return true;
  }
  std::string error;
  if (list_opencl_devices(error).empty()) {
    why = "no OpenCL platform/device: " + error;
    return true;
  }
  return false;
}

}  // namespace attn::test
