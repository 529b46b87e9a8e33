// Lesson worksheets on paper: for every built-in lesson the handout carries each question's own
// figure with the cell or row it asks about blank ("?"), never its answer, never another
// example's tables and never instructions to work the app; the key answers in text of 10 pt or
// more. And exported pictures and slides come out at exactly the size asked for, the heatmap
// filling them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "attention/scenario.h"
#include "backends/compute.h"
#include "course.h"
#include "documents.h"
#include "io/examples.h"
#include "lessons/lesson.h"
#include "lessons/lesson_sheet.h"
#include "lessons/model_figures.h"
#include "lm/forward.h"
#include "lm/model.h"
#include "reference.h"
#include "render/heatmap_export.h"
#include "render/worksheet.h"
#include "seq2seq/alignment.h"

namespace attn {
namespace {

std::vector<Lesson> course() { return test::built_in_course(); }

std::string fixed(double x, int decimals) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  if (s[0] == '-') s = "−" + s.substr(1);  // the exporter writes a real minus sign
  return s;
}

// Words that send a reader to the app, as a teacher reading the sheet would spot them (this
// test's own list, not the filter's).
const std::regex& app_words() {
  static const std::regex r(
      "\\b(click|clicking|press|slider|thumbnail|drag|hover|button|tab|menu)\\b|View →|File →|"
      "heatmap|head view|model view|[Ss]elect a",
      std::regex::icase);
  return r;
}

bool has_class(const SceneItem& it, const std::string& cls) {
  const std::string padded = " " + it.cls + " ";
  return padded.find(" " + cls + " ") != std::string::npos;
}

bool is_text(const SceneItem& it) {
  return it.kind == SceneItem::Kind::kText || it.kind == SceneItem::Kind::kParagraph;
}

// The cells a question asks about on its stage, from the answer reference alone: a weight's or a
// key question's whole row (the rest of a row of weights tells the missing one), else the cell.
bool asked(const LessonQuestion& q, int i, int j) {
  if (q.kind == QuestionKind::kStatement || !q.answer.stage || i != q.answer.row) return false;
  return q.kind == QuestionKind::kKey || *q.answer.stage == StageId::kWeights || j == q.answer.col;
}

struct Built;
bool asked_later(const Built& b, size_t n, const AttentionTrace& t, StageId stage, int i, int j);

struct Built {
  std::vector<AttentionTrace> traces;
  LessonSheet sheet;
  std::vector<const LessonStep*> steps;  // the step of each question
};

// Whether a question after the sheet's n-th asks for cell (i, j) of `stage` (t: question n's
// trace) and its own trace holds the same row there: the earlier figure would answer it.
bool asked_later(const Built& b, size_t n, const AttentionTrace& t, StageId stage, int i, int j) {
  for (size_t k = n + 1; k < b.steps.size(); ++k) {
    const LessonQuestion& later = *b.steps[k]->question;
    if (!later.answer.stage || *later.answer.stage != stage || !asked(later, i, j)) continue;
    const AttentionTrace theirs = lesson_step_trace(*b.steps[k]);
    if (!theirs.find(stage) || later.answer.head >= theirs.step(stage).num_heads()) continue;
    const Matrix& a = t.head(stage, later.answer.head);
    const Matrix& c = theirs.head(stage, later.answer.head);
    if (a.rows() != c.rows() || a.cols() != c.cols() || i >= a.rows()) continue;
    if ((a.row(i) - c.row(i)).cwiseAbs().maxCoeff() < 1e-9) return true;
  }
  return false;
}

Built build(const Lesson& l) {
  Built b;
  std::string error;
  std::optional<LessonSheet> sheet = lesson_sheet(l, b.traces, 4, error);
  EXPECT_TRUE(sheet) << l.path << ": " << error;
  if (sheet) b.sheet = std::move(*sheet);
  for (const LessonStep& s : l.steps)
    if (s.question) b.steps.push_back(&s);
  EXPECT_EQ(b.steps.size(), b.sheet.questions.size());
  return b;
}

TEST(LessonSheet, EveryBuiltInLessonPrintsItsOwnFiguresWithoutTheirAnswers) {
  int figures = 0, blanks = 0, later_blanks = 0, lessons = 0;
  for (const Lesson& l : course()) {
    SCOPED_TRACE(l.path);
    ++lessons;
    Built b = build(l);
    WorksheetOptions o;
    std::vector<ScenePage> pages;
    std::string error;
    ASSERT_TRUE(lesson_sheet_pages(b.sheet, o, false, pages, error)) << error;
    for (size_t n = 0; n < b.steps.size(); ++n) {
      const LessonStep& step = *b.steps[n];
      const LessonQuestion& q = *step.question;
      const AttentionTrace t = lesson_step_trace(step);
      const std::string fig = "figure-" + std::to_string(n + 1);
      std::vector<const SceneItem*> items;
      for (const ScenePage& p : pages)
        for (const SceneItem& it : p.items)
          if (has_class(it, fig)) items.push_back(&it);
      const bool other_view = !step.seq2seq_model.empty() || !step.lm_model.empty();
      const bool drawn = other_view || step.stage != StageId::kInputs;
      // A step about the seq2seq or language-model window prints that model's figure (the
      // alignment, the head), never the tables or figure of the example left behind the window.
      EXPECT_EQ(!items.empty(), drawn) << "question " << n + 1 << " " << step.title;
      if (other_view) {
        EXPECT_EQ(b.sheet.questions[n].tables, nullptr) << step.title;
        EXPECT_TRUE(b.sheet.questions[n].figure.model) << step.title;
        EXPECT_TRUE(b.sheet.questions[n].no_figure.empty()) << b.sheet.questions[n].no_figure;
      }
      if (items.empty()) continue;
      ++figures;
      if (other_view) continue;
      // The figure is the step's own stage: its title is the stage's.
      const std::string stage_title = t.step(step.stage).title;
      bool titled = false;
      for (const SceneItem* it : items) titled = titled || it->text == stage_title;
      EXPECT_TRUE(titled) << step.title << ": no title " << stage_title;
      // The cells asked about are "?", the others keep their numbers.
      if (!q.answer.stage || *q.answer.stage != step.stage) continue;
      const Matrix& m = t.head(step.stage, q.answer.head);
      std::vector<std::string> shown;
      for (const SceneItem* it : items) {
        if (!has_class(*it, "num") || it->row < 0) continue;
        // Masked keys too: a hatched 0 would answer "what weight does it give a future key?".
        if (asked(q, it->row, it->col)) {
          EXPECT_EQ(it->text, "?") << step.title << " cell " << it->row << "," << it->col;
          ++blanks;
        } else if (asked_later(b, n, t, step.stage, it->row, it->col)) {
          // A later question of the sheet asks for this cell, with these numbers: blank too.
          EXPECT_EQ(it->text, "?") << step.title << " cell " << it->row << "," << it->col;
          ++later_blanks;
        } else {
          EXPECT_NE(it->text, "?") << step.title << " cell " << it->row << "," << it->col;
          shown.push_back(it->text);
        }
      }
      // Nothing else in the figure writes a number answer (a colour-bar tick, a note), unless
      // a cell shown has that very value.
      if (q.kind == QuestionKind::kNumber) {
        const double answer = m(q.answer.row, q.answer.col);
        for (int d = 2; d <= 4; ++d) {
          const std::string a = fixed(answer, d);
          if (std::find(shown.begin(), shown.end(), a) != shown.end()) continue;
          for (const SceneItem* it : items) {
            if (is_text(*it)) {
              EXPECT_EQ(it->text.find(a), std::string::npos) << it->text;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(lessons, 14);
  EXPECT_GE(figures, 25);
  EXPECT_GE(blanks, 15);
  EXPECT_GE(later_blanks, 2);  // 05's question 1 hides question 3's cell, 06's …
}

// A step that shows its heatmap with its own decimals ("shown with 4 decimals in this step", 05's
// last question) prints its figure with them too: every number cell has that many decimals.
TEST(LessonSheet, FiguresKeepTheDecimalsTheStepShows) {
  int own_decimals = 0, cells = 0;
  for (const Lesson& l : course()) {
    SCOPED_TRACE(l.path);
    Built b = build(l);
    WorksheetOptions o;
    std::vector<ScenePage> pages;
    std::string error;
    ASSERT_TRUE(lesson_sheet_pages(b.sheet, o, false, pages, error)) << error;
    for (size_t n = 0; n < b.steps.size(); ++n) {
      const LessonStep& step = *b.steps[n];
      if (!step.seq2seq_model.empty() || !step.lm_model.empty()) continue;
      const int decimals = step.decimals >= 0 ? step.decimals : 2;  // the app's default is 2
      if (step.decimals >= 0 && step.decimals != 2) ++own_decimals;
      const std::string fig = "figure-" + std::to_string(n + 1);
      for (const ScenePage& p : pages)
        for (const SceneItem& it : p.items) {
          if (!has_class(it, fig) || !has_class(it, "num") || it.row < 0 || it.text == "?")
            continue;
          // A masked cell is "0" or "−∞", whatever the decimals.
          const size_t dot = it.text.find('.');
          if (dot == std::string::npos) continue;
          ++cells;
          EXPECT_EQ(it.text.size() - dot - 1, static_cast<size_t>(decimals))
              << step.title << ": " << it.text;
        }
    }
  }
  EXPECT_GE(cells, 100);
  EXPECT_GE(own_decimals, 1);  // 05's "Steps 4–5: the output" shows 4
}

// Class mode's picture of each question step (lesson_step_figure on a 960 × 600 page): the cells
// the question asks about are "?" and no other text writes a number answer until it is revealed;
// revealed, every cell has its number again and the asked cell shows the answer.
TEST(LessonSheet, ClassPicturesHideTheAnswerUntilRevealed) {
  std::string error;
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  ASSERT_TRUE(text) << error;
  int pictures = 0, blanks = 0;
  for (const Lesson& l : course()) {
    for (const LessonStep& step : l.steps) {
      if (!step.question || !step.seq2seq_model.empty() || !step.lm_model.empty()) continue;
      SCOPED_TRACE(l.path + ": " + step.title);
      const LessonQuestion& q = *step.question;
      const AttentionTrace t = lesson_step_trace(step);
      for (const bool conceal : {true, false}) {
        const SheetFigure f =
            lesson_step_figure(step, t, conceal ? question_secret(q, t) : QuestionSecret{}, error);
        ASSERT_TRUE(error.empty()) << error;
        EXPECT_EQ(f.drawn(), step.stage != StageId::kInputs);
        if (!f.drawn()) continue;
        ScenePage page;
        ASSERT_TRUE(sheet_figure_page(f, 960, 600, *text, page, error)) << error;
        EXPECT_EQ(page.width, 960);
        ++pictures;
        const bool on_stage = q.answer.stage && *q.answer.stage == step.stage;
        std::vector<std::string> shown;
        for (const SceneItem& it : page.items) {
          if (!has_class(it, "num") || it.row < 0) continue;
          // Every item stays on the page.
          EXPECT_LE(it.x, 960);
          // "How many keys may row I see?": that row wherever the mask shows, hatching and all.
          const bool counts_keys = q.kind == QuestionKind::kNumber &&
                                   q.answer.property == "visible_keys" && shows_mask(step.stage) &&
                                   it.row == q.answer.row;
          // Masked cells too: a hatched 0 would answer a question about a future key.
          const bool blank = conceal && ((on_stage && asked(q, it.row, it.col)) || counts_keys);
          EXPECT_EQ(it.text == "?", blank) << "cell " << it.row << "," << it.col;
          blanks += blank;
          if (!blank) shown.push_back(it.text);
        }
        if (q.kind != QuestionKind::kNumber || !on_stage) continue;
        const double answer = t.head(step.stage, q.answer.head)(q.answer.row, q.answer.col);
        // At the decimals the step shows on screen (2 unless it says otherwise).
        const std::string a2 = fixed(answer, step.decimals >= 0 ? step.decimals : 2);
        const TraceStep* ms = t.find(StageId::kMasked);
        const bool answer_masked =
            is_query_key(step.stage) && shows_mask(step.stage) && ms &&
            !std::isfinite(t.head(*ms, q.answer.head)(q.answer.row, q.answer.col));
        if (!conceal && !answer_masked) {  // a masked weight is hatched, with no number
          EXPECT_NE(std::find(shown.begin(), shown.end(), a2), shown.end())
              << "the revealed picture shows " << a2;
        }
        if (!conceal) continue;
        for (int d = 2; d <= 4; ++d) {
          const std::string a = fixed(answer, d);
          if (std::find(shown.begin(), shown.end(), a) != shown.end()) continue;
          for (const SceneItem& it : page.items) {
            if (is_text(it)) {
              EXPECT_EQ(it.text.find(a), std::string::npos) << it.text;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(pictures, 40);
  EXPECT_GE(blanks, 15);
}

// The figures of the model steps (lessons 10 and 12) are the models' own: each row of a seq2seq
// alignment or of a language model's head is a distribution over the input (it sums to 1), the
// bottleneck model puts all of every row on the last input character, and the head's causal
// mask hides every key after its query. A step on the Next tab prints that tab's chart instead.
TEST(LessonSheet, ModelStepsPrintTheModelsOwnFigures) {
  int alignments = 0, heads = 0, charts = 0;
  for (const Lesson& l : course())
    for (const LessonStep& step : l.steps) {
      if (step.seq2seq_model.empty() && step.lm_model.empty()) continue;
      SCOPED_TRACE(l.path + ": " + step.title);
      std::string error;
      const std::optional<LabelledMatrix> f = model_step_figure(step, error);
      ASSERT_TRUE(f) << error;
      const Matrix& w = f->values;
      if (step.lm_tab == "next") {  // the tab's chart: chances, likeliest first (test below)
        ++charts;
        ASSERT_EQ(w.rows(), 1);
        ASSERT_EQ(w.cols(), 10);
        EXPECT_LE(w.sum(), 1.0f + 1e-5f);
        for (Eigen::Index j = 1; j < w.cols(); ++j) EXPECT_LE(w(0, j), w(0, j - 1)) << j;
        continue;
      }
      ASSERT_GT(w.rows(), 1);
      for (Eigen::Index i = 0; i < w.rows(); ++i) {
        double sum = 0;
        for (Eigen::Index j = 0; j < w.cols(); ++j) {
          ASSERT_GE(w(i, j), 0.0f);
          sum += w(i, j);
        }
        EXPECT_NEAR(sum, 1.0, 1e-4) << "row " << i;
      }
      if (!step.seq2seq_model.empty()) {
        ++alignments;
        EXPECT_EQ(f->col_labels.size(), std::string(s2s::kExampleInput).size());
        if (step.seq2seq_model.find("none") != std::string::npos) {
          for (Eigen::Index i = 0; i < w.rows(); ++i)
            EXPECT_EQ(w(i, w.cols() - 1), 1.0f) << "row " << i;
        }
      } else {
        ++heads;
        EXPECT_EQ(w.rows(), w.cols());
        ASSERT_EQ(f->hidden.size(), static_cast<size_t>(w.size()));
        for (Eigen::Index i = 0; i < w.rows(); ++i)
          for (Eigen::Index j = 0; j < w.cols(); ++j)
            EXPECT_EQ(f->hidden[static_cast<size_t>(i * w.cols() + j)] != 0, j > i)
                << i << "," << j;
      }
    }
  EXPECT_GE(alignments, 3);
  EXPECT_GE(heads, 4);
  EXPECT_GE(charts, 4);
}

// A language-model step's figure on the printed handout keeps cells a reader can see. A 13-token
// head's legend under the grid is wider at its smallest type than the width the figure's height
// allowed, and the cells used to shrink to 1 point each (lesson 14's third step); a grouped-query
// head's long subtitle shrank a 20-token one (13's first).
TEST(LessonSheet, ModelFiguresKeepCellsThatCanBeSeen) {
  int checked = 0;
  for (const Lesson& l : course()) {
    SCOPED_TRACE(l.path);
    Built b = build(l);
    std::vector<ScenePage> pages;
    std::string error;
    ASSERT_TRUE(lesson_sheet_pages(b.sheet, WorksheetOptions{}, false, pages, error)) << error;
    for (size_t n = 0; n < b.steps.size(); ++n) {
      if (b.steps[n]->lm_model.empty()) continue;
      ASSERT_TRUE(b.sheet.questions[n].figure.model) << b.steps[n]->title;
      const std::string fig = "figure-" + std::to_string(n + 1);
      int left = std::numeric_limits<int>::max(), right = std::numeric_limits<int>::min();
      for (const ScenePage& p : pages)
        for (const SceneItem& it : p.items)
          if (has_class(it, fig) && (has_class(it, "cells") || has_class(it, "cell"))) {
            left = std::min(left, it.rect.x);
            right = std::max(right, it.rect.right());
          }
      ASSERT_LT(left, right) << b.steps[n]->title << ": no cells";
      const auto cols = b.sheet.questions[n].figure.model->values.cols();
      EXPECT_GE((right - left) / static_cast<double>(cols), 4.0)
          << b.steps[n]->title << ": " << cols << " columns in " << right - left << " points";
      ++checked;
    }
  }
  EXPECT_GE(checked, 10);
}

// A step on the Next tab prints the tab's chart, not a head: the ten likeliest tokens after the
// step's position, likeliest first, each with its chance — checked against a softmax over every
// logit in double precision, sorted here, for the last position and for one the step names.
TEST(LessonSheet, ANextTokenStepPrintsTheTenLikeliestTokens) {
  LessonStep step;
  step.lm_model = "stories-llama";
  step.lm_text = "One day Mia found a red ball";
  step.lm_tab = "next";
  lm::Model m;
  std::string error;
  ASSERT_TRUE(lm::load_model(lm::resolve_model_folder(step.lm_model, error), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode(step.lm_text);
  const int T = static_cast<int>(ids.size()), V = m.config.vocab_size;
  lm::Activations acts;
  lm::gpt_forward(m, ids, 1, T, acts, lm::ForwardOptions{});  // every position's logits
  for (int at : {-1, 2}) {
    step.lm_position = at;
    const int t = at < 0 ? T - 1 : at;
    std::vector<double> p(static_cast<size_t>(V));
    const float* logits = acts.logits.data() + static_cast<size_t>(t) * V;
    const double mx = *std::max_element(logits, logits + V);
    double sum = 0;
    for (int v = 0; v < V; ++v) sum += p[static_cast<size_t>(v)] = std::exp(logits[v] - mx);
    std::vector<int> order(static_cast<size_t>(V));
    for (int v = 0; v < V; ++v) order[static_cast<size_t>(v)] = v;
    std::stable_sort(order.begin(), order.end(), [&p](int a, int b) {
      return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)];
    });
    const std::optional<LabelledMatrix> fig = model_step_figure(step, error);
    ASSERT_TRUE(fig) << error;
    ASSERT_EQ(fig->values.rows(), 1);
    ASSERT_EQ(fig->values.cols(), 10);
    EXPECT_NE(fig->title.find("the next token after “" +
                              m.tokenizer.display(ids[static_cast<size_t>(t)]) + "”"),
              std::string::npos)
        << fig->title;
    for (int k = 0; k < 10; ++k) {
      const int id = order[static_cast<size_t>(k)];
      const double prob = p[static_cast<size_t>(id)] / sum;
      EXPECT_EQ(fig->col_labels[static_cast<size_t>(k)], "“" + m.tokenizer.display(id) + "”");
      EXPECT_NEAR(fig->values(0, k), prob, 1e-5) << k;
      char printed[32];
      std::snprintf(printed, sizeof printed, "%.1f %%", 100 * prob);
      EXPECT_EQ(fig->numbers[static_cast<size_t>(k)], printed) << k;
    }
  }
  // Any other tab still prints the step's head.
  step.lm_tab = "heads";
  step.lm_position = -1;
  const std::optional<LabelledMatrix> head = model_step_figure(step, error);
  ASSERT_TRUE(head) << error;
  EXPECT_EQ(head->values.rows(), T);
  EXPECT_EQ(head->values.cols(), T);
}

// The PDFs as the command writes them: the handout never writes an answer as the app (and the
// key) write it, says nothing about working the app, and prints no example's tables for the
// language-model lesson; the key has every answer, in text of 10 pt or more.
TEST(LessonSheet, TheCommandsPdfsKeepAnswersOffTheHandoutAndTheKeyReadable) {
  for (const Lesson& l : course()) {
    SCOPED_TRACE(l.path);
    const std::string sheet = test::temp_path("lesson-sheet.pdf"),
                      key = test::temp_path("lesson-key.pdf");
    const auto r = test::run_cli("worksheet --lesson '" + l.path + "' --out '" + sheet +
                                 "' --answers '" + key + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    // pdftotext breaks lines where the page does: the key is read as one line of words.
    const std::string hand = test::pdf_text(sheet),
                      answers = std::regex_replace(test::pdf_text(key), std::regex("\\s+"), " ");
    ASSERT_FALSE(hand.empty()) << "pdftotext (poppler-utils) is needed";
    std::smatch found;
    EXPECT_FALSE(std::regex_search(hand, found, app_words())) << "app instruction: " << found.str();
    Built b = build(l);
    for (size_t n = 0; n < b.steps.size(); ++n) {
      const LessonQuestion& q = *b.steps[n]->question;
      const std::string& answer = b.sheet.questions[n].answer;
      EXPECT_NE(answers.find(answer), std::string::npos) << "key lacks " << answer;
      // A number as the app writes it (4 decimals); a key or a statement is among the options
      // on the handout by design, so only the key says which.
      if (q.kind == QuestionKind::kNumber && answer.find('.') != std::string::npos) {
        EXPECT_EQ(hand.find(answer), std::string::npos) << b.steps[n]->title << ": " << answer;
      }
    }
    EXPECT_EQ(hand.find("Answer:"), std::string::npos);
    if (l.path.find("12-induction-heads") != std::string::npos) {
      // Lesson 12 is about a trained transformer: fear-is-the's tables are not its material.
      EXPECT_EQ(hand.find("Q (queries)"), std::string::npos);
      EXPECT_EQ(hand.find("fear-is-the"), std::string::npos);
    }
    // The key's text, as laid out: nothing under 10 pt.
    std::vector<ScenePage> pages;
    std::string error;
    ASSERT_TRUE(lesson_sheet_pages(b.sheet, WorksheetOptions{}, true, pages, error)) << error;
    int texts = 0;
    for (const ScenePage& p : pages)
      for (const SceneItem& it : p.items)
        if (is_text(it) && !it.text.empty()) {
          ++texts;
          EXPECT_GE(it.font.size, 10.0) << it.cls << ": " << it.text;
        }
    EXPECT_GT(texts, 10);
  }
}

TEST(LessonSheet, PaperWordingDropsAppInstructions) {
  EXPECT_EQ(paper_wording("Now layer 1, head 0 (the thumbnail in row L1, column H0; in the head "
                          "view, Layer 1 and Head 0), and the second copy of the letters."),
            "Now layer 1, head 0, and the second copy of the letters.");
  EXPECT_EQ(paper_wording("One head puts its weight on the token before it. In the model view "
                          "it is the thumbnail in row L0. Its output is added."),
            "One head puts its weight on the token before it. Its output is added.");
  EXPECT_EQ(paper_wording("Press Check to see. Use the slider."), "");
  EXPECT_EQ(paper_wording("It is different — check the whole row in the heatmap."),
            "It is different — check the whole row in the figure.");
  // Ordinary words that only look like app words stay: a table, a sliding window, et al.
  const std::string kept =
      "Look at the table: Mistral uses a sliding window. Olsson et al. (2022) tie it to heads.";
  EXPECT_EQ(paper_wording(kept), kept);
}

// The size of a PNG from its header.
bool png_size(const std::string& bytes, int& w, int& h) {
  if (bytes.size() < 24 || bytes.compare(1, 3, "PNG") != 0) return false;
  auto be32 = [&](size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) |
           (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) |
           static_cast<unsigned char>(bytes[at + 3]);
  };
  w = be32(16);
  h = be32(20);
  return true;
}

AttentionTrace example_trace(const std::string& name) {
  std::string error;
  std::optional<Scenario> s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  std::unique_ptr<Backend> cpu = make_backend("cpu", error);
  return compute_scenario_trace(*s, *cpu);
}

TEST(ExportSize, PicturesComeOutAtExactlyTheSizeAsked) {
  const AttentionTrace t = example_trace("fear-is-the");
  HeatmapOptions o;
  o.step = StageId::kWeights;
  for (auto [w, h] : {std::pair{1920, 1080}, {1600, 1200}, {777, 333}}) {
    std::string bytes, error;
    ASSERT_TRUE(render_heatmap_sized(t, o, w, h, ImageFormat::kPng, bytes, error)) << error;
    int pw = 0, ph = 0;
    ASSERT_TRUE(png_size(bytes, pw, ph));
    EXPECT_EQ(pw, w);
    EXPECT_EQ(ph, h);
    const std::string path = test::temp_path("sized.png");
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    const test::RgbImage img = test::load_png_rgb(path);
    EXPECT_EQ(img.w, w);
    EXPECT_EQ(img.h, h);
  }
  std::string bytes, error;
  EXPECT_FALSE(render_heatmap_sized(t, o, 50, 1080, ImageFormat::kPng, bytes, error));
  EXPECT_NE(error.find("size"), std::string::npos) << error;
}

// The slide deck: each page the size asked, the heatmap's cells spanning most of the body.
TEST(ExportSize, SlidePagesAreTheSizeAskedWithTheHeatmapFillingTheBody) {
  for (const char* name : {"fear-is", "fear-is-the", "multi-head"}) {
    const AttentionTrace t = example_trace(name);
    for (auto [w, h] : {std::pair{960, 540}, {800, 600}}) {
      std::string bytes, error;
      ASSERT_TRUE(render_stage_pages_sized(t, HeatmapOptions{}, w, h, bytes, error)) << error;
      const std::string pdf = test::temp_path("deck.pdf");
      FILE* f = std::fopen(pdf.c_str(), "wb");
      ASSERT_NE(f, nullptr);
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
      double pw = 0, ph = 0;
      ASSERT_TRUE(test::pdf_page_size(pdf, pw, ph));
      EXPECT_NEAR(pw, w, 0.5);
      EXPECT_NEAR(ph, h, 0.5);
      std::unique_ptr<TextEngine> text = TextEngine::create(error);
      ASSERT_TRUE(text) << error;
      HeatmapOptions o;
      o.step = StageId::kWeights;
      ScenePage page;
      ASSERT_TRUE(stage_page_sized(t, o, w, h, 0, 1, *text, page, error)) << error;
      double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
      for (const SceneItem& it : page.items)
        if (it.cls.rfind("cell", 0) == 0) {
          x0 = std::min(x0, double(it.rect.x));
          y0 = std::min(y0, double(it.rect.y));
          x1 = std::max(x1, double(it.rect.right()));
          y1 = std::max(y1, double(it.rect.bottom()));
        }
      ASSERT_LT(x0, x1) << name;
      // The grid fills the body (the page less the title, the caption and the footer, about a
      // third of it): 45% of the page's height or more, in the middle, not a corner.
      EXPECT_GE((y1 - y0) / h, 0.45) << name << " " << w << "×" << h;
      EXPECT_NEAR((x0 + x1) / 2, w / 2.0, w * 0.2) << name;
    }
  }
}

}  // namespace
}  // namespace attn
