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
    if (ui.seq2seq.state) ui.seq2seq.state->session.live.cancel();
    HeadlessApp::TearDown();
  }
  int find(const std::string& name) {
    const std::vector<std::string>& files = ui.seq2seq.state->session.files();
    for (size_t i = 0; i < files.size(); ++i)
      if (files[i].size() >= name.size() &&
          files[i].compare(files[i].size() - name.size(), name.size(), name) == 0)
        return static_cast<int>(i);
    return -1;
  }
  // Model A's translation of the input, as the window drew it.
  std::string output() {
    Seq2seqSession& s = ui.seq2seq.state->session;
    const Seq2seqTranslation* t = s.translation(s.model_a);
    return t ? t->output : "(no model)";
  }
};

TEST_F(Seq2seqWindow, TranslatesStepsAndComparesSideBySide) {
  frames(3);
  ASSERT_TRUE(ui.seq2seq.state);
  EXPECT_EQ(ui.seq2seq.state->shown_tab, "translate");
  Seq2seqSession& p = ui.seq2seq.state->session;
  EXPECT_GE(p.files().size(), 7u);
  ASSERT_GE(find("/bahdanau.s2s"), 0);
  EXPECT_EQ(p.model_a, find("/bahdanau.s2s"));
  EXPECT_EQ(output(), "1987-11-03");
  p.input = "nov 22 26";
  frames(2);
  EXPECT_EQ(output(), "2026-11-22");
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
  for (int i = 0; i < p.model_count(); ++i) {
    p.model_a = i;
    frames(1);
    EXPECT_FALSE(p.any_load_error()) << p.load_error(i);
  }
  p.input = "22 Nov 2026";  // not in the alphabet: an error line, no crash
  frames(2);
  EXPECT_EQ(output(), "");
  EXPECT_NE(p.translation(p.model_a)->error.find("'N'"), std::string::npos)
      << p.translation(p.model_a)->error;
}

TEST_F(Seq2seqWindow, TrainsLiveWhileDrawn) {
  frames(1);
  ui.seq2seq.state->select_tab = "live";
  frames(2);
  EXPECT_EQ(ui.seq2seq.state->shown_tab, "live");
  Seq2seqSession& p = ui.seq2seq.state->session;
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
  ui.seq2seq.state->select_tab = "bottleneck";
  frames(2);
  EXPECT_EQ(ui.seq2seq.state->shown_tab, "bottleneck");
}

TEST_F(Seq2seqWindow, OpensOnAModelNamedOnTheCommandLine) {
  GuiOptions o;
  o.seq2seq_model = "bottleneck/dot-max40";
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  frames(2);
  const Seq2seqSession& p = ui.seq2seq.state->session;
  ASSERT_GE(p.model_a, 0);
  EXPECT_EQ(p.name(p.model_a), "bottleneck/dot-max40");
  EXPECT_EQ(p.model_a, find("/models/bottleneck/dot-max40.s2s"));
  EXPECT_TRUE(std::find(p.names().begin(), p.names().end(), "bahdanau") != p.names().end());
  EXPECT_EQ(output(), "1987-11-03");

  // A model file that is not shipped joins the list under its file name and is selected.
  const std::string own = test::temp_path("my-dot.s2s");
  std::filesystem::copy_file(p.files()[static_cast<size_t>(p.model_a)], own);
  const size_t shipped = p.files().size();
  o.seq2seq_model = own;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;  // a new window state: `p` is gone
  frames(1);
  const Seq2seqSession& q = ui.seq2seq.state->session;
  EXPECT_EQ(q.name(q.model_a), std::filesystem::path(own).filename());
  EXPECT_EQ(q.files()[static_cast<size_t>(q.model_a)], own);
  EXPECT_EQ(q.files().size(), shipped + 1);

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

// The window's model with no window: the models, a translation, the step's question and its
// verdict, checked against the alignment read directly.
TEST(Seq2seqSessionModel, StepsAndJudgesWithoutTheWindow) {
  Seq2seqSession s;
  s.ensure_models();
  ASSERT_GE(s.model_count(), 7);
  EXPECT_EQ(s.name(s.model_a), "bahdanau");
  s.input = "nov 22 26";
  const Seq2seqTranslation* t = s.translation(s.model_a);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->output, "2026-11-22");
  ASSERT_EQ(t->steps(), 11);  // ten characters and </s>
  EXPECT_EQ(t->rows.back(), "</s>");
  EXPECT_EQ(t->cols.size(), 9u);
  EXPECT_EQ(s.translation(s.model_a), t);  // the same input is not translated again

  // The position explained is the largest weight of the step's row, until one is picked.
  s.go_to_step(4);
  const s2s::Model& m = *s.model(s.model_a);
  int best = 0;
  for (int j = 1; j < t->weights.cols(); ++j)
    if (t->weights(4, j) > t->weights(4, best)) best = j;
  EXPECT_EQ(s.explained_position(m, *t), best);
  s.position = (best + 1) % 9;
  EXPECT_EQ(s.explained_position(m, *t), (best + 1) % 9);

  // Predict, then reveal: the largest weight is exact, and a new step forgets the guess.
  s.predicting = true;
  EXPECT_TRUE(s.asking(m));
  s.guess = best;
  s.revealed = true;
  EXPECT_FALSE(s.asking(m));
  EXPECT_EQ(s.verdict(*t).grade, Verdict::Grade::kExact);
  s.go_to_step(5);
  EXPECT_EQ(s.guess, -1);
  EXPECT_EQ(s.position, -1);
  EXPECT_FALSE(s.revealed);

  // The model without attention reads only the encoder's last state.
  int none = -1;
  for (int i = 0; i < s.model_count(); ++i)
    if (s.name(i) == "none") none = i;
  ASSERT_GE(none, 0);
  const Seq2seqTranslation* n = s.translation(none);
  ASSERT_TRUE(n);
  for (int i = 0; i < n->steps(); ++i) {
    EXPECT_EQ(n->weights(i, 8), 1.0f);
    EXPECT_EQ(n->weights.row(i).sum(), 1.0f);
  }
  EXPECT_EQ(s.explained_position(*s.model(none), *n), -1);

  // An input outside the alphabet is an error naming the character, not a translation.
  s.input = "22 Nov 2026";
  EXPECT_EQ(s.translation(s.model_a)->output, "");
  EXPECT_NE(s.translation(s.model_a)->error.find("'N'"), std::string::npos);
  // A file that is not a model is a load error naming it, and the list goes on.
  const std::string bad = test::temp_path("not-a-model.s2s");
  std::string error;
  ASSERT_TRUE(write_file_atomically(bad, "hello", error)) << error;
  s.open_model = bad;
  s.ensure_models();
  EXPECT_EQ(s.files()[static_cast<size_t>(s.model_a)], bad);
  EXPECT_EQ(s.model(s.model_a), nullptr);
  EXPECT_NE(s.load_error(s.model_a), "");
  EXPECT_EQ(s.translation(s.model_a), nullptr);
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
