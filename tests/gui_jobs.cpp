// Background work never ends the program: the trace recompute is made to throw, on the UI thread
// and on its worker, and the app keeps going with the failure in the status bar. Also the app's
// fallback to the CPU when the OpenCL backend cannot run a trace.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>

#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/opencl_backend.h"
#include "gui/app_state.h"
#include "reference.h"

namespace attn {
namespace {

// A backend that fails at everything, as a device that disappears mid-run does.
class FailingBackend : public Backend {
 public:
  explicit FailingBackend(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool supports_trace(const AttentionProblem&) const override { return true; }
  bool supports_outputs(const AttentionProblem&) const override { return true; }
  void run_stages(const AttentionProblem&, AttentionTrace&) override {
    throw std::runtime_error("the device was lost");
  }
  HeadStack run_output(const AttentionProblem&) override {
    throw std::runtime_error("the device was lost");
  }

 private:
  std::string name_;
};

// Every backend fails, the CPU too.
std::unique_ptr<Backend> all_fail(const std::string& name, std::string&) {
  return std::make_unique<FailingBackend>(name);
}

// "opencl" fails at run time; "cpu" is the real CPU backend.
std::unique_ptr<Backend> opencl_fails(const std::string& name, std::string& error) {
  if (name == "opencl") return std::make_unique<FailingBackend>("opencl: lost device");
  return make_backend(name, error);
}

// Max |trace weights - reference weights| over every head.
double weights_gap(const AppState& st) {
  test::RefResult ref = test::reference_attention(to_problem(st.scenario()));
  const TraceStep& w = st.trace().step("weights");
  double gap = 0;
  for (size_t h = 0; h < w.heads.size(); ++h)
    gap = std::max(gap, test::max_abs_diff(w.heads[h], ref.weights[h]));
  return gap;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Recompute, AFailureOnTheUiThreadIsAMessage) {
  AppState st;
  st.backend_factory = all_fail;
  EXPECT_TRUE(st.load_example("fear-is-the"));  // the scenario opens; its trace cannot
  EXPECT_FALSE(st.has_trace());
  EXPECT_TRUE(st.message_is_error());
  EXPECT_TRUE(has(st.message(), "the device was lost")) << st.message();
  // The program goes on: with a working backend the next edit computes.
  st.backend_factory = nullptr;
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "0.5"));
  ASSERT_TRUE(st.has_trace());
  EXPECT_LT(weights_gap(st), 1e-6);
}

TEST(Recompute, AFailureOnTheWorkerIsAMessageAndTheOldTraceStays) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const float before = st.trace().head("q", 0)(0, 0);
  st.async_threshold = 0;  // everything counts as large: computed on the worker
  st.backend_factory = all_fail;
  for (const char* value : {"1.5", "2.5"}) {  // twice: a failure leaves nothing behind
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, value));
    st.wait_for_trace();
    EXPECT_FALSE(st.computing());
    EXPECT_TRUE(st.message_is_error());
    EXPECT_TRUE(has(st.message(), "The trace could not be computed: the device was lost"))
        << st.message();
    EXPECT_EQ(st.trace().head("q", 0)(0, 0), before);
  }
  st.backend_factory = nullptr;
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "3.5"));
  st.wait_for_trace();
  EXPECT_NEAR(st.trace().head("q", 0)(0, 0), 3.5, 1e-7);
  EXPECT_LT(weights_gap(st), 1e-6);
}

TEST(Recompute, AFailingOpenClBackendFallsBackToTheCpuAndSaysSo) {
  for (const size_t threshold : {size_t(256 * 256), size_t(0)}) {  // UI thread, then worker
    SCOPED_TRACE(threshold);
    AppState st;
    st.backend_factory = opencl_fails;
    ASSERT_TRUE(st.load_example("gqa"));
    st.async_threshold = threshold;
    ASSERT_TRUE(st.set_backend("opencl"));
    st.wait_for_trace();
    EXPECT_TRUE(has(st.message(), "opencl: lost device failed: the device was lost"))
        << st.message();
    EXPECT_TRUE(has(st.message(), "computed on the CPU")) << st.message();
    EXPECT_EQ(st.trace().backend, "cpu");
    EXPECT_EQ(st.backend_name(), "cpu");
    EXPECT_LT(weights_gap(st), 1e-6);
  }
}

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

// The real OpenCL backend cannot run the additive score: the app computes it on the CPU and says
// so in the status bar.
TEST(Recompute, TheOpenClBackendFallsBackToTheCpuForWhatItCannotRun) {
  std::string why;
  if (opencl_skipped(why)) GTEST_SKIP() << why;
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_backend("opencl")) << st.message();
  EXPECT_FALSE(st.message_is_error()) << st.message();
  EXPECT_NE(st.trace().backend, "cpu");  // plain attention runs on the device
  ASSERT_TRUE(st.load_example("additive"));
  EXPECT_TRUE(st.message_is_error());
  EXPECT_TRUE(has(st.message(), "cannot compute this trace")) << st.message();
  EXPECT_TRUE(has(st.message(), "computed on the CPU")) << st.message();
  EXPECT_EQ(st.trace().backend, "cpu");
  const std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace expected = compute_scenario_trace(st.scenario(), *cpu);
  EXPECT_TRUE(Matrix(st.trace().head("weights", 0)) == expected.head("weights", 0));
}

}  // namespace
}  // namespace attn
