// Checked OpenCL C API helpers: error names, device discovery, program builds with their logs.
#ifdef ATTN_HAVE_OPENCL
#include "backends/opencl_runtime.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "embedded_shaders.h"

namespace attn::ocl {

// cl_khr_icd's "no platform" status (CL_PLATFORM_NOT_FOUND_KHR in cl_ext.h).
constexpr cl_int kPlatformNotFoundKhr = -1001;

const char* error_name(cl_int code) {
  switch (code) {
#define ATTN_CL_CASE(x) \
  case x:               \
    return #x;
    ATTN_CL_CASE(CL_SUCCESS)
    ATTN_CL_CASE(CL_DEVICE_NOT_FOUND)
    ATTN_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
    ATTN_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
    ATTN_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ATTN_CL_CASE(CL_OUT_OF_RESOURCES)
    ATTN_CL_CASE(CL_OUT_OF_HOST_MEMORY)
    ATTN_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
    ATTN_CL_CASE(CL_INVALID_VALUE)
    ATTN_CL_CASE(CL_INVALID_PLATFORM)
    ATTN_CL_CASE(CL_INVALID_DEVICE)
    ATTN_CL_CASE(CL_INVALID_CONTEXT)
    ATTN_CL_CASE(CL_INVALID_COMMAND_QUEUE)
    ATTN_CL_CASE(CL_INVALID_MEM_OBJECT)
    ATTN_CL_CASE(CL_INVALID_BUILD_OPTIONS)
    ATTN_CL_CASE(CL_INVALID_PROGRAM)
    ATTN_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    ATTN_CL_CASE(CL_INVALID_KERNEL_NAME)
    ATTN_CL_CASE(CL_INVALID_KERNEL)
    ATTN_CL_CASE(CL_INVALID_ARG_INDEX)
    ATTN_CL_CASE(CL_INVALID_ARG_VALUE)
    ATTN_CL_CASE(CL_INVALID_ARG_SIZE)
    ATTN_CL_CASE(CL_INVALID_KERNEL_ARGS)
    ATTN_CL_CASE(CL_INVALID_WORK_DIMENSION)
    ATTN_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
    ATTN_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
    ATTN_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
    ATTN_CL_CASE(CL_INVALID_BUFFER_SIZE)
    ATTN_CL_CASE(CL_INVALID_OPERATION)
#undef ATTN_CL_CASE
    case kPlatformNotFoundKhr:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "unknown OpenCL error";
  }
}

void check(cl_int status, const char* call, const std::string& detail) {
  if (status == CL_SUCCESS) return;
  std::ostringstream s;
  s << "OpenCL " << call;
  if (!detail.empty()) s << " (" << detail << ")";
  s << " failed: " << error_name(status) << " (" << status << ")";
  if (status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ||
      status == CL_OUT_OF_HOST_MEMORY || status == CL_INVALID_BUFFER_SIZE)
    s << "; the device is out of memory for this problem size";
  throw OpenClError(s.str(), status);
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  check(clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  check(clGetDeviceInfo(d, what, size, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

static std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  check(clGetPlatformInfo(p, what, size, s.data(), nullptr), "clGetPlatformInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::vector<Device> all_devices() {
  // The sanitizer test run sets this: OpenCL runtimes are not built with sanitizers.
  if (std::getenv("ATTN_SKIP_OPENCL"))
    throw OpenClError("OpenCL is disabled by the ATTN_SKIP_OPENCL environment variable", 0);
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR (-1001) when no driver is installed.
  if (status == kPlatformNotFoundKhr || (status == CL_SUCCESS && count == 0))
    throw OpenClError("no OpenCL platform found (install an OpenCL driver, e.g. pocl-opencl-icd)",
                      status);
  check(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(count);
  check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
  std::vector<Device> out;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    status = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (status == CL_DEVICE_NOT_FOUND || n == 0) continue;
    check(status, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(n);
    check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr), "clGetDeviceIDs");
    const std::string pname = platform_string(p, CL_PLATFORM_NAME);
    for (cl_device_id id : ids) {
      Device d;
      d.platform = p;
      d.id = id;
      d.platform_name = pname;
      d.name = device_string(id, CL_DEVICE_NAME);
      const auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
      d.type = (type & CL_DEVICE_TYPE_GPU)           ? "gpu"
               : (type & CL_DEVICE_TYPE_CPU)         ? "cpu"
               : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator"
                                                     : "other";
      out.push_back(std::move(d));
    }
  }
  if (out.empty()) throw OpenClError("no OpenCL device found on any platform", CL_DEVICE_NOT_FOUND);
  return out;
}

std::string kernel_source(const char* name) {
  const char* dir = std::getenv("ATTN_SHADER_DIR");
  if (dir && *dir) {
    const std::string path = std::string(dir) + "/" + name;
    std::ifstream f(path, std::ios::binary);
    if (!f) throw OpenClError("cannot read kernel source " + path + " (from ATTN_SHADER_DIR)", 0);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  const char* text = embedded_shader(name);
  if (!text) throw OpenClError(std::string("kernel source ") + name + " is not embedded", 0);
  return text;
}

Program build_program(cl_context ctx, cl_device_id device, const std::string& source,
                      const std::string& options) {
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int status = CL_SUCCESS;
  Program program(clCreateProgramWithSource(ctx, 1, &text, &length, &status));
  check(status, "clCreateProgramWithSource");
  status = clBuildProgram(program.get(), 1, &device, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (clGetProgramBuildInfo(program.get(), device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) ==
        CL_SUCCESS) {
      log.resize(size);
      clGetProgramBuildInfo(program.get(), device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    throw OpenClError("OpenCL kernel build failed (" + std::string(error_name(status)) +
                          ", options \"" + options + "\"):\n" + log,
                      status);
  }
  return program;
}

Kernel create_kernel(cl_program program, const char* name) {
  cl_int status = CL_SUCCESS;
  Kernel k(clCreateKernel(program, name, &status));
  check(status, "clCreateKernel", name);
  return k;
}

size_t kernel_work_group_size(cl_kernel kernel, cl_device_id device) {
  size_t size = 0;
  check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size), &size,
                                 nullptr),
        "clGetKernelWorkGroupInfo");
  return size;
}

Buffer create_buffer(cl_context ctx, cl_mem_flags flags, size_t bytes, const char* what) {
  cl_int status = CL_SUCCESS;
  Buffer b(clCreateBuffer(ctx, flags, bytes == 0 ? 4 : bytes, nullptr, &status));
  check(status, "clCreateBuffer", std::string(what) + ", " + std::to_string(bytes) + " bytes");
  return b;
}

void ArgSetter::set(size_t size, const void* value) {
  check(clSetKernelArg(k_, index_, size, value), "clSetKernelArg",
        std::string(name_) + " argument " + std::to_string(index_));
  ++index_;
}

}  // namespace attn::ocl
#endif  // ATTN_HAVE_OPENCL
