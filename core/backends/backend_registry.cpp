// Creating backends by name: the CPU backend is always there; "auto" prefers OpenCL and falls
// back to the CPU, with a warning, whenever OpenCL cannot do the work.
#include <exception>
#include <iostream>

#include "backends/backend.h"
#include "backends/opencl_backend.h"

namespace attn {
namespace {

// "auto": OpenCL when it can, the CPU whenever OpenCL fails for a problem (e.g. the device runs
// out of memory), so a computation the user asked for never fails because of the device. The
// first fallback is explained on stderr; later ones stay quiet.
class AutoBackend : public Backend {
 public:
  explicit AutoBackend(std::unique_ptr<Backend> opencl)
      : opencl_(std::move(opencl)), cpu_(make_cpu_backend()) {}

  std::string name() const override { return opencl_ ? opencl_->name() : cpu_->name(); }
  bool supports_trace(const AttentionProblem& p) const override {
    return (opencl_ && opencl_->supports_trace(p)) || cpu_->supports_trace(p);
  }
  bool supports_outputs(const AttentionProblem& p) const override {
    return (opencl_ && opencl_->supports_outputs(p)) || cpu_->supports_outputs(p);
  }

  void run_stages(const AttentionProblem& p, AttentionTrace& t) override {
    if (opencl_ && opencl_->supports_trace(p)) {
      try {
        opencl_->run_stages(p, t);
        return;
      } catch (const std::exception& e) {
        warn(e.what());
      }
    }
    t.backend = cpu_->name();
    cpu_->run_stages(p, t);
  }

  HeadStack run_output(const AttentionProblem& p) override {
    if (opencl_ && opencl_->supports_outputs(p)) {
      try {
        return opencl_->run_output(p);
      } catch (const std::exception& e) {
        warn(e.what());
      }
    }
    return cpu_->run_output(p);
  }

 private:
  void warn(const std::string& why) {
    if (warned_) return;
    warned_ = true;
    std::cerr << "warning: " << why << "\nwarning: backend auto: using the CPU backend instead\n";
  }

  std::unique_ptr<Backend> opencl_, cpu_;
  bool warned_ = false;
};

}  // namespace

std::vector<std::string> available_backends() {
  std::vector<std::string> names = {"cpu"};
  std::string error;
  if (!list_opencl_devices(error).empty()) names.push_back("opencl");
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error, int device) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "opencl") return make_opencl_backend(device, error);
  if (name == "auto") {
    std::string why;
    std::unique_ptr<Backend> opencl = make_opencl_backend(device, why);
    // No device at all is the ordinary case for auto; a device that failed is worth a word.
    std::string none;
    if (!opencl && !list_opencl_devices(none).empty())
      std::cerr << "warning: " << why << "\nwarning: backend auto: using the CPU backend\n";
    return std::make_unique<AutoBackend>(std::move(opencl));
  }
  error = "unknown backend '" + name + "'; expected cpu, opencl or auto";
  return nullptr;
}

}  // namespace attn
