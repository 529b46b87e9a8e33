// Whether the tests that need an OpenCL device skip here, and why: the sanitizer run sets
// ATTN_SKIP_OPENCL (OpenCL runtimes are not built with sanitizers), and a machine may have no
// platform or device.
#pragma once

#include <string>

namespace attn::test {

bool opencl_skipped(std::string& why);

}  // namespace attn::test
