// The teaching models of the app without a window: the panel layout for every size and mode,
// predict-then-reveal on every stage of every example (and a seq2seq decoder step), the stage
// animations and edit highlights, and when the window may sleep. Expected values come from the
// trace the engine computed independently of these models, or are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "attention/format.h"
#include "gui/model/layout.h"
#include "gui/model/predict.h"
#include "gui/model/stage_motion.h"
#include "gui/ui.h"
#include "io/examples.h"
#include "reference.h"
#include "render/colormap.h"
#include "render/heatmap_view.h"

namespace attn {
namespace {

// ---- layout ----

bool inside(const LayoutRect& r, const LayoutInput& in) {
  return r.x >= in.x - 0.5f && r.y >= in.y - 0.5f && r.right() <= in.x + in.width + 0.5f &&
         r.bottom() <= in.y + in.height + 0.5f;
}
bool overlap(const LayoutRect& a, const LayoutRect& b) {
  return a.shown && b.shown && a.x < b.right() - 0.5f && b.x < a.right() - 0.5f &&
         a.y < b.bottom() - 0.5f && b.y < a.bottom() - 0.5f;
}

TEST(Layout, PanelsTileTheWindowAtEverySizeAndMode) {
  for (auto [w, h] : {std::pair{1024, 768}, {1280, 720}, {1600, 1000}, {1920, 1080}, {3840, 2160}})
    for (float font : {20.0f, 28.0f, 40.0f})
      for (int mode = 0; mode < 3; ++mode) {
        LayoutInput in;
        in.width = static_cast<float>(w);
        in.height = static_cast<float>(h);
        in.font = font;
        in.presentation = mode > 0;
        in.panels_shown = mode == 2;
        const PanelLayout L = compute_layout(in);
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " font " + std::to_string(font) +
                     " mode " + std::to_string(mode));
        const LayoutRect* all[] = {&L.pipeline,  &L.scenario, &L.heatmap,
                                   &L.narration, &L.heads,    &L.status};
        double area = 0;
        for (const LayoutRect* a : all) {
          if (!a->shown) continue;
          EXPECT_TRUE(inside(*a, in));
          area += static_cast<double>(a->w) * a->h;
          for (const LayoutRect* b : all)
            if (a != b) {
              EXPECT_FALSE(overlap(*a, *b));
            }
        }
        // Nothing left empty: the panels and the menu bar cover the window (to rounding).
        EXPECT_NEAR(area + in.width * in.menu_h, in.width * in.height,
                    in.width * 2 + in.height * 2);
        EXPECT_TRUE(L.heatmap.shown);
        EXPECT_TRUE(L.narration.shown);
        if (mode == 1) {  // presentation: the heatmap takes most of the room, no side panels
          EXPECT_FALSE(L.scenario.shown);
          EXPECT_FALSE(L.heads.shown);
          EXPECT_GE(L.heatmap.w, in.width * 0.57f);
        }
      }
}

TEST(Layout, AModelStageTakesTheWholeBodyUnlessALessonIsBesideIt) {
  for (auto [w, h] : {std::pair{1280, 720}, {1600, 1000}, {1920, 1080}})
    for (int mode = 0; mode < 3; ++mode)
      for (bool lesson : {false, true}) {
        LayoutInput in;
        in.width = static_cast<float>(w);
        in.height = static_cast<float>(h);
        in.font = 24;
        in.presentation = mode > 0;
        in.panels_shown = mode == 2;
        in.model_stage = true;
        in.lesson = lesson;
        in.pipeline_h = 0;  // a model's stage has no stage strip
        const PanelLayout L = compute_layout(in);
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " mode " + std::to_string(mode) +
                     (lesson ? " lesson" : ""));
        EXPECT_TRUE(inside(L.heatmap, in));
        EXPECT_EQ(L.narration.shown, lesson);
        EXPECT_FALSE(L.heads.shown && !lesson);
        if (lesson) {
          EXPECT_FALSE(overlap(L.heatmap, L.narration));
          EXPECT_LT(L.heatmap.w, in.width * 0.8f);
        } else {
          EXPECT_FLOAT_EQ(L.heatmap.w, in.width);
          EXPECT_FLOAT_EQ(L.heatmap.y, in.menu_h);
          EXPECT_FLOAT_EQ(L.heatmap.bottom(), in.height - in.status_h);
        }
      }
}

TEST(Layout, PresentationTextGrowsWithTheScreen) {
  EXPECT_EQ(presentation_font(20, 1280, 720), 28);   // 1.4 × the base size
  EXPECT_EQ(presentation_font(28, 1920, 1080), 39);  // 1.4 × 28 = 39.2
  EXPECT_EQ(presentation_font(20, 3840, 2160), 54);  // 2160 / 40: readable on a 4K projector
  EXPECT_EQ(presentation_font(48, 3840, 2160), 64);  // never beyond 64 px
  // A small screen keeps room for the heatmap: 720 / 26 lines, 1024 / 36 letters; but never
  // smaller than the size the user chose.
  EXPECT_EQ(presentation_font(28, 1280, 720), 28);
  EXPECT_EQ(presentation_font(28, 1600, 1000), 38);
  EXPECT_EQ(presentation_font(28, 1024, 768), 28);
  EXPECT_EQ(presentation_font(32, 1024, 768), 32);
}

// ---- the screen and the slide agree ----

// Every stage and head of every example: the app's colour range is the exporter's, so the same
// 0.67 has the same colour on screen and on a slide.
TEST(Colours, TheAppAndTheExporterSpanTheSameValues) {
  UiSettings settings;
  for (const ExampleInfo& e : list_examples()) {
    AppState st;
    ASSERT_TRUE(st.load_example(e.name));
    const AttentionTrace& t = st.trace();
    for (const TraceStep& step : t.steps)
      for (int h = 0; h < t.num_heads; ++h) {
        // The exporter's --head is a query head; K and V show its key/value head.
        SCOPED_TRACE(e.name + " " + stage_name(step.id) + " head " + std::to_string(h));
        HeatmapOptions o;
        o.step = step.id;
        o.head = h;
        o.maps = colormaps(settings);
        const LabelledMatrix v = stage_matrix(t, o);
        const ColorScale app = color_scale_for(settings, step.id, v.values);
        EXPECT_EQ(app.map, v.scale.map);
        EXPECT_NEAR(app.lo, v.scale.lo, 1e-6 * std::max(1.0, std::fabs(v.scale.lo)));
        EXPECT_NEAR(app.hi, v.scale.hi, 1e-6 * std::max(1.0, std::fabs(v.scale.hi)));
      }
  }
  // The sliding window's largest weight is 0.54: both still span [0, 1] (8 keys).
  AppState st;
  ASSERT_TRUE(st.load_example("sliding-window"));
  const Matrix& w = st.trace().head(StageId::kWeights, 0);
  EXPECT_LT(w.maxCoeff(), 0.6f);
  const ColorScale app = color_scale_for(settings, StageId::kWeights, w);
  EXPECT_EQ(app.lo, 0.0);
  EXPECT_EQ(app.hi, 1.0);
  HeatmapOptions o;
  o.step = StageId::kWeights;
  const LabelledMatrix v = stage_matrix(st.trace(), o);
  EXPECT_EQ(v.scale.lo, 0.0);
  EXPECT_EQ(v.scale.hi, 1.0);
}

// ---- predict, then reveal ----

TEST(Predict, ValuesAreJudgedAgainstTheAnswerAtTheShownPrecision) {
  Verdict v = judge_value(0.46, 0.4611, 2, 1.0);
  EXPECT_EQ(v.grade, Verdict::Grade::kExact);
  EXPECT_EQ(judge_value(0.4649, 0.4611, 2, 1.0).grade, Verdict::Grade::kExact);  // shows as 0.46
  v = judge_value(0.45, 0.4611, 2, 1.0);  // 0.0111 off: within a tenth of the stage's size
  EXPECT_EQ(v.grade, Verdict::Grade::kClose);
  EXPECT_NE(v.detail.find("0.01 below"), std::string::npos) << v.detail;
  v = judge_value(0.9, 0.4611, 2, 1.0);
  EXPECT_EQ(v.grade, Verdict::Grade::kOff);
  EXPECT_NE(v.detail.find("0.44 above"), std::string::npos) << v.detail;
  // "Close" scales with the stage: 0.3 off is close on scores of size 5, not on weights.
  EXPECT_EQ(judge_value(4.3, 4.0, 2, 5.0).grade, Verdict::Grade::kClose);
  EXPECT_EQ(judge_value(0.8, 0.5, 2, 1.0).grade, Verdict::Grade::kOff);
  // −∞: right only as −∞.
  EXPECT_EQ(judge_value(-INFINITY, -INFINITY, 2, 1).grade, Verdict::Grade::kExact);
  EXPECT_EQ(judge_value(0.2, -INFINITY, 2, 1).grade, Verdict::Grade::kOff);
  EXPECT_EQ(judge_value(-INFINITY, 0.2, 2, 1).grade, Verdict::Grade::kOff);
}

TEST(Predict, PicksAreJudgedByRankAndHiddenKeysCannotWin) {
  const std::vector<double> w = {0.2, 0.5, 0.3, 0.0};
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  const std::vector<bool> hidden = {false, false, false, true};
  EXPECT_EQ(judge_pick(1, w, names, hidden, "weight").grade, Verdict::Grade::kExact);
  Verdict second = judge_pick(2, w, names, hidden, "weight");
  EXPECT_EQ(second.grade, Verdict::Grade::kClose);
  EXPECT_NE(second.detail.find("2nd largest of 3"), std::string::npos) << second.detail;
  Verdict masked = judge_pick(3, w, names, hidden, "weight");
  EXPECT_EQ(masked.grade, Verdict::Grade::kOff);
  EXPECT_NE(masked.detail.find("hidden by the mask"), std::string::npos) << masked.detail;
  // A tie accepts either key.
  EXPECT_EQ(judge_pick(0, {0.5, 0.5}, {"x", "y"}, {}, "weight").grade, Verdict::Grade::kExact);
  EXPECT_EQ(judge_pick(1, {0.5, 0.5}, {"x", "y"}, {}, "weight").grade, Verdict::Grade::kExact);
}

TEST(Predict, GuessesAreNumbersOrMinusInfinity) {
  std::string e;
  EXPECT_EQ(*parse_guess(" 0.25 ", e), 0.25);
  EXPECT_EQ(*parse_guess("−0.5", e), -0.5);
  EXPECT_TRUE(std::isinf(*parse_guess("-inf", e)));
  EXPECT_TRUE(std::isinf(*parse_guess("−∞", e)));
  EXPECT_FALSE(parse_guess("abc", e));
  EXPECT_FALSE(parse_guess("nan", e));
}

// Every numeric stage of every example: asking hides the cell (row, stage), the true answer read
// from the trace is judged exact, a wrong one is not, and the answer is the trace's number.
TEST(Predict, WorksOnEveryStageOfEveryExample) {
  for (const ExampleInfo& e : list_examples()) {
    AppState st;
    ASSERT_TRUE(st.load_example(e.name));
    const AttentionTrace& t = st.trace();
    for (const StageInfo& stage : st.stages()) {
      SCOPED_TRACE(e.name + " " + stage.name);
      Prediction p;
      std::string why;
      if (stage.id == StageId::kInputs) {
        EXPECT_FALSE(
            p.start(t, stage.id, 0, -1, -1, PredictKind::kValue, PredictScope::kCell, why));
        EXPECT_FALSE(why.empty());
        continue;
      }
      const int idx = t.step(stage.id).num_heads() - 1;
      const Matrix m = t.head(stage.id, idx);  // a copy: derived heads live in one cache slot
      for (PredictScope scope : {PredictScope::kCell, PredictScope::kRow, PredictScope::kStage}) {
        ASSERT_TRUE(p.start(t, stage.id, idx, 0, static_cast<int>(m.cols()) - 1,
                            PredictKind::kValue, scope, why))
            << why;
        const PredictQuestion& q = p.question();
        EXPECT_EQ(q.row, 0);
        EXPECT_EQ(q.col, m.cols() - 1);
        EXPECT_TRUE(p.conceals(stage.id, idx, 0, q.col));
        EXPECT_EQ(p.conceals(stage.id, idx, 0, 0), scope != PredictScope::kCell || q.col == 0);
        if (m.rows() > 1) {
          EXPECT_EQ(p.conceals(stage.id, idx, 1, q.col), scope == PredictScope::kStage);
        }
        // Another stage is not hidden.
        const StageId other = stage.id == StageId::kOutput ? StageId::kScores : StageId::kOutput;
        EXPECT_FALSE(p.conceals(other, idx, 0, q.col));
        EXPECT_FALSE(p.prompt(t).empty());
        const double answer = m(0, q.col);
        EXPECT_EQ(p.answer(t), answer);
        ASSERT_TRUE(p.guess_text(std::isinf(answer) ? "-inf" : format_fixed(answer, 4), why));
        EXPECT_EQ(p.reveal(t, 2).grade, Verdict::Grade::kExact) << p.verdict().detail;
        EXPECT_FALSE(p.conceals(stage.id, idx, 0, q.col));  // revealed
        ASSERT_TRUE(p.start(t, stage.id, idx, 0, q.col, PredictKind::kValue, scope, why));
        ASSERT_TRUE(p.guess_text(std::isinf(answer) ? "0" : format_fixed(answer + 10, 2), why));
        EXPECT_NE(p.reveal(t, 2).grade, Verdict::Grade::kExact);
      }
      if (!stage_supports(stage.id, PredictKind::kPick)) continue;
      // Which key gets the most: the trace's largest visible value in the row.
      const int h = 0, row = t.n_q - 1;
      ASSERT_TRUE(p.start(t, stage.id, h, row, -1, PredictKind::kPick, PredictScope::kCell, why));
      EXPECT_EQ(p.question().scope, PredictScope::kRow);  // a pick hides at least the row
      const Matrix& mh = t.head(stage.id, h);
      int best = -1;
      for (int j = 0; j < mh.cols(); ++j) {
        const bool hid = (stage.id == StageId::kMasked || stage.id == StageId::kWeights) &&
                         t.has_reasons(h) && t.hidden_of(h)(row, j);
        if (!hid && std::isfinite(mh(row, j)) && (best < 0 || mh(row, j) > mh(row, best))) best = j;
      }
      ASSERT_GE(best, 0);
      p.guess_pick(best);
      EXPECT_EQ(p.reveal(t, 2).grade, Verdict::Grade::kExact) << p.verdict().detail;
    }
  }
}

TEST(Predict, TheFearIsTheWeightOfIsOnFearIsWorkedOutByHand) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const AttentionTrace& t = st.trace();
  // Row "is" sees "Fear" and "is" (causal): q_is·k_Fear = 0.5·0.3 + 0.2·0.5 + 0.3·0.2 = 0.31 and
  // q_is·k_is = 0.5·0.1 + 0.2·0.4 + 0.3·0.6 = 0.31; equal scores, so each weight is 1/2.
  Prediction p;
  std::string why;
  ASSERT_TRUE(
      p.start(t, StageId::kWeights, 0, 1, 0, PredictKind::kValue, PredictScope::kCell, why));
  EXPECT_NE(p.prompt(t).find("\"is\""), std::string::npos) << p.prompt(t);
  EXPECT_NE(p.prompt(t).find("\"Fear\""), std::string::npos) << p.prompt(t);
  ASSERT_TRUE(p.guess_text("0.5", why));
  EXPECT_EQ(p.reveal(t, 2).grade, Verdict::Grade::kExact) << p.verdict().detail;
  ASSERT_TRUE(
      p.start(t, StageId::kWeights, 0, 1, 0, PredictKind::kValue, PredictScope::kCell, why));
  ASSERT_TRUE(p.guess_text("0.33", why));
  const Verdict v = p.reveal(t, 2);
  EXPECT_EQ(v.grade, Verdict::Grade::kOff);
  EXPECT_NE(v.detail.find("0.17 below"), std::string::npos) << v.detail;
}

// ---- stage changes and edits ----

TEST(Motion, TheWeightedSumAddsUpKeyByKey) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const AttentionTrace& t = st.trace();
  const Matrix& w = t.head(StageId::kWeights, 0);
  const Matrix& v = t.head(StageId::kV, 0);
  AnimatedFrame f;
  ASSERT_TRUE(animate_stage(t, StageId::kWeights, StageId::kOutput, 0, 1.0f, f));
  EXPECT_TRUE(f.value.isApprox(t.head(StageId::kOutput, 0)));
  // Halfway through 3 keys: the first key whole and half of the second, by hand.
  ASSERT_TRUE(animate_stage(t, StageId::kWeights, StageId::kOutput, 0, 0.5f, f));
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c)
      EXPECT_NEAR(f.value(i, c), w(i, 0) * v(0, c) + 0.5 * w(i, 1) * v(1, c), 1e-6);
  EXPECT_NE(f.caption.find("\"is\" (2 of 3)"), std::string::npos) << f.caption;
  ASSERT_TRUE(animate_stage(t, StageId::kWeights, StageId::kOutput, 0, 0.0f, f));
  EXPECT_EQ(f.value.norm(), 0.0f);
}

TEST(Motion, MaskedCellsTurnToMinusInfinityAndScoresSlideIntoWeights) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const AttentionTrace& t = st.trace();
  AnimatedFrame f;
  ASSERT_TRUE(animate_stage(t, StageId::kScaled, StageId::kMasked, 0, 0.25f, f));
  // Causal: cell (0, 1) is hidden, cell (1, 0) visible.
  EXPECT_FLOAT_EQ(f.hatch[0 * 3 + 1], 0.25f);
  EXPECT_FLOAT_EQ(f.hatch[1 * 3 + 0], 0.0f);
  ASSERT_TRUE(animate_stage(t, StageId::kScaled, StageId::kMasked, 0, 0.75f, f));
  EXPECT_TRUE(std::isinf(f.value(0, 1)));
  ASSERT_TRUE(animate_stage(t, StageId::kMasked, StageId::kWeights, 0, 1.0f, f));
  EXPECT_TRUE(f.from_on_own_scale);
  for (float r : f.row_progress) EXPECT_EQ(r, 1.0f);
  EXPECT_FLOAT_EQ(f.value(2, 2), t.head(StageId::kWeights, 0)(2, 2));
  ASSERT_TRUE(animate_stage(t, StageId::kMasked, StageId::kWeights, 0, 0.3f, f));
  EXPECT_GT(f.row_progress[0], f.row_progress[2]);  // the rows go one after another
  ASSERT_TRUE(animate_stage(t, StageId::kScores, StageId::kScaled, 0, 0.5f, f));
  const float mid = 0.5f * (t.head(StageId::kScores, 0)(2, 1) + t.head(StageId::kScaled, 0)(2, 1));
  EXPECT_FLOAT_EQ(f.value(2, 1), mid);
  EXPECT_FALSE(
      animate_stage(t, StageId::kWeights, StageId::kScores, 0, 0.5f, f));  // no animation backwards
  EXPECT_FALSE(stage_change_animates(StageId::kWeights, StageId::kMasked));
  EXPECT_TRUE(stage_change_animates(StageId::kMasked, StageId::kWeights));
}

TEST(Motion, AnEditLightsUpExactlyTheCellsItChanged) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ChangeTracker c;
  c.update(st.trace(), st.trace_serial(), false, 0.0);
  EXPECT_FALSE(c.active(0.0));
  // Q row 1 ("is") changes: its scores row changes, no other row does.
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 1, 0, "0.9"));
  c.update(st.trace(), st.trace_serial(), true, 10.0);
  EXPECT_TRUE(c.active(10.1));
  EXPECT_EQ(c.changed_cells(StageId::kScores, 0), 3);
  for (int j = 0; j < 3; ++j) {
    EXPECT_GT(c.strength(StageId::kScores, 0, 1, j, 10.1), 0.9f);
    EXPECT_EQ(c.strength(StageId::kScores, 0, 0, j, 10.1), 0.0f);
  }
  EXPECT_EQ(c.changed_cells(StageId::kQ, 0), 1);
  EXPECT_EQ(c.changed_cells(StageId::kK, 0), 0);
  // Causal: "is" sees two keys, so two weights move (the hidden third stays 0).
  EXPECT_EQ(c.changed_cells(StageId::kWeights, 0), 2);
  EXPECT_EQ(c.strength(StageId::kScores, 0, 1, 0, 10.01 + ChangeTracker::kSeconds), 0.0f);  // faded
  // Opening another example is not an edit: nothing lights up.
  ASSERT_TRUE(st.load_example("fear-is"));
  c.update(st.trace(), st.trace_serial(), false, 20.0);
  EXPECT_FALSE(c.active(20.0));
}

TEST(Idle, TheWindowSleepsUnlessSomethingMoves) {
  AppState st;
  Ui ui(st);
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ui.now = 5.0;
  EXPECT_FALSE(ui.wants_frames());
  st.playing = true;
  EXPECT_TRUE(ui.wants_frames());
  st.playing = false;
  ui.motion.transition = {StageId::kMasked, StageId::kWeights, 4.5, 1.0};
  EXPECT_TRUE(ui.wants_frames());
  ui.now = 6.0;
  EXPECT_FALSE(ui.wants_frames());  // the animation is over
  ui.frames_wanted = 2;
  EXPECT_TRUE(ui.wants_frames());
  ui.frames_wanted = 0;
  ui.seq2seq.busy = true;
  EXPECT_TRUE(ui.wants_frames());
  // Training only wakes the window a few times a second (app_window.cpp): no frame-by-frame.
  ui.seq2seq.busy = false;
  ui.seq2seq.training = true;
  EXPECT_FALSE(ui.wants_frames());
  EXPECT_TRUE(ui.training());
}

}  // namespace
}  // namespace attn
