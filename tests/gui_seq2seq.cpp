// The seq2seq window drawn headless for many frames: it finds the shipped models, translates and
// steps through the decoder, shows two models side by side, trains live while being drawn, and
// the real app opens on it with `gui --tab seq2seq`; `gui --seq2seq-model` opens it on a shipped
// model by name or on a model file.
#include <gtest/gtest.h>
#include <imgui.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "gui/gui.h"
#include "gui/gui_setup.h"
#include "gui/panel_seq2seq.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "io/atomic_file.h"
#include "reference.h"

namespace attn {
namespace {

class Seq2seqWindow : public test::HeadlessApp {
 protected:
  void SetUp() override {
    HeadlessApp::SetUp();
    ui.seq2seq.open = true;
    // As in the app, the attention panels behind the seq2seq window show a scenario.
    ASSERT_TRUE(state.load_example("fear-is-the"));
  }
  void TearDown() override {
    if (ui.seq2seq.state) ui.seq2seq.state->live.cancel();
    HeadlessApp::TearDown();
  }
  int find(const std::string& name) {
    for (size_t i = 0; i < ui.seq2seq.state->files.size(); ++i)
      if (ui.seq2seq.state->files[i].size() >= name.size() &&
          ui.seq2seq.state->files[i].compare(ui.seq2seq.state->files[i].size() - name.size(),
                                             name.size(), name) == 0)
        return static_cast<int>(i);
    return -1;
  }
};

TEST_F(Seq2seqWindow, TranslatesStepsAndComparesSideBySide) {
  frames(3);
  ASSERT_TRUE(ui.seq2seq.state);
  Seq2seqPanel& p = *ui.seq2seq.state;
  EXPECT_GE(p.files.size(), 7u);
  EXPECT_EQ(p.shown_tab, "translate");
  ASSERT_GE(find("/bahdanau.s2s"), 0);
  EXPECT_EQ(p.model_a, find("/bahdanau.s2s"));
  EXPECT_EQ(p.last_output, "1987-11-03");
  std::strcpy(p.input, "nov 22 26");
  frames(2);
  EXPECT_EQ(p.last_output, "2026-11-22");
  for (int t = 0; t < 11; ++t) {
    p.step = t;
    frames(1);
  }
  p.step = 40;  // clamped to the last step
  frames(1);
  EXPECT_EQ(p.step, 10);
  p.model_b = find("/none.s2s");
  p.position = 3;
  frames(3);
  // Every model draws, including local ones with their window and the bottleneck models.
  for (int i = 0; i < static_cast<int>(p.files.size()); ++i) {
    p.model_a = i;
    frames(1);
    EXPECT_TRUE(p.load_errors.empty());
  }
  std::strcpy(p.input, "22 Nov 2026");  // not in the alphabet: an error line, no crash
  frames(2);
  EXPECT_EQ(p.last_output, "");
}

TEST_F(Seq2seqWindow, TrainsLiveWhileDrawn) {
  frames(1);
  Seq2seqPanel& p = *ui.seq2seq.state;
  p.select_tab = "live";
  frames(2);
  EXPECT_EQ(p.shown_tab, "live");
  s2s::LiveTrainingSetup setup;
  setup.hidden = 8;
  setup.embed = 4;
  setup.train.epochs = 2;
  setup.train.train_size = 96;
  setup.train.batch = 16;
  setup.train.heldout_size = 20;
  setup.redraw_every = 2;
  setup.example = p.live_example;
  std::string error;

  // While a (long) run trains, the window wakes a few times a second for new figures rather than
  // drawing every frame (Ui::training, app_window.cpp); paused, it sleeps.
  s2s::LiveTrainingSetup long_run = setup;
  long_run.train.epochs = 100000;
  ASSERT_TRUE(p.live.start(long_run, error)) << error;
  const auto started = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (p.live.snapshot().batch_loss.empty() && std::chrono::steady_clock::now() < started)
    frames(1);
  frames(1);
  EXPECT_TRUE(ui.seq2seq.training);
  EXPECT_TRUE(ui.training());
  EXPECT_FALSE(ui.seq2seq.busy);
  p.live.set_paused(true);
  frames(1);
  EXPECT_FALSE(ui.seq2seq.training);
  p.live.set_paused(false);  // as the panel's Train button does before a new run
  p.live.cancel();

  ASSERT_TRUE(p.live.start(setup, error)) << error;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (p.live.snapshot().running && std::chrono::steady_clock::now() < end) frames(1);
  const s2s::LiveSnapshot s = p.live.snapshot();
  EXPECT_TRUE(s.finished);
  EXPECT_EQ(s.batch_loss.size(), 12u);
  frames(3);
  EXPECT_FALSE(ui.seq2seq.training);  // finished: the window sleeps again
  p.select_tab = "bottleneck";
  frames(2);
  EXPECT_EQ(p.shown_tab, "bottleneck");
}

TEST_F(Seq2seqWindow, OpensOnAModelNamedOnTheCommandLine) {
  GuiOptions o;
  o.seq2seq_model = "bottleneck/dot-max40";
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  frames(2);
  Seq2seqPanel& p = *ui.seq2seq.state;
  ASSERT_GE(p.model_a, 0);
  EXPECT_EQ(p.names[static_cast<size_t>(p.model_a)], "bottleneck/dot-max40");
  EXPECT_EQ(p.model_a, find("/models/bottleneck/dot-max40.s2s"));
  EXPECT_TRUE(std::find(p.names.begin(), p.names.end(), "bahdanau") != p.names.end());
  EXPECT_EQ(p.last_output, "1987-11-03");

  // A model file that is not shipped joins the list under its file name and is selected.
  const std::string own = test::temp_path("my-dot.s2s");
  std::filesystem::copy_file(p.files[static_cast<size_t>(p.model_a)], own);
  const size_t shipped = p.files.size();
  o.seq2seq_model = own;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;  // a new window state: `p` is gone
  frames(1);
  const Seq2seqPanel& q = *ui.seq2seq.state;
  EXPECT_EQ(q.names[static_cast<size_t>(q.model_a)], std::filesystem::path(own).filename());
  EXPECT_EQ(q.files[static_cast<size_t>(q.model_a)], own);
  EXPECT_EQ(q.files.size(), shipped + 1);

  // An unknown name is refused before any window opens, listing the names.
  AppState state3;
  Ui ui3{state3};
  o.seq2seq_model = "bahdanu";
  int code = 0;
  EXPECT_FALSE(setup_from_options(ui3, o, error, &code));
  EXPECT_EQ(code, 2);
  EXPECT_EQ(error.rfind("--seq2seq-model: 'bahdanu' is neither a file nor the name of a shipped "
                        "seq2seq model; shipped seq2seq models: bahdanau, ",
                        0),
            0u)
      << error;
}

TEST(Seq2seqApp, OpensOnTheSeq2seqWindow) {
  const std::string png = test::temp_path("seq2seq-window.png");
  const auto r =
      test::run_cli("gui --tab seq2seq --size 1280x800 --screenshot '" + png + "' --frames 5");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string bytes, error;
  ASSERT_TRUE(read_text_file(png, bytes, error)) << error;
  EXPECT_EQ(bytes.substr(0, 4), "\x89PNG");
  // Opening on live training starts it at once; the window closes with the training running.
  const auto live =
      test::run_cli("gui --tab seq2seq-live --size 1280x800 --screenshot '" + png + "' --frames 3");
  EXPECT_EQ(live.status, 0) << live.err;
  const auto bad = test::run_cli("gui --tab seq3seq --screenshot '" + png + "' --frames 1");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--tab"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace attn
