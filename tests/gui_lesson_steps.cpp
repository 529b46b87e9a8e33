// Every step of every built-in lesson, as a class would see it: presentation mode at 1280×720
// and 1920×1080, with the default font and 24 and 32 px. Every text the frame draws is recorded
// (the linker routes ImDrawList::AddText through a recorder, see tests/CMakeLists.txt), and a
// question step fails when any of it writes the hidden answer, and when the question's Check
// button is not in view.
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "gui/model/lesson_player.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "gui_support/layout_check.h"
#include "lessons/lesson.h"

namespace {
std::vector<std::string>* g_texts = nullptr;  // the frame's drawn text, while recording
// and each run's size and place, for the slide rule's 16 px
struct SizedText {
  std::string text;
  float size;
  ImVec2 pos;
};
std::vector<SizedText>* g_sized = nullptr;
}  // namespace

extern "C" void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap, const ImVec4* clip);
extern "C" void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap, const ImVec4* clip) {
  if (g_texts && begin) g_texts->emplace_back(begin, end ? end : begin + std::strlen(begin));
  if (g_sized && begin)
    g_sized->push_back({std::string(begin, end ? end : begin + std::strlen(begin)),
                        size > 0 ? size : self->_Data->FontSize, pos});
  __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(self, font, size, pos, col,
                                                                      begin, end, wrap, clip);
}

namespace attn {
namespace {

struct Screen {
  int w, h;
};

// The projector sizes a lesson step must stand whole at as one slide (design.md): a 720p
// projector with the back row's 32 px text, a 1280×800 one at 28 and a 1080p one at 24.
struct SlideSize {
  Screen screen;
  float font;
};
constexpr SlideSize kSlideSizes[] = {{{1280, 720}, 32}, {{1280, 800}, 28}, {{1920, 1080}, 24}};

// `number` written in `text` as a number of its own (not inside a longer one).
bool writes(const std::string& text, const std::string& number) {
  for (size_t at = text.find(number); at != std::string::npos; at = text.find(number, at + 1)) {
    const size_t after = at + number.size();
    const bool digit_before =
        at > 0 && (std::isdigit(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '.');
    const bool digit_after =
        after < text.size() && std::isdigit(static_cast<unsigned char>(text[after]));
    if (!digit_before && !digit_after) return true;
  }
  return false;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class LessonSteps : public test::HeadlessApp {
 protected:
  void TearDown() override {
    g_texts = nullptr;
    g_sized = nullptr;
    test::record_items(nullptr);
    HeadlessApp::TearDown();
  }
  // Frames at a screen size in presentation mode; the last one's text is recorded. A step's
  // language model first loads and runs (on its worker): the screen checked is the settled one
  // the class sees, not the frames in between, when the window still shows the step before.
  void frames_at(Screen s, int n = 5) {
    resize_to(s.w, s.h);
    settle();
    for (int i = 0; i < n; ++i) {
      const bool last = i + 1 == n;
      // The views the last frame draws, not those an earlier stage or tab left behind.
      if (last)
        for (auto& view : ui.views) view.second.drawn = false;
      texts.clear();
      placed.clear();
      items.clear();
      g_texts = last ? &texts : nullptr;
      sized.clear();
      g_sized = last ? &sized : nullptr;
      ui.probes.text_log =
          last ? &placed : nullptr;  // the heatmap's own glyphs (cells, colour bar)
      test::record_items(last ? &items : nullptr);
      state.poll();
      state.wait_for_trace();
      ImGui::GetIO().DeltaTime = 1.0f / 60;
      ImGui::NewFrame();
      draw_app(ui);
      ImGui::Render();
      g_texts = nullptr;
      g_sized = nullptr;
      ui.probes.text_log = nullptr;
      test::record_items(nullptr);
    }
    for (const PlacedText& p : placed) texts.push_back(p.text);
  }
  std::vector<std::string> texts;
  std::vector<SizedText> sized;  // the last frame's text runs with their sizes
  std::vector<PlacedText> placed;
  std::vector<test::ItemBox> items;
};

// The numbers a question hides, written as the app writes numbers (the cells' decimals, and 3
// and 4), read straight from the trace by the question's answer reference.
std::vector<std::string> hidden_numbers(const LessonQuestion& q, const AttentionTrace& t,
                                        int decimals, const Matrix** shown_matrix) {
  std::vector<std::string> out;
  const AnswerRef& a = q.answer;
  if (q.kind == QuestionKind::kStatement || !a.stage) return out;
  const Matrix& m = t.head(*a.stage, a.head);
  *shown_matrix = &m;
  // A weight's row sums to 1, so a weight question hides its row, as does a key question.
  const bool row = q.kind == QuestionKind::kKey || *a.stage == StageId::kWeights;
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    if (!row && j != a.col) continue;
    const double v = m(a.row, j);
    if (!std::isfinite(v) || (row && v == 0.0)) continue;  // a masked key: 0 tells nothing
    for (int d : {decimals, 3, 4}) out.push_back(fixed(v, d));
  }
  return out;
}

// No text in `texts` writes a number question `q` hides on the state's trace, unless a cell left
// in view shows the same number (then it does not tell which cell holds it).
void expect_no_text_tells(const LessonQuestion& q, const AppState& state, int decimals,
                          const std::vector<std::string>& texts) {
  const AttentionTrace& t = state.trace();
  const Matrix* m = nullptr;
  for (const std::string& number : hidden_numbers(q, t, decimals, &m)) {
    bool elsewhere = false;
    const AnswerRef& a = q.answer;
    const bool row = q.kind == QuestionKind::kKey || *a.stage == StageId::kWeights;
    for (Eigen::Index i = 0; i < m->rows() && !elsewhere; ++i)
      for (Eigen::Index j = 0; j < m->cols() && !elsewhere; ++j) {
        const bool concealed = i == a.row && (row || j == a.col);
        for (int d : {decimals, 3, 4})
          elsewhere = elsewhere || (!concealed && fixed((*m)(i, j), d) == number);
      }
    // The stage or head on screen, when it is another: its cells are not the answer's. An
    // inputs view shows the head's Q, K and V as well.
    const StageId on_screen = state.current_stage().id;
    std::vector<StageId> shown = {on_screen};
    if (on_screen == StageId::kInputs || on_screen == StageId::kX)
      shown.insert(shown.end(), {StageId::kQ, StageId::kK, StageId::kV});
    for (StageId id : shown) {
      if ((id == a.stage && state.head() == a.head) || !t.find(id)) continue;
      const Matrix& o = t.head(id, std::min(state.head(), t.step(id).num_heads() - 1));
      for (Eigen::Index i = 0; i < o.rows() && !elsewhere; ++i)
        for (Eigen::Index j = 0; j < o.cols() && !elsewhere; ++j)
          for (int d : {decimals, 3, 4}) elsewhere = elsewhere || fixed(o(i, j), d) == number;
    }
    if (elsewhere) continue;
    for (const std::string& text : texts)
      EXPECT_FALSE(writes(text, number)) << "“" << text << "” tells " << number;
  }
}

// Whether `t` (an earlier step's trace) holds the row later question `q` asks about with the
// numbers of the question's own trace `theirs`: the earlier figure would answer it.
bool holds_later_answer(const LessonQuestion& q, const AttentionTrace& t,
                        const AttentionTrace& theirs) {
  const AnswerRef& a = q.answer;
  if (q.kind == QuestionKind::kStatement || !a.stage || !t.find(*a.stage) ||
      !theirs.find(*a.stage) || a.head >= t.step(*a.stage).num_heads() ||
      a.head >= theirs.step(*a.stage).num_heads())
    return false;
  const Matrix& x = t.head(*a.stage, a.head);
  const Matrix& y = theirs.head(*a.stage, a.head);
  return x.rows() == y.rows() && x.cols() == y.cols() && a.row < x.rows() &&
         (x.row(a.row) - y.row(a.row)).cwiseAbs().maxCoeff() < 1e-9;
}

// What keeps the frame just drawn from being one slide a class can read, or "" (design.md's
// slide rule, from the app's own layout records).
std::string slide_faults(Ui& ui, const std::vector<SizedText>& sized) {
  std::string out;
  auto fault = [&out](const std::string& f) { out += (out.empty() ? "" : "; ") + f; };
  // Nothing drawn on the stage (the strip and the figure) is under 16 px.
  const ImVec4 r = ui.layout.stage_rect;
  int small = 0;
  std::string example;
  for (const SizedText& t : sized)
    if (t.pos.x >= r.x && t.pos.x < r.x + r.z && t.pos.y >= r.y && t.pos.y < r.y + r.w &&
        t.size < 16.0f - 0.01f && t.text.find_first_not_of(" ") != std::string::npos) {
      if (small++ == 0) example = "“" + t.text.substr(0, 20) + "” at " + std::to_string(t.size);
    }
  if (small > 0) fault(std::to_string(small) + " texts on the stage under 16 px (" + example + ")");
  if (!ui.lesson_view.slide.on) fault("not laid out as a slide");
  if (!ui.lesson_view.slide.fits)
    fault("the step needs " + std::to_string(static_cast<int>(ui.lesson_view.slide.needed)) +
          " px, the column has " + std::to_string(static_cast<int>(ui.lesson_view.slide.room)));
  if (ui.lesson_view.slide.scroll_max > 0.5f)
    fault("the lesson column scrolls (its body measured " +
          std::to_string(ui.lesson_view.slide.body) + " px, drawn " +
          std::to_string(ui.lesson_view.slide.drawn) + ")");
  if (ui.lesson_view.slide.scroll_max_x > 0.5f) fault("the lesson column scrolls sideways");
  if (!ui.lesson_view.slide.choices_whole) fault("a choice is cut");
  const auto it = ui.views.find("main");
  if (!ui.layout.model_stage && it != ui.views.end() && it->second.drawn) {
    const HeatmapViewport& v = it->second;
    if (v.numbers_shown && v.number_px < 16.0f - 0.01f)
      fault("cell numbers at " + std::to_string(v.number_px) + " px");
    if (v.labels_dropped > 0) fault(std::to_string(v.labels_dropped) + " labels left out");
    if (v.labels_abbreviated > 0) fault(std::to_string(v.labels_abbreviated) + " labels shortened");
  }
  // Q, K and V of a teaching-sized one-head example show their numbers: such a step is worked by
  // hand from the screen (a multi-head example's per-head Q, K, V are about their shapes).
  const bool one_head = ui.state.has_trace() && ui.state.trace().num_heads == 1;
  for (const char* name : {"qkv-Q", "qkv-K", "qkv-V"}) {
    const auto q = ui.views.find(name);
    if (one_head && !ui.layout.model_stage && q != ui.views.end() && q->second.drawn &&
        q->second.rows <= 8 && q->second.cols <= 8) {
      if (!q->second.numbers_shown)
        fault(std::string(name + 4) + " without its numbers");
      else if (q->second.number_px < 16.0f - 0.01f)
        fault(std::string(name + 4) + "'s numbers at " + std::to_string(q->second.number_px) +
              " px");
    }
  }
  // No view scrolls, sideways or down: the figure, its words and its controls are all in view.
  for (ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
    if (!w->WasActive || w->Hidden) continue;
    if (w->ScrollbarX)
      fault(std::string("a horizontal scrollbar in ") + w->Name + " (content " +
            std::to_string(static_cast<int>(w->ContentSize.x)) + " px, window " +
            std::to_string(static_cast<int>(w->Size.x)) + ")");
    if (w->ScrollbarY)
      fault(std::string("a vertical scrollbar in ") + w->Name + " (content " +
            std::to_string(static_cast<int>(w->ContentSize.y)) + " px, window " +
            std::to_string(static_cast<int>(w->Size.y)) + ")");
  }
  // The language model's head view: every token labelled, at 16 px or more.
  if (ui.layout.model_stage == WindowId::kLm && ui.lm.state && ui.lm.state->shown_tab == "heads") {
    const LmPanel::HeadViewDrawn& hv = ui.lm.state->head_view;
    if (hv.label_every > 1)
      fault("the head view labels every " + std::to_string(hv.label_every) + " tokens");
    if (hv.label_px < 16.0f - 0.01f)
      fault("head view labels at " + std::to_string(hv.label_px) + " px");
  }
  return out;
}

TEST_F(LessonSteps, EveryQuestionKeepsItsAnswerAndItsButtonInView) {
  std::string error;
  const std::vector<LessonInfo> course = list_course(error);
  ASSERT_GE(course.size(), 13u) << error;
  ui.presentation = true;
  ui.settings.animate = false;  // the settled screen: a stage change's frames are in between
  int checked = 0, questions = 0, scrolling = 0, later_checked = 0;
  std::vector<std::string> failures;  // one line per step view that is not one readable slide
  for (const LessonInfo& info : course) {
    ASSERT_TRUE(open_lesson(ui, info.path, error)) << error;
    const std::vector<LessonStep> steps = ui.lesson->lesson().steps;
    std::vector<AttentionTrace> later_traces;
    for (const LessonStep& st : steps) later_traces.push_back(lesson_step_trace(st));
    for (int k = 0; k < ui.lesson->step_count(); ++k) {
      ASSERT_TRUE(ui.lesson->go_to(k));
      ASSERT_TRUE(apply_lesson_step(ui));
      const LessonStep& step = ui.lesson->step();
      for (const SlideSize& size : kSlideSizes) {
        const Screen s = size.screen;
        const float font = size.font;
        const std::string where = info.path.substr(info.path.find_last_of('/') + 1) + " step " +
                                  std::to_string(k + 1) + " at " + std::to_string(s.w) + "x" +
                                  std::to_string(s.h) + "/" +
                                  std::to_string(static_cast<int>(font));
        SCOPED_TRACE(where);
        ui.settings.font_px = font;
        frames_at(s);
        ++checked;
        // No widget clipped or overlapping another, no text cut.
        test::check_layout(items, placed);
        ASSERT_GT(items.size(), 10u) << "no widgets recorded";
        // One slide: the step's words, question, every choice and the buttons stand whole in
        // the lesson's column, nothing scrolls, and the figure's text is 16 px or more.
        const std::string slide = slide_faults(ui, sized);
        if (!slide.empty()) failures.push_back(where + ": " + slide);
        // A small matrix on the stepper has room for its numbers, at every size and font.
        const HeatmapViewport& v = ui.views["main"];
        if (state.has_trace() && step.lm_model.empty() && step.seq2seq_tab.empty() &&
            state.current_stage().id != StageId::kInputs && v.drawn && v.rows <= 8 && v.cols <= 8) {
          EXPECT_TRUE(v.numbers_shown) << v.rows << "×" << v.cols << " cells of " << v.cell_w << "×"
                                       << v.cell_h << " px without their numbers";
        }
        // Nor does it write a later question's answer that this figure holds: that stays
        // hidden until the later question is answered.
        if (state.has_trace() && step.lm_model.empty() && step.seq2seq_model.empty())
          for (size_t j = static_cast<size_t>(k) + 1; j < steps.size(); ++j) {
            const LessonStep& later = steps[j];
            if (!later.question || !later.lm_model.empty() || !later.seq2seq_model.empty() ||
                !holds_later_answer(*later.question, state.trace(), later_traces[j]))
              continue;
            ++later_checked;
            expect_no_text_tells(*later.question, state, ui.settings.decimals, texts);
          }
        if (!step.question || !state.has_trace() || !step.lm_model.empty()) continue;
        ++questions;
        const LessonQuestion& q = *step.question;
        // The Check button is inside the question's area, and that area on the screen.
        const ImVec4 box = ui.lesson_view.answer_box, area = ui.lesson_view.question_rect;
        EXPECT_GE(box.x, area.x);
        EXPECT_GE(box.y, area.y);
        EXPECT_LE(box.z, area.z + 0.5f);
        EXPECT_LE(box.w, area.w + 0.5f) << "the Check button is cut off";
        EXPECT_LE(area.w, static_cast<float>(s.h));
        EXPECT_TRUE(ui.lesson_view.prompt_shown) << "the question's prompt is out of view";
        // The choices too, unless the question alone is taller than the column's room (long
        // sentences at 1280×720 in 32 px type): then it scrolls, prompt first.
        if (ui.lesson_view.slide.on) {
          // The slide's faults above say whether the choices stand whole.
        } else if (ui.lesson_view.question_h <= ui.lesson_view.question_room) {
          EXPECT_TRUE(ui.lesson_view.choices_shown) << "the question's choices are out of view";
        } else {
          ++scrolling;
          std::printf("the question scrolls: %s step %d at %dx%d font %d\n", info.path.c_str(),
                      k + 1, s.w, s.h, static_cast<int>(font));
        }
        EXPECT_LE(ui.lesson_view.nav_bottom, area.w + 0.5f) << "Previous / Next are cut off";
        // No drawn text writes a hidden number, unless a cell left in view shows the same
        // number (then it does not tell which cell holds it).
        expect_no_text_tells(q, state, ui.settings.decimals, texts);
        // Which key/value head a query head uses: no label says it.
        if (q.answer.property == "kv_head") {
          const int g = state.trace().kv_head_of[static_cast<size_t>(q.answer.head)];
          for (const std::string& text : texts) {
            EXPECT_EQ(lower(text).find("key/value head " + std::to_string(g)), std::string::npos)
                << text;
            EXPECT_EQ(text.find("K/V " + std::to_string(g)), std::string::npos) << text;
          }
        }
        // How many heads: no "H 4" or "of 4" in the status bar or the heading.
        if (q.answer.property == "heads" || q.answer.property == "kv_heads")
          for (const std::string& text : texts) {
            EXPECT_EQ(text.find("H_kv "), std::string::npos) << text;
            EXPECT_EQ(text.find("H = "), std::string::npos) << text;
          }
      }
      // Answered, the step shows everything again.
      if (step.question && state.has_trace() && step.lm_model.empty()) {
        ui.lesson->show_answer(state.trace(), state.precision);
        frames_at(kSlideSizes[0].screen, 2);
        EXPECT_FALSE(ui.secret.active);
      }
    }
  }
  std::printf(
      "checked %d step views (%d with a question, %d of them scrolling, %d later answers kept "
      "from earlier steps); %zu not one readable slide\n",
      checked, questions, scrolling, later_checked, failures.size());
  for (const std::string& f : failures) std::printf("  %s\n", f.c_str());
  EXPECT_TRUE(failures.empty()) << failures.size() << " step views are not one readable slide";
  EXPECT_GE(later_checked, 9);  // 02-3, 05-2, 05-3, 06-1, 06-3 … at three sizes
  EXPECT_GE(questions, 3 * 40);
}

// Bigger text grows the matrix: fear-is-the's weights at 1280×720 in presentation mode, with
// 24, 32 and 40 px text, keep the 1.00 cell (Fear on itself, causal) at least 120 px wide with
// its number.
TEST_F(LessonSteps, PresentationGrowsTheCellsWithTheText) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.wait_for_trace();
  ASSERT_TRUE(state.set_stage(StageId::kWeights));
  ui.presentation = true;
  ui.settings.animate = false;
  EXPECT_FLOAT_EQ(state.trace().head(StageId::kWeights, 0)(0, 0), 1.0f);
  float last = 0;
  for (float font : {24.0f, 32.0f, 40.0f}) {
    ui.settings.font_px = font;
    frames_at({1280, 720});
    const HeatmapViewport& v = ui.views["main"];
    ASSERT_TRUE(v.drawn);
    EXPECT_EQ(v.rows, 3);
    EXPECT_GE(v.cell_w, 120.0f) << "font " << font;
    EXPECT_TRUE(v.numbers_shown) << "font " << font;
    EXPECT_GE(v.number_px, font * 0.75f) << "font " << font;
    // The stage strip stays one row: it is no taller than one chip and its padding.
    EXPECT_LE(ui.layout.pipeline_h, ui.fonts.built_px * 3.0f) << "font " << font;
    last = v.cell_w;
  }
  EXPECT_GT(last, 0);
}

// The selected cell's working is shown whole in presentation mode at 1280×720: the narration's
// type shrinks to fit its column (to 14 px at the least) instead of scrolling.
TEST_F(LessonSteps, TheWorkingIsShownWholeInPresentation) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.wait_for_trace();
  ui.presentation = true;
  ui.settings.animate = false;
  for (StageId stage : {StageId::kScores, StageId::kWeights, StageId::kOutput})
    for (float font : {20.0f, 24.0f, 32.0f}) {
      SCOPED_TRACE(std::string(stage_name(stage)) + " font " + std::to_string(font));
      ASSERT_TRUE(state.set_stage(stage));
      state.select_cell(2, 1);
      ui.settings.font_px = font;
      frames_at({1280, 720}, 8);
      EXPECT_FALSE(ui.narration.scrolls);
      EXPECT_GE(ui.narration.px, 14.0f - 0.01f);
      test::check_layout(items, placed);
    }
}

}  // namespace
}  // namespace attn
