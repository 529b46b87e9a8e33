// Creating backends by name; the CPU backend is always there.
#include "backend.h"

namespace attn {

std::vector<std::string> available_backends() { return {"cpu"}; }

std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error, int device) {
  (void)device;
  if (name == "cpu" || name == "auto") return make_cpu_backend();
  if (name == "opencl") {
    error = "the OpenCL backend is not built into this binary";
    return nullptr;
  }
  error = "unknown backend '" + name + "'; expected cpu, opencl or auto";
  return nullptr;
}

}  // namespace attn
