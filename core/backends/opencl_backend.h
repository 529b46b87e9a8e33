// The OpenCL backend: device discovery and creation. Compiled to stubs that report "not built"
// when the build found no OpenCL (ATTN_HAVE_OPENCL unset).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace attn {

// One OpenCL device, numbered across every platform in the order clinfo -l lists them.
struct OpenClDeviceInfo {
  int index = 0;
  std::string platform, name, type;  // type: "gpu", "cpu", "accelerator" or "other"
};

// Every device of every platform. Empty with `error` set when there is none (no ICD loader,
// no platform, no device) or when the OpenCL backend is not built in.
std::vector<OpenClDeviceInfo> list_opencl_devices(std::string& error);

// The OpenCL backend on device `device` (an index of list_opencl_devices). Builds the staged
// kernels before returning, so a missing platform or a failed kernel build is reported here:
// null and `error` set. Later failures (e.g. the device running out of memory) throw
// std::runtime_error with a message naming the OpenCL call and error.
std::unique_ptr<Backend> make_opencl_backend(int device, std::string& error);

}  // namespace attn
