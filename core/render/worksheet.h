// Printable worksheets: attention by hand for one head of a small scenario. The handout gives
// Q, K and V, the formulas, blank grids to fill in (scores, scaled, weights, output; hidden cells
// hatched) and questions; the answer key fills every grid, lists each output vector, answers the
// questions and works every query's arithmetic out line by line. PDF pages, A4 or US Letter.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "render/heatmap_export.h"
#include "render/labelled_matrix.h"

namespace attn {

struct WorksheetOptions {
  Paper paper = Paper::kA4;  // portrait; kSlide is refused
  int head = 0;              // query head worked by hand
  int precision = 4;         // decimals in the answer key
  std::string variant;       // printed on handout and key so they can be matched, e.g. "seed 7"
};

// The narration of query row `query` (every stage's arithmetic with the trace's numbers), for
// the key's worked solutions. core/explain writes it; render does not depend on explain, so the
// caller passes it in. Returns "" and sets error when it cannot.
using NarrateQuery = std::function<std::string(int query, std::string& error)>;

// "" when a worksheet can be made from the trace, else what is wrong (naming --head, or saying
// the scenario is too large to work by hand).
std::string check_worksheet(const AttentionTrace& trace, const WorksheetOptions& options);

// The handout's PDF bytes.
bool render_worksheet(const AttentionTrace& trace, const WorksheetOptions& options,
                      std::string& bytes, std::string& error);
// The answer key's PDF bytes.
bool render_answer_key(const AttentionTrace& trace, const WorksheetOptions& options,
                       const NarrateQuery& narrate, std::string& bytes, std::string& error);

// A lesson step's figure on the handout: the stage of the step's trace as the exporter draws it,
// with the cells the question asks about left blank and marked "?".
struct SheetFigure {
  const AttentionTrace* trace = nullptr;  // null: no figure, unless `model` holds one
  // A step about a model rather than a scenario (a seq2seq translation's alignment, a language
  // model's head) draws this instead (core/lessons/model_figures.h); nothing is concealed in it.
  std::optional<LabelledMatrix> model;
  bool drawn() const { return trace || model; }
  StageId stage = StageId::kWeights;
  int head = 0;  // query head, as HeatmapOptions::head
  // Decimals in the cells: a lesson step's own (LessonStep::decimals), as the class saw them.
  int precision = 2;
  // Per cell of the stage's matrix, row-major: nonzero = blank with "?"; empty = none.
  std::vector<uint8_t> concealed;
  // Leave the subtitle's head numbers and shape out (a question asks about them).
  bool hide_shape = false;
  // A label that writes the answer (a colour-bar tick, a note): left out. Null = none.
  std::function<bool(const std::string&)> tells;
};

// One figure alone on a white picture of width × height (page units; each side 100 to 8192), as
// large as fits, with what it conceals blank and any label that tells left out: class mode's
// picture of a lesson step. sheet_figure_page gives the items (tests read them).
bool sheet_figure_page(const SheetFigure& figure, double width, double height,
                       const TextEngine& text, ScenePage& page, std::string& error);
bool render_sheet_figure(const SheetFigure& figure, int width, int height, ImageFormat format,
                         std::string& bytes, std::string& error);

// A lesson's questions as a worksheet (worksheet --lesson): render does not know lessons, so the
// caller reads each question, its options and its answer from the lesson's traces.
struct SheetQuestion {
  std::string step_title;            // the lesson step the question belongs to
  std::vector<std::string> context;  // the step's text, printed before the question
  std::string formula;
  // The scenario to print Q, K and V of before the question (null: the previous one still holds,
  // or the question needs no table); `setup` says which example and settings it is.
  const AttentionTrace* tables = nullptr;
  int head = 0;
  std::string setup;
  SheetFigure figure;
  // Printed in place of a figure when the step's material is a view no exporter draws (e.g. a
  // language model's), so the sheet says why there is none.
  std::string no_figure;
  std::string prompt;
  std::vector<std::string> options;  // to pick from, lettered A, B, …; empty = write the answer
  std::string answer, explanation;   // the key's
};
struct LessonSheet {
  std::string title, summary;
  std::vector<SheetQuestion> questions;
};
// The handout (key = false) or the answer key (key = true) of a lesson's questions, as PDF.
// The handout prints each question's figure with its answer blank; the key prints the answers
// (no figures), every text at least kKeyMinFont.
bool render_lesson_sheet(const LessonSheet& sheet, const WorksheetOptions& options, bool key,
                         std::string& bytes, std::string& error);
// The same pages as scenes (what the PDF draws): tests read their text and font sizes. Each
// question's figure items carry the class "figure-N" (N from 1) after their own.
bool lesson_sheet_pages(const LessonSheet& sheet, const WorksheetOptions& options, bool key,
                        std::vector<ScenePage>& pages, std::string& error);

// The smallest text an answer key prints, in points: a key is read at arm's length while
// marking.
constexpr double kKeyMinFont = 10;

// The largest shapes a worksheet takes: rows, keys and dimensions each at most this.
constexpr int kWorksheetMaxSize = 8;

// A token on a worksheet is a label of a grid and a word in the worked arithmetic: longer tokens
// are cut to this many bytes with "…" before anything is laid out, so a sheet's time and size do
// not grow with a token's length (docs/robustness.md). Paragraphs are cut at the second limit.
constexpr size_t kWorksheetMaxTokenBytes = 40;
constexpr size_t kWorksheetMaxParagraphBytes = 8000;
// The trace's query and key tokens cut to kWorksheetMaxTokenBytes: what every worksheet (and its
// key's narration) is made from.
void clip_worksheet_tokens(AttentionTrace& trace);

}  // namespace attn
