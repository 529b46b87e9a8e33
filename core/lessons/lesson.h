// Lessons: a sequence of steps, each showing one view of a scenario (stage, head, selection,
// masks and scale, highlighted cells) with text, a formula and optionally a question whose answer
// is read from the step's trace. Read from JSON files (docs/lessons.md) with errors that name the
// file, the step and the field; the built-in course lives in data_dir()/lessons/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/scenario.h"

namespace attn {

enum class QuestionKind {
  kNumber,     // type a number; right within `tolerance` of a cell (or property) of the trace
  kKey,        // pick the key a query row weighs most (or least)
  kStatement,  // pick the true statement among several
};

// Where a question's answer comes from in the step's trace: a cell of a stage, or (for numbers)
// a property of the trace. Never a number written into the lesson, so answers cannot drift from
// what the app computes.
struct AnswerRef {
  std::optional<StageId> stage;  // the stage whose cell holds the answer; none: a property
  int head = 0;                  // index into that stage's heads
  int row = 0, col = 0;          // the cell (col unused by key questions)
  // Instead of a cell: "scale", "d_k", "d_v", "heads", "kv_heads", "n_q", "n_k",
  // "kv_head" (the key/value head query head `head` uses) or "visible_keys" (how many keys row
  // `row` of head `head` may see).
  std::string property;
  bool smallest = false;  // key questions: the least-weighted visible key instead of the most
};

struct Choice {
  std::string text;
  bool correct = false;
};

struct LessonQuestion {
  QuestionKind kind = QuestionKind::kNumber;
  std::string prompt;
  AnswerRef answer;             // kNumber, kKey
  double tolerance = 0.005;     // kNumber: a guess within this of the answer is right
  std::vector<Choice> choices;  // kStatement: exactly one is correct
  std::string explanation;      // shown after answering, and in a worksheet's key
};

// A cell (or with key = -1, a query row) outlined on the main heatmap.
struct Highlight {
  int query = 0;
  int key = -1;
};

struct LessonStep {
  std::string title;
  std::vector<std::string> text;  // paragraphs
  std::string formula;            // shown in large type under the text; "" = none
  // What the step loads: a built-in example, a scenario file (relative to the lesson's folder)
  // or an inline scenario; a step naming none keeps the previous step's. `scenario` is the
  // result with the step's variants applied (validated).
  std::string example, scenario_file;
  bool inline_scenario = false;
  Scenario scenario;
  Scenario base;              // the source before the variants
  std::string variants_json;  // the step's "variants" object as written ("" = none)
  // Opens the seq2seq window on a shipped model (io/shipped.h) and tab ("translate", "live" or
  // "bottleneck"); "" = leave it closed.
  std::string seq2seq_model, seq2seq_tab;
  // Opens the language-model window on a shipped GPT-2-format model (io/shipped.h, kLmModels),
  // the sentence `lm_text` and a tab ("model", "heads", "block", "next", "roles", "sinks" and
  // "induction" (the roles tab on that score), "circuit", "circuit-why" or "kv"); "" = leave it
  // closed.
  std::string lm_model, lm_text, lm_tab;
  // …and what it points at: the layer and head of the head view (-1 = leave the window's), and
  // the token whose lines, circuit and next-token prediction are shown (-1 = the last token).
  // Checked against the model when the step opens (core/lessons does not load models).
  int lm_layer = -1, lm_head = -1, lm_position = -1;
  // "stepper": instead of the model's window, the step opens head (lm_layer, lm_head) in the
  // stepper at this stage (e.g. rope) once the model has run, with its real Q, K and V. Such a
  // step's question is a statement (the numbers on screen are the head's, not the step's own).
  // lm_tab then names the stage's view ("angles", "turned" or "distance" for rope; "" = the
  // user's).
  std::optional<StageId> lm_stepper;
  // The decimals of the heatmap's cells while the step is on screen (-1 = the user's setting);
  // also the precision the step's question is checked for near-ties at (kLessonDecimals when -1).
  int decimals = -1;
  StageId stage = StageId::kInputs;  // the stage on screen
  int head = 0;
  int select_query = -1, select_key = -1;  // -1 = no selection / the whole row
  std::vector<Highlight> highlights;
  std::optional<LessonQuestion> question;
};

// The decimals the heatmap shows by default (the app's setting): questions are checked at it.
constexpr int kLessonDecimals = 2;
inline int shown_decimals(const LessonStep& s) {
  return s.decimals >= 0 ? s.decimals : kLessonDecimals;
}

// Limits on what a lesson file may hold (docs/robustness.md, docs/lessons.md): the loader refuses
// more with an error naming the field and the step, so a lesson costs a bounded amount of memory
// and time to read, draw and print. Strings are counted in bytes of UTF-8.
constexpr uint64_t kMaxLessonFileBytes = 4 * 1024 * 1024;  // the file
constexpr size_t kMaxLessonSteps = 500;                    // steps in a lesson
constexpr size_t kMaxLessonTitleBytes = 200;               // the lesson's and each step's title
constexpr size_t kMaxLessonLineBytes = 1000;   // summary, formula, prompt, choice, names, lm.text
constexpr size_t kMaxLessonTextBytes = 4000;   // one paragraph of text, an explanation
constexpr size_t kMaxLessonParagraphs = 50;    // paragraphs in a step's text
constexpr size_t kMaxLessonChoices = 10;       // choices of a statement question
constexpr size_t kMaxLessonHighlights = 1000;  // highlighted cells of a step
// What the steps' scenarios may hold together (each step keeps its scenario and the one before
// its variants; a step that names none copies the previous one): Q, K, V, projections and
// tokens, in bytes. And each step's trace, checked when the lesson is read, at most this many
// cells per stage (H·n_q·n_k).
constexpr uint64_t kMaxLessonScenarioBytes = 256ull * 1024 * 1024;
constexpr long long kMaxLessonTraceCells = 1LL << 20;

struct Lesson {
  std::string title, summary;
  std::string path;  // the file it was read from ("" = not from a file)
  std::vector<LessonStep> steps;
};

// Parses a lesson; `path` names it in messages and anchors relative scenario files. Every step is
// checked against its own trace (stage, head, selection, highlights, the question's cell), and
// its question for a fair answer at the decimals shown (fair_at_precision). On failure returns
// nullopt with `error` naming the file, the step (number and title) and the field.
std::optional<Lesson> parse_lesson(const std::string& text, const std::string& path,
                                   std::string& error);
std::optional<Lesson> load_lesson_file(const std::string& path, std::string& error);

// The built-in course: data_dir()/lessons/*.json in file-name order.
struct LessonInfo {
  std::string path, title, summary;
};
std::vector<LessonInfo> list_course(std::string& error);

// The step's trace, computed by the staged CPU engine (what the app and the CLI show).
AttentionTrace lesson_step_trace(const LessonStep& step);
// The same for any scenario.
AttentionTrace scenario_trace(const Scenario& scenario);

// The right answer, read from `trace`: a number (kNumber), a key index (kKey) or a choice index
// (kStatement). nullopt with `error` when the trace does not hold it (e.g. it was edited into
// another shape, or the answer cell is hidden).
std::optional<double> number_answer(const LessonQuestion& q, const AttentionTrace& trace,
                                    std::string& error);
std::optional<int> key_answer(const LessonQuestion& q, const AttentionTrace& trace,
                              std::string& error);
int statement_answer(const LessonQuestion& q);
// Whether the question has one clear answer when the numbers are shown with `decimals` decimals:
// a key question's winner beats the runner-up by at least one unit of the last decimal (so the
// two never show the same number), and a number question's answer is not on a rounding edge
// (within a twentieth of a unit of …5, where working with the rounded numbers on screen could
// give either neighbour) unless its tolerance accepts both. "" when fair, else why not.
std::string unfair_at_precision(const LessonQuestion& q, const AttentionTrace& trace, int decimals);

// A student's answer, checked: right or not, and feedback in words (the right answer, how far off
// a number was, then the explanation). `guess` is the number typed, the key index or the choice.
struct AnswerVerdict {
  bool correct = false;
  std::string feedback;
};
AnswerVerdict check_number(const LessonQuestion& q, const AttentionTrace& trace, double guess,
                           int precision = 4);
AnswerVerdict check_choice(const LessonQuestion& q, const AttentionTrace& trace, int guess);

// The right answer in words ("0.5400", "“is”", "B. …"), for answer keys; "" with `error` when
// the trace does not hold it.
std::string answer_text(const LessonQuestion& q, const AttentionTrace& trace, int precision,
                        std::string& error);
// The options a student picks from: key tokens for kKey, the statements for kStatement.
std::vector<std::string> question_options(const LessonQuestion& q, const AttentionTrace& trace);

// Appends a step to the lesson file at `path` (created with `title` when missing), keeping
// everything else the file holds; written atomically. The step is checked first.
bool append_step_to_file(const std::string& path, const std::string& title,
                         const std::string& step_json, std::string& error);

// A step as JSON for the current view of a scenario: the example by name when `scenario` is the
// example with masks, scale and temperature as "variants", else the scenario inline.
std::string step_json_for_view(const std::string& title, const Scenario& scenario,
                               const std::string& example, StageId stage, int head,
                               int select_query, int select_key);

}  // namespace attn
