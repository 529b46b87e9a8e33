// The training window and the induction-circuit tab, headless: training runs from the window's
// button, pause and cancel work, the curves and the two heads' heatmaps are drawn at two font
// sizes; the trained model opens in the language-model window on the circuit tab; the circuit's
// four steps draw on a repeated sentence, with the winning key and its score split into parts.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "gui/gui_setup.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "lm_fixture.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

class LmTrainGui : public test::HeadlessApp {
 protected:
  void SetUp() override {
    HeadlessApp::SetUp();
    ASSERT_TRUE(state.load_example("fear-is-the"));
  }
  // Frames until `done` or 60 s.
  template <typename F>
  bool frames_until(F done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      frame();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
};

lm::TrainOptions tiny() {
  lm::TrainOptions o;
  o.n_layer = 2;
  o.n_head = 2;
  o.n_embd = 16;
  o.context = 16;
  o.attention_only = true;
  o.batch = 8;
  o.steps = 40;
  o.eval_every = 10;
  o.heldout_sequences = 4;
  o.probe_sequences = 2;
  o.threads = 2;
  return o;
}

TEST_F(LmTrainGui, TrainsDrawsAndOpensTheModel) {
  GuiOptions o;
  o.tab = "lm-train";
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  ASSERT_TRUE(ui.lm_train.open);
  LmTrainPanel& p = *ui.lm_train.state;
  EXPECT_TRUE(p.autostart);
  p.session.setup.train = tiny();
  frames(1);
  EXPECT_FALSE(p.autostart);
  ASSERT_TRUE(frames_until([&] { return !p.session.live.snapshot().running; })) << p.session.error;
  const lm::LiveSnapshot s = p.session.live.snapshot();
  EXPECT_TRUE(s.finished) << p.session.error;
  EXPECT_EQ(s.history.size(), 5u);
  frames(1);
  EXPECT_FALSE(ui.lm_train.training);
  EXPECT_FALSE(p.collapse_settings);  // asked for when training started, done on the next frame
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    load_fonts(ui, px);
    frames(3);
  }
  EXPECT_TRUE(ui.views["lm-train-prev"].drawn);
  EXPECT_TRUE(ui.views["lm-train-ind"].drawn);
  EXPECT_EQ(ui.views["lm-train-ind"].rows, 16);

  p.open_requested = true;
  frames(1);
  EXPECT_FALSE(ui.lm_train.open);
  ASSERT_TRUE(ui.lm.open && ui.lm.state);
  ui.lm.state->session.wait();
  frames(3);
  ASSERT_TRUE(ui.lm.state->session.run());
  EXPECT_EQ(ui.lm.state->session.text(), s.probe_text);
  EXPECT_EQ(ui.lm.state->shown_tab, "circuit");
  // Its score parts are computed off the UI thread; once in, the two heads' maps are drawn.
  ui.lm.state->session.wait();
  frames(1);
  EXPECT_TRUE(ui.views["lm-circuit-ind"].drawn);
  EXPECT_TRUE(ui.views["lm-circuit-prev"].drawn);
}

// The window's session without the window: the task sets the data and the folder's default; a
// save before any training says so; after a run the folder loads, with its training.json, and a
// folder that cannot be written is an error that keeps the session as it was.
TEST(LmTrainSession, ChoosesTheTaskAndSavesTheModelTrainedSoFar) {
  LmTrainSession t;
  t.choose_task(LmTrainSession::kStories);
  EXPECT_EQ(t.setup.data, lm::DataKind::kText);
  EXPECT_FALSE(t.setup.train.attention_only);
  EXPECT_EQ(t.save_folder, "trained-stories");
  t.choose_task(LmTrainSession::kInduction);
  EXPECT_EQ(t.setup.data, lm::DataKind::kInduction);
  EXPECT_TRUE(t.setup.train.attention_only);
  EXPECT_FALSE(t.save(t.live.snapshot()));
  EXPECT_NE(t.error.find("no model has been trained yet"), std::string::npos) << t.error;

  t.setup.train = tiny();
  ASSERT_TRUE(t.start()) << t.error;
  while (t.live.snapshot().running) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const lm::LiveSnapshot s = t.live.snapshot();
  ASSERT_TRUE(s.finished) << s.error;
  t.save_folder = test::temp_path("lm-train-session-saved");
  ASSERT_TRUE(t.save(s)) << t.error;
  EXPECT_NE(t.status.find("after step " + std::to_string(s.history.back().step)), std::string::npos)
      << t.status;
  lm::Model m;
  std::string error;
  EXPECT_TRUE(lm::load_model(t.save_folder, m, error)) << error;
  const auto j = nlohmann::json::parse(test::read_bytes(t.save_folder + "/training.json"));
  EXPECT_EQ(j["steps_done"].get<long>(), s.history.back().step);

  t.save_folder = "/proc/no-such-place/model";
  EXPECT_FALSE(t.save(s));
  EXPECT_EQ(t.error.rfind("Not saved: ", 0), 0u) << t.error;
}

TEST_F(LmTrainGui, PauseResumeCancel) {
  ui.lm_train.open = true;
  frames(1);
  LmTrainPanel& p = *ui.lm_train.state;
  p.session.setup.train = tiny();
  p.session.setup.train.steps = 100000;
  std::string error;
  ASSERT_TRUE(p.session.live.start(p.session.setup, error)) << error;
  ASSERT_TRUE(frames_until([&] { return p.session.live.snapshot().history.size() >= 2; }));
  EXPECT_TRUE(ui.lm_train.training);  // the window wakes for new figures while it trains
  p.session.live.set_paused(true);
  // Once the worker holds in its pause, no step runs while the window draws.
  ASSERT_TRUE(p.session.live.control().wait_until_held(std::chrono::seconds(60)));
  const size_t held_at = p.session.live.snapshot().step_loss.size();
  frames(2);
  EXPECT_EQ(p.session.live.snapshot().step_loss.size(), held_at);
  EXPECT_TRUE(p.session.live.snapshot().paused);
  EXPECT_FALSE(ui.lm_train.training);  // and sleeps while paused
  p.session.live.set_paused(false);
  p.session.live.cancel();
  frames(2);
  EXPECT_TRUE(p.session.live.snapshot().cancelled);
  // Settings refused by the trainer are reported in the window, not a crash. (The width slider
  // keeps n_embd a multiple of the heads, so an impossible batch size stands in.)
  p.session.setup.train.batch = 0;
  p.autostart = true;
  frames(2);
  EXPECT_NE(p.session.error.find("batch"), std::string::npos) << p.session.error;
}

TEST_F(LmTrainGui, CircuitStepsOnARepeatedSentence) {
  test::TestModelSpec spec;
  spec.n_layer = 2;
  spec.n_head = 3;
  spec.n_embd = 12;
  const std::string folder = test::temp_path("gui-circuit-model");
  test::write_test_model(test::make_test_model(spec), folder);
  GuiOptions o;
  o.model = folder;
  o.text = "the heads show the teacher. the heads show the teacher.";
  o.tab = "lm-circuit";
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  LmPanel& p = *ui.lm.state;
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    load_fonts(ui, px);
    for (int step = 0; step < 4; ++step) {
      p.circuit_step = step;
      frames(2);
      EXPECT_EQ(p.shown_tab, "circuit");
    }
  }
  // The score parts are computed off the UI thread: the ones the tab shows once they are in.
  p.session.wait();
  frames(1);
  ASSERT_NE(p.session.last_circuit(), nullptr);
  const CircuitView& k = *p.session.last_circuit();
  ASSERT_GE(k.winner, 0);
  EXPECT_GE(k.ind / 3, 1);  // the induction head is in a later layer than the previous-token head
  EXPECT_LT(k.prev / 3, k.ind / 3);
  ASSERT_FALSE(k.winner_parts.empty());
  double sum = 0;
  for (const auto& part : k.winner_parts) sum += part.value;
  const LmRun& r = *p.session.run();
  EXPECT_NEAR(sum, lm::head_score(r.model->config, r.acts, k.ind / 3, k.ind % 3, k.query, k.winner),
              1e-3);
  EXPECT_EQ(k.next.size(), 3u);
  // A sentence with nothing repeated says so instead.
  p.session.set_text("the heads");
  p.session.wait();
  frames(2);
  EXPECT_TRUE(ui.views["lm-circuit-ind"].drawn);
}

}  // namespace
}  // namespace attn
