// The training window and the induction-circuit tab, headless: training runs from the window's
// button, pause and cancel work, the curves and the two heads' heatmaps are drawn at two font
// sizes; the trained model opens in the language-model window on the circuit tab; the circuit's
// four steps draw on a repeated sentence, with the winning key and its score split into parts.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <thread>

#include "gui/gui_setup.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "lm_fixture.h"
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
  p.setup.train = tiny();
  frames(1);
  EXPECT_FALSE(p.autostart);
  ASSERT_TRUE(frames_until([&] { return !p.live.snapshot().running; })) << p.error;
  const lm::LiveSnapshot s = p.live.snapshot();
  EXPECT_TRUE(s.finished) << p.error;
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

TEST_F(LmTrainGui, PauseResumeCancel) {
  ui.lm_train.open = true;
  frames(1);
  LmTrainPanel& p = *ui.lm_train.state;
  p.setup.train = tiny();
  p.setup.train.steps = 100000;
  std::string error;
  ASSERT_TRUE(p.live.start(p.setup, error)) << error;
  ASSERT_TRUE(frames_until([&] { return p.live.snapshot().history.size() >= 2; }));
  EXPECT_TRUE(ui.lm_train.training);  // the window wakes for new figures while it trains
  p.live.set_paused(true);
  // Once the worker holds in its pause, no step runs while the window draws.
  ASSERT_TRUE(p.live.control().wait_until_held(std::chrono::seconds(60)));
  const size_t held_at = p.live.snapshot().step_loss.size();
  frames(2);
  EXPECT_EQ(p.live.snapshot().step_loss.size(), held_at);
  EXPECT_TRUE(p.live.snapshot().paused);
  EXPECT_FALSE(ui.lm_train.training);  // and sleeps while paused
  p.live.set_paused(false);
  p.live.cancel();
  frames(2);
  EXPECT_TRUE(p.live.snapshot().cancelled);
  // Settings refused by the trainer are reported in the window, not a crash. (The width slider
  // keeps n_embd a multiple of the heads, so an impossible batch size stands in.)
  p.setup.train.batch = 0;
  p.autostart = true;
  frames(2);
  EXPECT_NE(p.error.find("batch"), std::string::npos) << p.error;
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
