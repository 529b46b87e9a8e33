// A lesson's questions as worksheet items (see lesson_sheet.h).
#include "lessons/lesson_sheet.h"

#include <algorithm>
#include <cctype>

#include "attention/format.h"
#include "lessons/model_figures.h"
#include "lessons/question_secret.h"
#include "render/heatmap_view.h"

namespace attn {
namespace {

// Which scenario a question is asked on, in words: the example or file, and the settings that
// change its numbers.
std::string setup_of(const LessonStep& step, const AttentionTrace& t) {
  std::string s = !step.example.empty() ? "Example “" + step.example + "”"
                  : !step.scenario_file.empty()
                      ? "Scenario " + step.scenario_file
                      : "Scenario “" + clip_utf8(step.scenario.name, 100) + "”";
  const std::string mask = mask_summary(t.mask);
  if (!mask.empty()) s += " · " + mask;
  if (t.scale_overridden) s += " · scale " + format_fixed(t.scale, 4, true);
  if (t.temperature != 1.0f) s += " · temperature T = " + format_value(t.temperature);
  if (t.num_heads > 1) s += " · head " + std::to_string(step.head);
  return s;
}

// What a step shows when it opens another view than a stage of its scenario: the seq2seq or the
// language-model window. Its scenario is only what stays behind the window.
std::string other_view(const LessonStep& step) {
  if (!step.seq2seq_model.empty()) return "seq2seq model “" + step.seq2seq_model + "”";
  if (!step.lm_model.empty()) return "language model “" + step.lm_model + "”";
  return "";
}

// The figure of a step: its stage and head as the exporter draws them, with what `secret` hides
// on screen (question_secret.h) blank on paper. The inputs stage is its Q, K, V tables.
SheetFigure figure_of(const LessonStep& step, const AttentionTrace& t,
                      const QuestionSecret& secret) {
  SheetFigure f;
  if (step.stage == StageId::kInputs || !t.find(step.stage)) return f;
  f.trace = &t;
  f.stage = step.stage;
  f.head = std::clamp(step.head, 0, std::max(0, t.num_heads - 1));
  f.precision = shown_decimals(step);
  if (!secret.hides_anything()) return f;
  f.hide_shape = secret.active && (secret.shape || secret.kv_map);
  f.tells = [secret](const std::string& label) { return secret.tells(label); };
  const TraceStep& st = *t.find(step.stage);
  const int index = matrix_index_for(t, st, f.head);
  const Matrix& m = t.head(st, index);
  if (!secret.conceals_stage(step.stage)) return f;
  f.concealed.assign(static_cast<size_t>(m.size()), 0);
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      f.concealed[static_cast<size_t>(i * m.cols() + j)] =
          secret.conceals(step.stage, index, static_cast<int>(i), static_cast<int>(j));
  return f;
}

bool word_at(const std::string& s, size_t at, size_t len) {
  auto letter = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  return (at == 0 || !letter(s[at - 1])) && (at + len >= s.size() || !letter(s[at + len]));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool tells_to_work_the_app(const std::string& text) {
  const std::string s = lower(text);
  for (const char* w : kAppWords) {
    const std::string word = lower(w);
    for (size_t at = s.find(word); at != std::string::npos; at = s.find(word, at + 1))
      if (!std::isalnum(static_cast<unsigned char>(word[0])) || word_at(s, at, word.size()))
        return true;
  }
  return false;
}

std::string paper_wording(const std::string& text) {
  std::string s = text;
  // A parenthesis that points at the app goes: "head 0 (the thumbnail in row L1, …)".
  for (size_t open = s.find(" ("); open != std::string::npos;) {
    const size_t close = s.find(')', open);
    if (close == std::string::npos) break;
    if (tells_to_work_the_app(s.substr(open, close - open + 1))) {
      s.erase(open, close - open + 1);
    } else {
      open = s.find(" (", open + 1);
    }
  }
  // Then each sentence that does; a sentence ends at ". ", "? " or "! " before a capital or a
  // quote, so "et al. (2022)" stays whole.
  std::vector<std::string> sentences;
  size_t from = 0;
  for (size_t k = 0; k + 2 < s.size(); ++k) {
    if ((s[k] == '.' || s[k] == '?' || s[k] == '!') && s[k + 1] == ' ' &&
        (std::isupper(static_cast<unsigned char>(s[k + 2])) || s.compare(k + 2, 3, "“") == 0)) {
      sentences.push_back(s.substr(from, k + 1 - from));
      from = k + 2;
    }
  }
  sentences.push_back(s.substr(from));
  std::string out;
  for (const std::string& sentence : sentences)
    if (!tells_to_work_the_app(sentence)) out += (out.empty() ? "" : " ") + sentence;
  // The picture on paper is a figure, not the app's heatmap.
  for (const auto& [from_word, to_word] :
       {std::pair<std::string, std::string>{"the heatmap", "the figure"}, {"heatmap", "figure"}})
    for (size_t at = out.find(from_word); at != std::string::npos; at = out.find(from_word, at))
      out.replace(at, from_word.size(), to_word);
  return out;
}

SheetFigure lesson_step_figure(const LessonStep& step, const AttentionTrace& trace,
                               const QuestionSecret& hide, std::string& error) {
  if (other_view(step).empty()) return figure_of(step, trace, hide);
  SheetFigure f;
  f.model = model_step_figure(step, error);
  return f;
}

std::optional<LessonSheet> lesson_sheet(const Lesson& lesson, std::vector<AttentionTrace>& traces,
                                        int precision, std::string& error) {
  LessonSheet sheet;
  sheet.title = lesson.title;
  sheet.summary = lesson.summary;
  traces.clear();
  traces.reserve(lesson.steps.size());  // the questions point into it: it must not reallocate
  std::string last_setup;
  // A sheet holds every question: a figure hides its own answer and every later one's it shows.
  const std::vector<QuestionSecret> own = own_secrets(lesson);
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    if (!step.question) continue;
    traces.push_back(lesson_step_trace(step));
    // Tokens as the sheet prints them (labels, options, answers), shortened before any layout.
    clip_worksheet_tokens(traces.back());
    const AttentionTrace& t = traces.back();
    const LessonQuestion& q = *step.question;
    SheetQuestion sq;
    sq.step_title = paper_wording(step.title);
    const QuestionSecret secret = step_secret(lesson, own, i, t, false, nullptr);
    // The step's words as paper can take them: no instructions to work the app, and nothing
    // that writes the answer (the app hides it too until the question is answered).
    for (const std::string& p : step.text) {
      const std::string paper = paper_wording(p);
      if (!paper.empty() && !secret.tells(paper)) sq.context.push_back(paper);
    }
    if (!secret.tells(step.formula)) sq.formula = step.formula;
    sq.head = step.head;
    const std::string view = other_view(step);
    if (!view.empty()) {
      // The step is about a model: its own figure (the alignment plot, the head's weights), not
      // the numbers of the scenario left behind it.
      sq.setup = "The " + view;
      std::string why;
      sq.figure.model = model_step_figure(step, why);
      if (!sq.figure.model)
        sq.no_figure = "(This question is about the " + view + " as the class saw it; " +
                       (why.empty() ? "its figure is not printed." : why) + ")";
      last_setup.clear();
    } else {
      sq.setup = setup_of(step, t);
      // The tables again only when the numbers differ from the previous question's, and always
      // when the step shows its inputs.
      if (sq.setup != last_setup || step.stage == StageId::kInputs) sq.tables = &t;
      last_setup = sq.setup;
      sq.figure = figure_of(step, t, secret);
    }
    sq.prompt = paper_wording(q.prompt);
    for (const std::string& option : question_options(q, t))
      sq.options.push_back(paper_wording(option));
    sq.answer = answer_text(q, t, precision, error);
    if (!error.empty()) {
      error = lesson.path + ": step " + std::to_string(i + 1) + ": " + error;
      return std::nullopt;
    }
    sq.explanation = q.explanation;
    sheet.questions.push_back(std::move(sq));
  }
  if (sheet.questions.empty()) {
    error = lesson.path + " asks no questions";
    return std::nullopt;
  }
  return sheet;
}

}  // namespace attn
