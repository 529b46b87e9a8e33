// Thin, checked wrappers over the OpenCL C API used by the OpenCL backend: every call's status is
// checked and turned into an OpenClError naming the call; objects are released by RAII.
#pragma once
#ifdef ATTN_HAVE_OPENCL

#include <CL/cl.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace attn::ocl {

// A failed OpenCL call: "clEnqueueNDRangeKernel(attention_fused) failed: CL_OUT_OF_RESOURCES ...".
class OpenClError : public std::runtime_error {
 public:
  OpenClError(const std::string& what, cl_int code) : std::runtime_error(what), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

const char* error_name(cl_int code);
// Throws OpenClError for any status other than CL_SUCCESS, with a hint for memory errors.
void check(cl_int status, const char* call, const std::string& detail = "");

// Owns one OpenCL object and releases it; movable, not copyable.
template <typename T, cl_int (*Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }
  T get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }

 private:
  T h_ = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Buffer = Handle<cl_mem, clReleaseMemObject>;

struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, name, type;
};

// Every device of every platform, in platform order. Throws OpenClError when there is none.
std::vector<Device> all_devices();

std::string device_string(cl_device_id d, cl_device_info what);
template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T value{};
  check(clGetDeviceInfo(d, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

// The kernel source: shaders/<name> from $ATTN_SHADER_DIR when set (development), else the
// copy embedded at build time.
std::string kernel_source(const char* name);

// Builds `source` for `device` with `options`; a failed build throws with the build log.
Program build_program(cl_context ctx, cl_device_id device, const std::string& source,
                      const std::string& options);
Kernel create_kernel(cl_program program, const char* name);
size_t kernel_work_group_size(cl_kernel kernel, cl_device_id device);

// A device buffer of `bytes` (at least 1), mapped from an allocation failure to a clear message.
Buffer create_buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, const char* what);

// Sets kernel arguments in order; each is checked.
class ArgSetter {
 public:
  ArgSetter(cl_kernel k, const char* name) : k_(k), name_(name) {}
  template <typename T>
  ArgSetter& operator()(const T& value) {
    set(sizeof(T), &value);
    return *this;
  }
  ArgSetter& operator()(const Buffer& b) {
    cl_mem m = b.get();
    set(sizeof(cl_mem), &m);
    return *this;
  }
  ArgSetter& local(size_t bytes) {
    set(bytes, nullptr);
    return *this;
  }

 private:
  void set(size_t size, const void* value);
  cl_kernel k_;
  const char* name_;
  cl_uint index_ = 0;
};

}  // namespace attn::ocl

#endif  // ATTN_HAVE_OPENCL
