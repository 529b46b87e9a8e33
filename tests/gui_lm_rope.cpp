// A Llama folder's head in the stepper, headless: the rope stage's three views (the angles, q and
// k before and after the turn, the same distance giving the same score) drawn at projector sizes
// and fonts with every item inside its window; the head's inputs naming the K/V head it reads
// and the query heads that share it; the roles tab's attention-sink box on the shipped induction
// model, written from its numbers; the Circuit tab's score split on the Llama-style induction
// model, its words naming what the heads read at the winning key.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "attention/rope.h"
#include "gui/gui_setup.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "gui_support/layout_check.h"
#include "lm/circuit.h"
#include "lm/sinks.h"
#include "reference.h"
#include "small_llama.h"

namespace attn {
namespace {

const char* kText = "the teacher shows the heads. the teacher shows the heads.";

class LmRope : public test::HeadlessApp {
 protected:
  void TearDown() override {
    test::record_items(nullptr);
    HeadlessApp::TearDown();
  }

  // A Llama folder: 6 query heads sharing 2 K/V heads (3 per group), RoPE, opened on kText.
  void open_llama() {
    open_lm(test::write_small_llama("gui-lm-rope-llama", kText, LmArch::kLlama, 9), kText);
    frames(3);
    ASSERT_NE(ui.lm.state->session.run(), nullptr);
  }

  // Frames at a window size, once its work is in (settle); the last one's items and texts
  // checked against their windows.
  int checked_frames(int w, int h, const std::string& what) {
    SCOPED_TRACE(what);
    resize_to(w, h);
    settle();
    for (int i = 0; i < 6; ++i) {
      const bool last = i == 5;
      items.clear();
      texts.clear();
      test::record_items(last ? &items : nullptr);
      frame();
      test::record_items(nullptr);
    }
    EXPECT_GT(items.size(), 10u);
    return test::check_layout(items, texts);
  }

  // The language model window on a shipped model's tab (gui --model … --text … --tab …), its
  // drawn text recorded for the layout checks.
  void open_tab(const char* model, const char* text, const char* tab) {
    GuiOptions o;
    o.model = model;
    if (text) o.text = text;
    o.tab = tab;
    std::string error;
    ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
    ASSERT_TRUE(ui.lm.state);
    ui.probes.text_log = &texts;
  }

  // The frames of a 1280×720 projector checked with 20 and 32 px text.
  void check_projector(const std::string& what) {
    for (float px : {20.0f, 32.0f}) {
      ui.settings.font_px = px;
      EXPECT_EQ(checked_frames(1280, 720, what), 0) << what << " at " << px << " px";
    }
  }

  std::vector<test::ItemBox> items;
  std::vector<PlacedText> texts;
};

TEST_F(LmRope, TheRopeViewsDrawAtProjectorSizesAndFonts) {
  open_llama();
  ui.probes.text_log = &texts;
  open_lm_head_in_stepper(ui, 1, 4);
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kRope), nullptr);
  state.set_stage(StageId::kRope);
  state.select_cell(7, 5);
  const char* names[] = {"angles", "turned", "distance"};
  for (bool presentation : {false, true})
    for (float px : {24.0f, 32.0f})
      for (auto [w, h] : {std::pair{1920, 1080}, std::pair{1280, 720}})
        for (int view = 0; view < kRopeViewCount; ++view) {
          ui.presentation = presentation;
          ui.settings.font_px = px;
          ui.rope.request = view;
          const std::string what = std::to_string(w) + "x" + std::to_string(h) + " font " +
                                   std::to_string(static_cast<int>(px)) +
                                   (presentation ? " presentation " : " ") + names[view];
          EXPECT_EQ(checked_frames(w, h, what), 0) << what;
          EXPECT_EQ(ui.rope.view, view) << what;
          EXPECT_EQ(ui.rope.request, -1);
          EXPECT_EQ(state.current_stage().id, StageId::kRope);
        }
  // The distance view's heatmap was drawn, and the selection is what it shows.
  EXPECT_TRUE(ui.views["rope-distance"].drawn);
  EXPECT_EQ(state.selection().query, 7);
  EXPECT_EQ(state.selection().key, 5);
}

// The numbers the distance view shows are the engine's, for the selected query's and key's
// unrotated rows of this head: constant along each diagonal, and the real scores at their own
// positions.
TEST_F(LmRope, TheDistanceViewShowsTheHeadsOwnScores) {
  open_llama();
  open_lm_head_in_stepper(ui, 1, 4);
  frames(3);
  const AttentionTrace& t = state.trace();
  const RopeInputs& r = t.rope;
  ASSERT_TRUE(r.enabled());
  const Matrix m = rope_distance_scores(r.q_before[0], 7, r.k_before[0], 5, r.inv_freq, 12);
  EXPECT_LT(rope_diagonal_spread(m), 1e-4 * std::max(1.0f, m.cwiseAbs().maxCoeff()));
  // The trace's own score of query 7 and key 5 (Q·Kᵀ of the rotated rows) is the cell (7, 5).
  const Matrix& scores = t.head(t.step(StageId::kScores), 0);
  EXPECT_NEAR(scores(7, 5), m(7, 5), 1e-4);
  EXPECT_NEAR(scores(7, 5), m(2, 0), 1e-4);  // …and that of every pair two apart
}

// Query head 4 of 6 reads K/V head 1 of 2 with query heads 3 and 5: the stepper's name, the
// description, the inputs note and the K heading all say so.
TEST_F(LmRope, AGroupedHeadSaysWhichKvHeadItReadsAndWhoSharesIt) {
  open_llama();
  open_lm_head_in_stepper(ui, 0, 4);
  frames(3);
  const std::string shared = "K/V head 1 of 2, shared with query heads 3, 5";
  EXPECT_NE(state.scenario().name.find(shared), std::string::npos) << state.scenario().name;
  EXPECT_NE(state.scenario().description.find("shared with query heads 3, 5"), std::string::npos)
      << state.scenario().description;
  EXPECT_EQ(lm_open_head_kv_text(ui), shared);
  // The inputs stage draws its K heading with it, at two fonts.
  state.set_stage(StageId::kInputs);
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    EXPECT_EQ(checked_frames(1600, 1000, "inputs"), 0);
  }
  // A scenario that is not a model's head has none.
  ASSERT_TRUE(state.load_example("gqa"));
  EXPECT_EQ(lm_open_head_kv_text(ui), "");
}

// The shipped induction model's roles tab, first-token score: the box names the strongest sink
// with its numbers, recomputed here from the run, and opens that head.
TEST_F(LmRope, TheRolesTabExplainsTheStrongestSink) {
  ASSERT_NO_FATAL_FAILURE(open_tab("induction", nullptr, "lm-sinks"));
  LmPanel& p = *ui.lm.state;
  EXPECT_EQ(p.role, 1);
  check_projector("roles, first token");
  EXPECT_EQ(p.shown_tab, "roles");
  const LmRun* r = p.session.run();
  ASSERT_NE(r, nullptr);
  const lm::SinkExample s = lm::strongest_sink(r->model->config, r->acts, r->scores);
  ASSERT_GE(s.layer, 0);
  EXPECT_EQ(p.sink.layer, s.layer);
  EXPECT_EQ(p.sink.head, s.head);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * s.first);
  EXPECT_NE(p.sink_text.find(pct), std::string::npos) << p.sink_text;
  EXPECT_NE(
      p.sink_text.find("Layer " + std::to_string(s.layer) + ", head " + std::to_string(s.head)),
      std::string::npos)
      << p.sink_text;
  EXPECT_NE(p.sink_text.find("sum to 1"), std::string::npos);
  // Another sentence, new numbers: the box follows the run.
  const uint64_t serial = p.session.serial();
  p.session.set_text(" a b c d e f a b c d e f");
  p.session.wait();
  frames(2);
  EXPECT_NE(p.session.serial(), serial);
  EXPECT_EQ(p.sink_serial, p.session.serial());
}

// The Circuit tab's step 3 on induction-llama (RoPE): its table and words fit a projector, and
// the words say, for the two largest head parts of the winning key's score, the token each head
// gave the most weight at that key — recomputed here from the run's weights — and the winner's
// margin over the runner-up from the parts' sums.
TEST_F(LmRope, TheCircuitTabSaysWhatTheHeadsReadAtTheWinningKey) {
  ASSERT_NO_FATAL_FAILURE(
      open_tab("induction-llama",
               " q x m b f k z r a w e t y u i o q x m b f k z r a w e t y u i o", "lm-circuit"));
  LmPanel& p = *ui.lm.state;
  p.circuit_step = 2;
  p.circuit_query = 17;  // the second " x": the earlier one is at 1, followed by " m" at 2
  check_projector("circuit, why");
  EXPECT_EQ(p.shown_tab, "circuit");
  const CircuitView* k = p.session.last_circuit();
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->query, 17);
  ASSERT_EQ(k->winner, 2);
  const LmRun& r = *p.session.run();
  const lm::Config& c = r.model->config;
  // The two largest head parts, and the key each head weighs most at position 2.
  std::vector<lm::ScorePart> heads;
  for (const lm::ScorePart& part : k->winner_parts)
    if (part.head >= 0) heads.push_back(part);
  std::sort(heads.begin(), heads.end(), [](auto& a, auto& b) { return a.value > b.value; });
  ASSERT_GE(heads.size(), 2u);
  for (int n = 0; n < 2; ++n) {
    const float* row = r.acts.att_at(c, heads[n].layer, 0, heads[n].head) + 2 * r.acts.T;
    int read = 0;
    for (int j = 1; j <= 2; ++j)
      if (row[j] > row[read]) read = j;
    const std::string said =
        "L" + std::to_string(heads[n].layer) + "H" + std::to_string(heads[n].head) +
        (heads[n].layer * c.n_head + heads[n].head == k->prev ? ", the previous-token head," : "") +
        " read “" + r.tokens[static_cast<size_t>(read)] + "” (position " + std::to_string(read) +
        ")";
    EXPECT_NE(p.circuit_why_text.find(said), std::string::npos) << said << "\n"
                                                                << p.circuit_why_text;
  }
  double margin = 0;
  for (size_t i = 0; i < k->winner_parts.size(); ++i)
    margin += k->winner_parts[i].value - k->runner_parts[i].value;
  char by[64];
  std::snprintf(by, sizeof by, "beats the runner-up by %.2f", margin);
  EXPECT_NE(p.circuit_why_text.find(by), std::string::npos) << p.circuit_why_text;
}

}  // namespace
}  // namespace attn
