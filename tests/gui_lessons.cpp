// The lesson player headless: the whole built-in course played with Page Down (every step draws
// and shows its stage, head and selection), every question answered right and wrong against the
// app's own trace, presentation mode, recording the current view as a step, File → Worksheet for an
// open lesson, and gui --lesson's flag errors.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "attention/format.h"
#include "documents.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_lm.h"
#include "gui/panel_seq2seq.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "io/atomic_file.h"
#include "lessons/lesson.h"
#include "reference.h"

namespace attn {
namespace {

class LessonGui : public test::HeadlessApp {
 protected:
  // The app shows what the step asks for (the pipeline strip folds the inputs and head_contrib
  // into its own stages).
  void expect_step_shown(const LessonStep& s) {
    StageId stage = s.stage;
    if (stage == StageId::kQ || stage == StageId::kK || stage == StageId::kV ||
        stage == StageId::kX || stage == StageId::kXKv)
      stage = StageId::kInputs;
    if (stage == StageId::kHeadContrib) stage = StageId::kProjected;
    EXPECT_EQ(state.current_stage().id, stage);
    EXPECT_EQ(state.head(), s.head);
    EXPECT_EQ(state.selection().query, s.select_query);
    if (s.select_query >= 0) {
      EXPECT_EQ(state.selection().key, s.select_key);
    }
    EXPECT_GT(ui.lesson_view.rect.z, 0) << "the lesson window was not drawn";
    if (stage != StageId::kInputs) {
      EXPECT_TRUE(ui.views["main"].drawn);
    }
    EXPECT_EQ(ui.seq2seq.open, !s.seq2seq_tab.empty());
  }

  // Answers the current step's question right, then wrong, as the panel's Check button does.
  void answer_both_ways(LessonPlayer& p) {
    if (!p.step().question) return;
    const LessonQuestion& q = *p.step().question;
    const AttentionTrace& t = state.trace();
    std::string error;
    StepAnswer& a = p.answer();
    if (q.kind == QuestionKind::kNumber) {
      const std::optional<double> right = number_answer(q, t, error);
      ASSERT_TRUE(right) << error;
      a.typed = std::to_string(*right + q.tolerance + 0.5);
      p.check(t, state.precision);
      EXPECT_TRUE(a.answered);
      EXPECT_FALSE(a.verdict.correct);
      EXPECT_NE(a.verdict.feedback.find("Not quite"), std::string::npos);
      a.typed = format_fixed(*right, 4);
      p.check(t, state.precision);
    } else {
      const int right =
          q.kind == QuestionKind::kKey ? *key_answer(q, t, error) : statement_answer(q);
      a.picked = (right + 1) % static_cast<int>(question_options(q, t).size());
      p.check(t);
      EXPECT_FALSE(a.verdict.correct);
      a.picked = right;
      p.check(t);
    }
    EXPECT_TRUE(a.verdict.correct) << a.verdict.feedback;
    EXPECT_EQ(a.verdict.feedback.rfind("Right: ", 0), 0u) << a.verdict.feedback;
    frames(2);  // the feedback draws
  }

  void play(const std::string& path) {
    std::string error;
    ASSERT_TRUE(open_lesson(ui, path, error)) << error;
    LessonPlayer& p = *ui.lesson;
    for (int k = 0; k < p.step_count(); ++k) {
      SCOPED_TRACE(path + " step " + std::to_string(k + 1));
      frames(3);
      EXPECT_EQ(p.step_index(), k);
      expect_step_shown(p.step());
      answer_both_ways(p);
      if (k + 1 < p.step_count()) press(ImGui::GetKeyIndex(ImGuiKey_PageDown));
    }
    EXPECT_EQ(p.correct_count(), p.question_count());
    // Page Up goes back and shows the step before.
    press(ImGui::GetKeyIndex(ImGuiKey_PageUp));
    EXPECT_EQ(p.step_index(), std::max(0, p.step_count() - 2));
    frames(2);
    expect_step_shown(p.step());
  }
};

TEST_F(LessonGui, TheWholeCoursePlaysAndEveryQuestionChecks) {
  std::string error;
  const std::vector<LessonInfo> course = list_course(error);
  ASSERT_GE(course.size(), 10u) << error;
  for (const LessonInfo& l : course) play(l.path);
}

TEST_F(LessonGui, PresentationModeAndLargeFontsPlayToo) {
  ui.presentation = true;
  ui.settings.font_px = 32;
  play("05-fear-is-by-hand");
  close_lesson(ui);
  frames(2);
  EXPECT_FALSE(ui.lesson);
}

TEST_F(LessonGui, AnLmStepOpensItsLayerHeadAndPosition) {
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "12-induction-heads", error)) << error;
  LessonPlayer& p = *ui.lesson;
  // Step 3 ("Layer 1: the induction head"): layer 1, head 0, the second "x" (position 17).
  ASSERT_TRUE(p.go_to(2));
  ASSERT_TRUE(apply_lesson_step(ui));
  ASSERT_TRUE(ui.lm.state);
  LmPanel& lp = *ui.lm.state;
  lp.session.wait();
  frames(4);
  EXPECT_EQ(lp.session.layer, p.step().lm_layer);
  EXPECT_EQ(lp.session.head, p.step().lm_head);
  EXPECT_EQ(lp.session.position, 17);
  EXPECT_EQ(lp.shown_tab, "heads");
  // The head view isolates that query: every line drawn starts at token 17, in head 0.
  ASSERT_FALSE(lp.head_view.lines.empty());
  for (const auto& line : lp.head_view.lines) {
    EXPECT_EQ(line[0], 0);
    EXPECT_EQ(line[1], 17);
  }
  // Step 2 asks for layer 0, head 1 and no position: every token's lines.
  ASSERT_TRUE(p.go_to(1));
  ASSERT_TRUE(apply_lesson_step(ui));
  lp.session.wait();
  frames(4);
  EXPECT_EQ(lp.session.layer, 0);
  EXPECT_EQ(lp.session.head, 1);
  EXPECT_EQ(lp.session.position, -1);
  EXPECT_GT(lp.head_view.lines.size(), 17u);
  // Step 5: the next-token chart after position 17, where the text says the model predicts "m".
  ASSERT_TRUE(p.go_to(4));
  ASSERT_TRUE(apply_lesson_step(ui));
  lp.session.wait();
  frames(4);
  EXPECT_EQ(lp.shown_tab, "next");
  EXPECT_EQ(lp.session.shown_position(), 17);
  const auto top = lp.session.next_tokens();
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(lp.session.run()->model->tokenizer.display(top[0].first), " m");
  // Without a position the chart is after the last token (the sentence ends with "o", after
  // which the repeat is over: not "m").
  lp.session.position = -1;
  EXPECT_EQ(lp.session.shown_position(), static_cast<int>(lp.session.run()->ids.size()) - 1);
}

// On a projector (1280×720, 32 px text, presentation) the head view's rows around the isolated
// "x" do not reach "m", 15 tokens back, nor is there room right of the keys for the weights in
// words: they are written above the columns, the strongest first. At 1920×1080 with 24 px they
// are right of the keys, as before.
TEST_F(LessonGui, AnIsolatedQuerysWeightsAreSaidWhenTheKeyIsOutOfView) {
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "12-induction-heads", error)) << error;
  ASSERT_TRUE(ui.lesson->go_to(2));
  ASSERT_TRUE(apply_lesson_step(ui));
  ASSERT_TRUE(ui.lm.state);
  LmPanel& lp = *ui.lm.state;
  lp.session.wait();
  ui.presentation = true;
  ui.settings.font_px = 32;
  resize_to(1280, 720);
  frames(6);
  ASSERT_EQ(lp.shown_tab, "heads");
  ASSERT_EQ(lp.pinned_token, 17);
  EXPECT_GT(lp.head_view.first, 2) << "the key is in view: the case is not tested";
  const LmRun& r = *lp.session.run();
  const float* w = r.acts.att_at(r.model->config, 1, 0, 0);
  const int T = r.acts.T;
  int best = 0;
  for (int u = 1; u <= 17; ++u)
    if (w[17 * T + u] > w[17 * T + best]) best = u;
  ASSERT_EQ(best, 2);
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * w[17 * T + 2]);
  EXPECT_EQ(lp.head_view.words_above.rfind("“·x”:  " + std::string(pct) + "\u00a0→\u00a0“·m”", 0),
            0u)
      << lp.head_view.words_above;
  resize_to(1920, 1080);
  ui.settings.font_px = 24;
  frames(6);
  EXPECT_EQ(lp.head_view.words_above, "");
}

// The Roles tab opens on the score a step talks about, not on the previous-token score a student
// would have to switch from: step 5 ("Induction with RoPE") on the induction score of
// induction-llama, whose strongest head is the one the words name; step 9 ("Attention sinks") on
// "First token (attention sink)".
TEST_F(LessonGui, TheRolesStepsOpenOnTheirScore) {
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "13-todays-llms", error)) << error;
  LessonPlayer& p = *ui.lesson;
  const struct {
    int step;
    const char* tab;
    int role;
  } cases[] = {{4, "induction", 3}, {8, "sinks", 1}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tab);
    ASSERT_TRUE(p.go_to(c.step));
    ASSERT_EQ(p.step().lm_tab, c.tab);
    ASSERT_TRUE(apply_lesson_step(ui));
    ASSERT_TRUE(ui.lm.state);
    LmPanel& lp = *ui.lm.state;
    lp.session.wait();
    frames(4);
    EXPECT_EQ(lp.shown_tab, "roles");
    EXPECT_EQ(lp.role, c.role);
    if (c.role != 3) continue;
    ASSERT_TRUE(lp.session.run());
    EXPECT_EQ(lp.session.run()->model->name, "induction-llama");
    const auto& scores = lp.session.run()->scores;
    const auto best =
        std::max_element(scores.begin(), scores.end(),
                         [](const auto& a, const auto& b) { return a.induction < b.induction; });
    EXPECT_EQ(best - scores.begin(), 4) << "layer 1 head 0 of 4 heads a layer";
    EXPECT_GT(best->induction, 0.9);
    EXPECT_NE(p.step().text.front().find("L1\u00a0H0"), std::string::npos);
  }
}

TEST_F(LessonGui, TheBottleneckStepStartsItsEvaluation) {
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "10-seq2seq-alignment", error)) << error;
  ASSERT_EQ(ui.lesson->step().seq2seq_tab, "bottleneck");
  Seq2seqSession& s = ui.seq2seq.state->session;
  // Started on opening the step, not by the tab's Evaluate button.
  EXPECT_TRUE(s.compare_job.running() || !s.compare_rows.empty());
  frames(2);
  EXPECT_EQ(ui.seq2seq.state->shown_tab, "bottleneck");
  s.compare_job.wait();
  frames(2);
  ASSERT_EQ(s.compare_rows.size(), 4u) << s.compare_error;  // the four bottleneck/ models
  // Back to the step later: the result is there at once (kept per model file), no new job.
  s.compare_rows.clear();
  ASSERT_TRUE(ui.lesson->go_to(1));
  ASSERT_TRUE(apply_lesson_step(ui));
  ASSERT_TRUE(ui.lesson->go_to(0));
  ASSERT_TRUE(apply_lesson_step(ui));
  EXPECT_FALSE(s.compare_job.running());
  EXPECT_EQ(s.compare_rows.size(), 4u);
}

TEST_F(LessonGui, AStepsDecimalsApplyAndTheUsersComeBack) {
  ui.settings.decimals = 3;  // the user's choice
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "05-fear-is-by-hand", error)) << error;
  LessonPlayer& p = *ui.lesson;
  EXPECT_EQ(ui.settings.decimals, 3);
  const int last = p.step_count() - 1;
  ASSERT_EQ(p.lesson().steps[static_cast<size_t>(last)].decimals, 4);
  ASSERT_TRUE(p.go_to(last));
  ASSERT_TRUE(apply_lesson_step(ui));
  frames(2);
  EXPECT_EQ(ui.settings.decimals, 4);
  EXPECT_EQ(user_settings(ui).decimals, 3);  // settings.ini keeps the user's
  ASSERT_TRUE(p.go_to(last - 1));
  ASSERT_TRUE(apply_lesson_step(ui));
  EXPECT_EQ(ui.settings.decimals, 3);
  ASSERT_TRUE(p.go_to(last));
  ASSERT_TRUE(apply_lesson_step(ui));
  EXPECT_EQ(ui.settings.decimals, 4);
  close_lesson(ui);
  EXPECT_EQ(ui.settings.decimals, 3);
  // A change the user makes while the step shows its own decimals is theirs and stays.
  ASSERT_TRUE(open_lesson(ui, "05-fear-is-by-hand", error)) << error;
  ASSERT_TRUE(ui.lesson->go_to(last));
  ASSERT_TRUE(apply_lesson_step(ui));
  ui.settings.decimals = 1;
  close_lesson(ui);
  EXPECT_EQ(ui.settings.decimals, 1);
}

TEST_F(LessonGui, RecordingTheCurrentViewAppendsAStep) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kWeights);
  state.select_cell(2, 1);
  frames(2);
  const std::string path = test::temp_path("recorded-gui.json");
  EXPECT_EQ(record_lesson_step(ui, path), "");
  std::string error;
  ASSERT_TRUE(open_lesson(ui, path, error)) << error;
  frames(2);
  EXPECT_EQ(state.current_stage().id, StageId::kWeights);
  EXPECT_EQ(state.selection().query, 2);
  EXPECT_EQ(state.selection().key, 1);
  // Recording into the open lesson shows the new step.
  state.set_stage(StageId::kScores);
  EXPECT_EQ(record_lesson_step(ui, path), "");
  EXPECT_EQ(ui.lesson->step_count(), 2);
  EXPECT_EQ(ui.lesson->step_index(), 1);
  EXPECT_EQ(suggested_lesson_path(ui), path);
}

// pdftotext's text of a PDF with runs of whitespace folded to one space (it breaks wrapped lines).
std::string folded_pdf_text(const std::string& pdf) {
  std::string out;
  for (char c : test::pdf_text(pdf)) {
    const bool space = c == ' ' || c == '\n' || c == '\f' || c == '\t';
    if (!space || (!out.empty() && out.back() != ' ')) out += space ? ' ' : c;
  }
  return out;
}

TEST_F(LessonGui, TheWorksheetDialogPrintsTheOpenLessonsQuestions) {
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "05-fear-is-by-hand", error)) << error;
  frames(2);
  const Lesson& lesson = ui.lesson->lesson();
  const LessonStep* first = nullptr;
  for (const LessonStep& s : lesson.steps)
    if (s.question && !first) first = &s;
  ASSERT_NE(first, nullptr);
  // The answer the key must hold, read from the step's own trace.
  const AttentionTrace t = lesson_step_trace(*first);
  const std::string answer = answer_text(*first->question, t, 4, error);
  ASSERT_EQ(error, "");

  // File → Worksheet, OK with Enter; the handout and its key are written on a worker.
  auto print = [&](const std::string& pdf) { export_through_dialog(PathDialog::kWorksheet, pdf); };
  ASSERT_TRUE(ui.dialogs.worksheet_lesson);  // with a lesson open, its questions are the default
  const std::string suggested = suggested_worksheet_path(ui);
  EXPECT_NE(suggested.find("/05-fear-is-by-hand-worksheet.pdf"), std::string::npos) << suggested;
  const std::string pdf = test::temp_path("lesson-sheet.pdf");
  print(pdf);
  const std::string sheet = folded_pdf_text(pdf);
  const std::string answers = folded_pdf_text(pdf.substr(0, pdf.size() - 4) + "-answers.pdf");
  EXPECT_NE(sheet.find("spot the error"), std::string::npos) << sheet;  // the lesson's title
  EXPECT_NE(sheet.find("Compute q_Fear"), std::string::npos) << sheet;
  EXPECT_EQ(sheet.find(answer), std::string::npos) << "the handout gives the answer away";
  EXPECT_NE(answers.find(answer), std::string::npos) << answer << " not in: " << answers;

  // The other choice prints the current scenario's worksheet instead.
  ui.dialogs.worksheet_lesson = false;
  EXPECT_NE(suggested_worksheet_path(ui).find("/fear-is-worksheet.pdf"), std::string::npos)
      << suggested_worksheet_path(ui);
  const std::string scenario_pdf = test::temp_path("scenario-sheet.pdf");
  print(scenario_pdf);
  const std::string scenario = folded_pdf_text(scenario_pdf);
  EXPECT_EQ(scenario.find("Compute q_Fear"), std::string::npos);
  EXPECT_NE(scenario.find("Q (queries)"), std::string::npos) << scenario;
}

// File → Export lesson as web page…: greyed out with no lesson; with one, OK writes one HTML file
// (on a worker) that names the lesson, holds its first question and links to nothing outside.
TEST_F(LessonGui, TheOpenLessonExportsAsOneWebPage) {
  std::string error;
  EXPECT_EQ(suggested_lesson_html_path(ui), "");
  ASSERT_TRUE(open_lesson(ui, "05-fear-is-by-hand", error)) << error;
  frames(2);
  EXPECT_NE(suggested_lesson_html_path(ui).find("/05-fear-is-by-hand.html"), std::string::npos)
      << suggested_lesson_html_path(ui);
  const std::string page = test::temp_path("lesson-page");  // ".html" is added
  export_through_dialog(PathDialog::kLessonHtml, page);
  EXPECT_EQ(ui.exports.written, page + ".html");
  std::string html;
  ASSERT_TRUE(read_text_file(page + ".html", html, error)) << error;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 40);
  EXPECT_NE(html.find("spot the error"), std::string::npos);  // the lesson's title
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);

  // With the lesson closed the dialog says what is missing and writes nothing.
  close_lesson(ui);
  ui.dialogs.path = PathDialog::kLessonHtml;
  ui.dialogs.buffer = test::temp_path("no-lesson.html");
  frames(2);
  press(ImGui::GetKeyIndex(ImGuiKey_Enter));
  frames(1);
  EXPECT_NE(ui.dialogs.error.find("open a lesson first"), std::string::npos) << ui.dialogs.error;
  EXPECT_FALSE(std::filesystem::exists(test::temp_path("no-lesson.html")));
}

TEST_F(LessonGui, GuiLessonFlagsAreChecked) {
  GuiOptions o;
  o.lesson = "06-causal-masking";
  o.lesson_step = 2;
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  EXPECT_EQ(ui.lesson->step_index(), 1);
  EXPECT_EQ(state.current_stage().id, StageId::kMasked);
  o.lesson_step = 99;
  EXPECT_FALSE(setup_from_options(ui, o, error));
  EXPECT_NE(error.find("--lesson-step: expected 1.."), std::string::npos) << error;
  o.lesson = "no-such-lesson";
  EXPECT_FALSE(setup_from_options(ui, o, error));
  EXPECT_EQ(error.rfind("--lesson: ", 0), 0u) << error;
}

}  // namespace
}  // namespace attn
