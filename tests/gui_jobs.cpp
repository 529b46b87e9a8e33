// Background work never ends the program: every kind of job the app runs (the trace recompute,
// the language model's forward pass, an export, the seq2seq evaluation, both experiments and
// both live trainers) is made to throw, and the app keeps drawing with the failure in the status
// bar. Also the app's fallback to the CPU when the OpenCL backend cannot run a trace.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/opencl_backend.h"
#include "gui/gui_setup.h"
#include "gui/panel_experiments.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/panel_seq2seq.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "lm_fixture.h"
#include "opencl_skip.h"
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
  const TraceStep& w = st.trace().step(StageId::kWeights);
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
  // The program goes on: with a working backend (chosen again) the next edit computes.
  st.backend_factory = nullptr;
  EXPECT_TRUE(st.set_backend("cpu"));
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "0.5"));
  ASSERT_TRUE(st.has_trace());
  EXPECT_LT(weights_gap(st), 1e-6);
}

TEST(Recompute, AFailureOnTheWorkerIsAMessageAndTheOldTraceStays) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const float before = st.trace().head(StageId::kQ, 0)(0, 0);
  st.async_threshold = 0;  // everything counts as large: computed on the worker
  st.backend_factory = all_fail;
  ASSERT_TRUE(st.set_backend("cpu"));  // the backend is made when the user chooses one
  st.wait_for_trace();
  for (const char* value : {"1.5", "2.5"}) {  // twice: a failure leaves nothing behind
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, value));
    st.wait_for_trace();
    EXPECT_FALSE(st.computing());
    EXPECT_TRUE(st.message_is_error());
    EXPECT_TRUE(has(st.message(), "The trace could not be computed: the device was lost"))
        << st.message();
    EXPECT_EQ(st.trace().head(StageId::kQ, 0)(0, 0), before);
  }
  st.backend_factory = nullptr;
  ASSERT_TRUE(st.set_backend("cpu"));
  st.wait_for_trace();
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "3.5"));
  st.wait_for_trace();
  EXPECT_NEAR(st.trace().head(StageId::kQ, 0)(0, 0), 3.5, 1e-7);
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

using test::opencl_skipped;

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
  EXPECT_TRUE(Matrix(st.trace().head(StageId::kWeights, 0)) == expected.head(StageId::kWeights, 0));
}

class JobsGui : public ::testing::Test {
 protected:
  void SetUp() override {
    test::create_headless_imgui(ui);
    ASSERT_TRUE(state.load_example("fear-is-the"));
  }
  void TearDown() override { ImGui::DestroyContext(); }
  void frame() {
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    state.poll();
    ImGui::NewFrame();
    draw_app(ui);
    ImGui::Render();
  }
  // Draws frames until `done` or about 60 s; false if it never was.
  template <typename F>
  bool frames_until(F done) {
    for (int i = 0; i < 6000; ++i) {
      frame();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void expect_error_message(const std::string& part) {
    EXPECT_TRUE(state.message_is_error()) << state.message();
    EXPECT_TRUE(has(state.message(), part)) << state.message();
  }

  AppState state;
  Ui ui{state};
};

TEST_F(JobsGui, AFailedExportIsAMessage) {
  ui.exports.what = "a picture";
  ui.exports.job.start([](JobControl&) -> std::string { throw std::runtime_error("disk full"); });
  ASSERT_TRUE(frames_until([&] { return !ui.exports.job.running(); }));
  expect_error_message("export: disk full");
  // A returned error is a message the same way.
  ui.exports.job.start([](JobControl&) { return std::string("cannot write /x.png"); });
  ASSERT_TRUE(frames_until([&] { return !ui.exports.job.running(); }));
  expect_error_message("export: cannot write /x.png");
}

TEST_F(JobsGui, AFailedForwardPassIsAMessageInThePanelAndTheStatusBar) {
  test::TestModelSpec spec;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_embd = 16;
  const std::string folder = test::temp_path("jobs-lm-model");
  test::write_test_model(test::make_test_model(spec), folder);
  ui.lm.state = std::make_shared<LmPanel>();
  LmSession& s = ui.lm.state->session;
  s.forward = [](std::shared_ptr<const lm::Model>, const std::string&,
                 const std::vector<int>&) -> std::unique_ptr<LmRun> {
    throw std::runtime_error("out of memory");
  };
  ASSERT_TRUE(s.open(folder));
  ASSERT_TRUE(frames_until([&] { return !s.busy(); }));
  EXPECT_TRUE(s.has_model());
  EXPECT_FALSE(s.run());
  EXPECT_TRUE(has(s.error(), "failed: out of memory")) << s.error();
  expect_error_message("failed: out of memory");
  // The same session runs the next sentence once the pass works again.
  s.forward = lm_forward_run;
  s.set_text("the heads");
  s.wait();
  EXPECT_TRUE(s.run());
  EXPECT_EQ(s.error(), "");
}

TEST_F(JobsGui, AFailedSeq2seqEvaluationIsAMessage) {
  ui.seq2seq.state = std::make_shared<Seq2seqPanel>();
  ui.seq2seq.open = true;
  Seq2seqSession& p = ui.seq2seq.state->session;
  p.compare_job.start([](JobControl&) -> std::vector<std::vector<s2s::LengthBucket>> {
    throw std::runtime_error("model file truncated");
  });
  ASSERT_TRUE(frames_until([&] { return !p.compare_job.running(); }));
  EXPECT_TRUE(has(p.compare_error, "model file truncated")) << p.compare_error;
  expect_error_message("Evaluating the bottleneck models failed: model file truncated");
}

TEST_F(JobsGui, FailedExperimentsAreMessages) {
  ui.sqrt_dk.state = std::make_shared<SqrtDkPanel>();
  ui.sqrt_dk.open = true;
  SqrtDkPanel& d = *ui.sqrt_dk.state;
  d.computed_seed = d.seed;  // the window starts no job of its own
  d.job.start([](JobControl&) -> std::vector<ScalingRow> { throw 7; });
  ASSERT_TRUE(frames_until([&] { return !d.job.running(); }));
  EXPECT_EQ(d.error, "The experiment failed: unknown error");
  expect_error_message("The experiment failed: unknown error");

  ui.scores.state = std::make_shared<ScoreComparePanel>();
  ui.scores.open = true;
  ScoreComparePanel& c = *ui.scores.state;
  c.job.start([](JobControl&) -> int { throw std::runtime_error("timer failed"); });
  ASSERT_TRUE(frames_until([&] { return !c.running(); }));
  EXPECT_TRUE(has(c.error, "timer failed")) << c.error;
  expect_error_message("Measuring the score functions failed: timer failed");
}

TEST_F(JobsGui, FailedLiveTrainingIsAMessage) {
  ui.lm_train.state = std::make_shared<LmTrainPanel>();
  ui.lm_train.open = true;
  LmTrainPanel& lp = *ui.lm_train.state;
  lp.session.setup.after_step = [](long) { throw std::runtime_error("the loss is NaN"); };
  std::string error;
  ASSERT_TRUE(lp.session.live.start(lp.session.setup, error)) << error;
  ASSERT_TRUE(frames_until([&] { return !lp.session.live.snapshot().running; }));
  frame();
  expect_error_message("Training failed: the loss is NaN");

  ui.lm_train.open = false;
  ui.seq2seq.state = std::make_shared<Seq2seqPanel>();
  ui.seq2seq.open = true;
  Seq2seqSession& sp = ui.seq2seq.state->session;
  s2s::LiveTrainingSetup setup;
  setup.hidden = 8;
  setup.embed = 4;
  setup.train.train_size = 64;
  setup.train.heldout_size = 16;
  setup.example = "nov 22 26";
  setup.after_batch = [](int, int) { throw std::runtime_error("out of memory"); };
  ASSERT_TRUE(sp.live.start(setup, error)) << error;
  ASSERT_TRUE(frames_until([&] { return !sp.live.snapshot().running; }));
  frame();
  expect_error_message("Training failed: out of memory");
}

// The backend is made once, when first needed, and again only when the user picks one: edits
// reuse it (an OpenCL backend compiles its kernels when made).
TEST(Recompute, EditsReuseTheOneBackend) {
  AppState st;
  int made = 0;
  st.backend_factory = [&made](const std::string& name, std::string& error) {
    ++made;
    return make_backend(name, error);
  };
  ASSERT_TRUE(st.load_example("gqa"));
  for (const char* value : {"0.5", "0.75", "1.25"})
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 1, 0, 0, value));
  ASSERT_TRUE(st.set_causal(CausalAlign::kNone));
  ASSERT_TRUE(st.undo());
  EXPECT_EQ(made, 1);
  ASSERT_TRUE(st.set_backend("cpu"));
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 1, 0, 0, "2"));
  EXPECT_EQ(made, 2);
  EXPECT_LT(weights_gap(st), 1e-6);
}

// An edit says which heads it changed: a value of Q its query head, a value of K or V the query
// heads of that key/value head; undo and redo change the same ones. Anything else recomputes every
// head.
TEST(Recompute, AnEditRecomputesTheHeadsItChanged) {
  AppState st;
  ASSERT_TRUE(st.load_example("gqa"));  // 4 query heads over 2 key/value heads
  st.async_threshold = 0;               // computed on the worker, where heads are patched
  const auto recomputed = [&st] {
    st.wait_for_trace();
    EXPECT_LT(weights_gap(st), 1e-6);
    return st.recomputed_heads();
  };
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 3, 0, 0, "0.5"));
  EXPECT_EQ(recomputed(), 1);
  ASSERT_TRUE(st.set_value_text(Tensor::kK, 1, 0, 0, "0.5"));  // read by heads 2 and 3
  EXPECT_EQ(recomputed(), 2);
  ASSERT_TRUE(st.undo());
  EXPECT_EQ(recomputed(), 2);
  ASSERT_TRUE(st.redo());
  EXPECT_EQ(recomputed(), 2);
  ASSERT_TRUE(st.set_temperature(2.0f));
  EXPECT_EQ(recomputed(), 4);
  // Two edits before the first lands: both heads' changes reach the trace.
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 1, 0, "0.25"));
  ASSERT_TRUE(st.set_value_text(Tensor::kV, 0, 1, 0, "0.25"));  // heads 0 and 1
  st.wait_for_trace();
  EXPECT_LT(weights_gap(st), 1e-6);
  const test::RefResult ref = test::reference_attention(to_problem(st.scenario()));
  for (int h = 0; h < 4; ++h)
    EXPECT_LT(test::max_abs_diff(st.trace().head(StageId::kOutput, h), ref.output[h]), 1e-5) << h;
}

}  // namespace
}  // namespace attn
