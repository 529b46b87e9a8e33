// Every panel laid out at every size a classroom uses (1024×768, 1280×720, 1600×1000, 1920×1080,
// 3840×2160), in normal and presentation mode, both themes and fonts up to 2×: no ImGui item and
// no text drawn straight into a draw list may be cut by its window, its table column or the clip
// rectangle it was drawn under, unless the window scrolls to show it.
//
// ImGui 1.86 records no per-item rectangles: tests/gui_support/layout_check.h records them.
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "gui/gui_setup.h"
#include "gui/model/layout.h"
#include "gui/panel_lm.h"
#include "gui/panel_seq2seq.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "gui_support/layout_check.h"
#include "io/examples.h"
#include "lm_fixture.h"
#include "reference.h"

namespace attn {
namespace {

struct Size {
  int w, h;
};
const Size kSizes[] = {{1024, 768}, {1280, 720}, {1600, 1000}, {1920, 1080}, {3840, 2160}};

// Draws with its own frames(): at a window size, recording the last frame's items.
class Layout : public test::HeadlessApp {
 protected:
  void SetUp() override {
    HeadlessApp::SetUp();
    ui.probes.text_log = &texts;
    ASSERT_TRUE(state.load_example("fear-is-the"));
  }
  void TearDown() override {
    test::record_items(nullptr);
    if (ui.seq2seq.state) ui.seq2seq.state->session.live.cancel();
    HeadlessApp::TearDown();
  }

  // Draws frames at a window size, once its work is in (settle); the last one is recorded and
  // checked.
  void frames(Size s, int n = 6) {
    resize_to(s.w, s.h);
    settle();
    for (int i = 0; i < n; ++i) draw_frame(i + 1 == n);
  }
  void draw_frame(bool record) {
    items.clear();
    texts.clear();
    test::record_items(record ? &items : nullptr);
    state.poll();
    ImGui::GetIO().DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    draw_app(ui);
    ImGui::Render();
    test::record_items(nullptr);
  }

  // Every recorded item and text of the last frame, against its window and clip rectangle.
  void check(const std::string& what) {
    SCOPED_TRACE(what);
    test::check_layout(items, texts);
    EXPECT_GT(items.size(), 10u);
  }

  // Each stage of the current example, and the tabs of the panels that have them.
  void walk(Size s, const std::string& what, bool all_stages) {
    const std::vector<StageInfo> stages = state.stages();
    for (size_t i = 0; i < stages.size(); ++i) {
      if (!all_stages && stages[i].id != StageId::kInputs && stages[i].id != StageId::kWeights)
        continue;
      state.set_stage(stages[i].id);
      frames(s);
      check(what + " stage " + stages[i].name);
    }
    for (const char* tab : {"variants", "heads", "inputs", "narration"}) {
      ui.select_tab = tab;
      frames(s);
      check(what + " tab " + tab);
    }
  }

  std::vector<test::ItemBox> items;
  std::vector<PlacedText> texts;
};

std::string name(Size s, bool presentation, float px, bool light) {
  return std::to_string(s.w) + "x" + std::to_string(s.h) + (presentation ? " presentation" : "") +
         " font " + std::to_string(static_cast<int>(px)) + (light ? " light" : " dark");
}

// The check itself fails where it should: two buttons drawn over each other, and a button
// pushed past the bottom of a window that does not scroll.
TEST_F(Layout, TheCheckSeesOverlapsAndClipping) {
  resize_to(800, 600);
  auto draw = [&](bool overlapping, bool cut) {
    items.clear();
    test::record_items(&items);
    ImGui::NewFrame();
    ImGui::SetNextWindowPos({10, 10});
    ImGui::SetNextWindowSize({300, 200});
    ImGui::Begin("check", nullptr,
                 ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    for (int i = 0; i < 3; ++i) ImGui::Button(("button " + std::to_string(i)).c_str());
    if (overlapping) {
      ImGui::SetCursorPos({20, 40});
      ImGui::Button("over the others");
    }
    if (cut) {
      ImGui::SetCursorPos({20, 190});
      ImGui::Button("below the bottom");
    }
    ImGui::End();
    ImGui::Render();
    test::record_items(nullptr);
    test::LayoutCheck quiet;
    quiet.max_reports = 0;
    return test::check_layout(items, {}, quiet);
  };
  EXPECT_EQ(draw(false, false), 0);
  EXPECT_GE(draw(true, false), 1);
  EXPECT_EQ(draw(false, true), 1);
}

TEST_F(Layout, EveryPanelFitsAtEverySizeInNormalMode) {
  for (const Size& s : kSizes)
    for (float px : {20.0f, 28.0f}) {
      ui.settings.font_px = px;
      ui.presentation = false;
      for (const char* ex : {"fear-is-the", "sliding-window", "gqa"}) {
        ASSERT_TRUE(state.load_example(ex));
        state.select_cell(1, 0);
        walk(s, name(s, false, px, true) + " " + ex, std::string(ex) == "gqa");
      }
    }
}

TEST_F(Layout, PresentationModeFitsAtEverySizeThemeAndFont) {
  ui.presentation = true;
  for (const Size& s : kSizes)
    for (float px : {20.0f, 28.0f})  // presentation fonts of 28 to 39 px: up to 2× the default
      for (bool light : {true, false}) {
        ui.settings.font_px = px;
        ui.settings.light_theme = light;
        for (const ExampleInfo& e : list_examples()) {
          ASSERT_TRUE(state.load_example(e.name));
          ui.panels_shown = false;
          const std::string what = name(s, true, px, light) + " " + e.name;
          walk(s, what, e.name == "fear-is-the" || e.name == "sliding-window" || e.name == "mqa");
          // A cell's narration beside the heatmap, in large type.
          state.set_stage(StageId::kWeights);
          state.select_cell(state.trace().n_q - 1, 0);
          frames(s);
          check(what + " narration");
        }
        // Tab brings the side panels back.
        ui.panels_shown = true;
        ASSERT_TRUE(state.load_example("multi-head"));
        walk(s, name(s, true, px, light) + " panels shown", false);
      }
}

TEST_F(Layout, LargeFontsFitInTheNormalLayoutOnLargeScreens) {
  ui.settings.font_px = 40;  // 2× the default
  for (const Size& s : {Size{1600, 1000}, Size{1920, 1080}, Size{3840, 2160}}) {
    ASSERT_TRUE(state.load_example("gqa"));
    walk(s, name(s, false, 40, true), true);
  }
}

// The Help windows and the first start's hint, on a 1280 × 720 projector in presentation mode
// with the fonts a teacher picks for the back of the room (and the other sizes at 24 px).
TEST_F(Layout, TheHelpWindowsAndTheFirstStartHintFitInLargeType) {
  ui.presentation = true;
  ui.settings.welcomed = false;
  for (const Size& s : kSizes)
    for (float px : {24.0f, 32.0f}) {
      if (px == 32.0f && !(s.w == 1280 && s.h == 720)) continue;
      ui.settings.font_px = px;
      const std::string what = name(s, true, px, true);
      ui.tour.open = ui.shortcuts.open = ui.about.open = false;
      state.clear_selection();
      frames(s);
      check(what + " first start hint");
      for (int page = 0; page < tour_page_count(); ++page) {
        ui.tour.open = true;
        ui.tour.page = page;
        frames(s);
        check(what + " tour page " + std::to_string(page + 1));
      }
      ui.tour.open = false;
      ui.shortcuts.open = true;
      frames(s);
      check(what + " keyboard shortcuts");
      ui.shortcuts.open = false;
      ui.about.open = true;
      frames(s);
      check(what + " about");
      ui.about.open = false;
    }
}

TEST_F(Layout, APredictionAndItsRevealFit) {
  for (const Size& s : kSizes)
    for (bool presentation : {false, true}) {
      ui.presentation = presentation;
      ASSERT_TRUE(state.load_example("sliding-window"));
      state.set_stage(StageId::kWeights);
      for (PredictKind kind : {PredictKind::kValue, PredictKind::kPick}) {
        ui.predict_form.kind = kind;
        start_prediction(ui);
        ASSERT_TRUE(ui.predict.active());
        frames(s);
        check(name(s, presentation, ui.settings.font_px, true) + " predicting");
        if (kind == PredictKind::kPick)
          ui.predict.guess_pick(2);
        else
          ASSERT_TRUE(ui.predict.guess_text("0.3", ui.predict_form.error));
        reveal_prediction(ui);
        frames(s);
        check(name(s, presentation, ui.settings.font_px, true) + " revealed");
        ui.predict.cancel();
      }
    }
}

TEST_F(Layout, TheSeq2seqWindowFits) {
  ui.seq2seq.open = true;
  for (const Size& s : kSizes)
    for (bool presentation : {false, true}) {
      ui.presentation = presentation;
      frames(s);
      ASSERT_TRUE(ui.seq2seq.state);
      Seq2seqPanel& w = *ui.seq2seq.state;
      Seq2seqSession& p = w.session;
      w.select_tab = "translate";
      p.predicting = false;
      frames(s);
      check(name(s, presentation, ui.settings.font_px, true) + " seq2seq translate");
      p.predicting = true;
      p.revealed = false;
      frames(s);
      check(name(s, presentation, ui.settings.font_px, true) + " seq2seq predicting");
      p.guess = 3;
      p.revealed = true;
      frames(s);
      check(name(s, presentation, ui.settings.font_px, true) + " seq2seq revealed");
      // The bottleneck chart with made-up accuracies: its legend and axes must fit.
      p.compare_names = {"bottleneck/none-max40.s2s", "bottleneck/bahdanau-max40.s2s"};
      p.compare_rows.assign(2, {});
      for (auto& row : p.compare_rows)
        for (const char* label : {"6-10", "11-20", "21-40", "41-70", "71+", "all"}) {
          s2s::LengthBucket b;
          b.label = label;
          b.count = 100;
          b.correct = 80;
          row.push_back(b);
        }
      w.select_tab = "bottleneck";
      frames(s);
      check(name(s, presentation, ui.settings.font_px, true) + " seq2seq bottleneck");
      w.select_tab = "live";
      frames(s);
      check(name(s, presentation, ui.settings.font_px, true) + " seq2seq live");
    }
}

// The language model's window over the stepper: every tab at every size, in both modes, at the
// default font and a large one, with a sentence long enough to make the head view scroll.
TEST_F(Layout, TheLanguageModelWindowFits) {
  test::TestModelSpec spec;
  spec.n_layer = 3;
  spec.n_head = 4;
  spec.n_embd = 16;
  const std::string folder = test::temp_path("layout-lm-model");
  test::write_test_model(test::make_test_model(spec), folder);
  GuiOptions o;
  o.model = folder;
  o.text = "the teacher shows the heads. the teacher shows the heads.";
  std::string error;
  ASSERT_TRUE(setup_lm_from_options(ui, o, error)) << error;
  ASSERT_TRUE(ui.lm.open);
  LmPanel& p = *ui.lm.state;
  for (const Size& s : kSizes)
    for (bool presentation : {false, true})
      for (float px : {20.0f, 28.0f}) {
        ui.presentation = presentation;
        ui.settings.font_px = px;
        frames(s, 2);
        for (const char* tab : {"model", "heads", "block", "next", "roles", "kv"}) {
          // The model view is a tab of its own only where it does not fit beside the tabs.
          if (std::string(tab) == "model" && !p.model_view_tab) continue;
          p.select_tab = tab;
          frames(s);
          ASSERT_EQ(p.shown_tab, tab);
          check(name(s, presentation, px, true) + " language model " + tab);
        }
        p.select_tab = "heads";
        p.all_heads = true;
        frames(s);
        check(name(s, presentation, px, true) + " language model, all heads");
        p.all_heads = false;
      }
  ui.lm.open = false;
}

// Labels are shrunk, turned or shortened before any is left out (the sliding window's 8 keys at
// 1600×1000, and at 1920×1080 with a 28 px font in presentation mode).
TEST_F(Layout, NoKeyLabelIsDroppedWhileThereIsRoom) {
  ASSERT_TRUE(state.load_example("sliding-window"));
  state.set_stage(StageId::kWeights);
  frames({1600, 1000});
  HeatmapViewport& v = ui.views["main"];
  EXPECT_EQ(v.labels_dropped, 0);
  EXPECT_EQ(v.labels_abbreviated, 0);
  EXPECT_TRUE(v.numbers_shown);
  ui.presentation = true;
  ui.settings.font_px = 28;
  frames({1920, 1080});
  EXPECT_EQ(v.labels_dropped, 0);
  EXPECT_EQ(v.labels_abbreviated, 0);
  EXPECT_TRUE(v.numbers_shown);
  EXPECT_GE(v.number_px, 20.0f);
  // A small projector with the same font: the font stays at what leaves the grid room, and
  // the keys keep their whole names.
  for (const Size& s : {Size{1280, 720}, Size{1024, 768}}) {
    SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h));
    frames(s);
    EXPECT_EQ(v.labels_dropped, 0);
    EXPECT_EQ(v.labels_abbreviated, 0);
    // (At 1024×768 the 28 px rows leave the 8×8 grid's cells too small for numbers: hover
    // and the narration give them.)
    if (s.w == 1280) {
      EXPECT_TRUE(v.numbers_shown);
    }
  }
}

// A label exactly as wide as the widest one is never cut to "…": the label column is the widest
// label plus padding, and handing that width back through float sums once left "b" and "d" of
// the GQA example (the widest letters) as "…" at 1280×720 in presentation.
TEST_F(Layout, NoTokenOfAnExampleIsShortenedOnASmallProjector) {
  ui.presentation = true;
  for (const ExampleInfo& e : list_examples()) {
    ASSERT_TRUE(state.load_example(e.name));
    if (state.trace().n_q > 24 || state.trace().n_k > 24) continue;  // long ones may shorten
    state.set_stage(StageId::kWeights);
    for (float px : {20.0f, 24.0f, 32.0f}) {
      SCOPED_TRACE(e.name + " font " + std::to_string(static_cast<int>(px)));
      ui.settings.font_px = px;
      frames({1280, 720});
      const HeatmapViewport& v = ui.views["main"];
      EXPECT_EQ(v.labels_abbreviated, 0);
    }
  }
}

}  // namespace
}  // namespace attn
