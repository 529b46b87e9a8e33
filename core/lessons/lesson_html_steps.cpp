// The steps of a lesson's web page (see lesson_html.h): each step's figure before and after its
// question is answered, its inputs as tables, the question's data for the page's script (checked
// by the lesson player's rules) and the worked arithmetic of each cell.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "attention/format.h"
#include "explain/explain.h"
#include "lessons/lesson_html.h"
#include "lessons/lesson_sheet.h"
#include "lessons/question_secret.h"
#include "render/heatmap_view.h"
#include "render/scene.h"
#include "render/worksheet.h"

namespace attn {
namespace {

using nlohmann::json;

// The figure's page, as class mode's picture (960 × 600): wide enough for a projector, and the
// browser scales it to a phone.
constexpr int kFigureW = 960, kFigureH = 600;
// The decimals the page checks a typed number at and writes its answer with: the app's default.
constexpr int kAnswerPrecision = 4;
// Cells whose arithmetic is written into the page (beyond, the figure has no hover working).
constexpr long kMaxWorkedCells = 400;

std::string source_of(const LessonStep& step, const AttentionTrace& t) {
  if (!step.lm_model.empty()) {
    std::string s =
        "Language model “" + step.lm_model + "” on “" + clip_utf8(step.lm_text, 200) + "”";
    if (step.lm_layer >= 0) s += ", layer " + std::to_string(step.lm_layer);
    if (step.lm_head >= 0) s += ", head " + std::to_string(step.lm_head);
    return s;
  }
  if (!step.seq2seq_model.empty()) return "Seq2seq model “" + step.seq2seq_model + "”";
  std::string s = !step.example.empty()         ? "Example “" + step.example + "”"
                  : !step.scenario_file.empty() ? "Scenario " + step.scenario_file
                                                : "Scenario “" + clip_utf8(t.name, 200) + "”";
  const std::string mask = mask_summary(t.mask);
  if (!mask.empty()) s += " · " + mask;
  if (t.num_heads > 1) s += " · head " + std::to_string(step.head);
  return s;
}

// Inline SVG from the exporter's SVG file: no XML declaration or namespace URLs (HTML gives an
// inline <svg> its namespace), ids prefixed so several figures on one page keep their own
// glyphs, and transparent cells on top that the page's script listens to.
std::string inline_svg(std::string svg, const std::string& prefix, const ScenePage& page,
                       const std::string& label, const std::string& box) {
  const size_t start = svg.find("<svg");
  if (start != std::string::npos) svg.erase(0, start);
  for (const char* ns :
       {" xmlns=\"http://www.w3.org/2000/svg\"", " xmlns:xlink=\"http://www.w3.org/1999/xlink\""}) {
    const size_t at = svg.find(ns);
    if (at != std::string::npos) svg.erase(at, std::string(ns).size());
  }
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"id=\"", "id=\"" + prefix},
                                 {"href=\"#", "href=\"#" + prefix},
                                 {"url(#", "url(#" + prefix}})
    for (size_t at = svg.find(from); at != std::string::npos; at = svg.find(from, at + to.size()))
      svg.replace(at, from.size(), to);
  svg.insert(4, " role=\"img\" aria-label=\"" + html_escape(label) + "\"");
  // The picture's own extent, not the whole page it was centred on: it fills a phone's width.
  const size_t view = svg.find("viewBox=\"");
  const size_t view_end = view == std::string::npos ? view : svg.find('"', view + 9);
  if (view_end != std::string::npos)
    svg.replace(view, view_end + 1 - view, "viewBox=\"" + box + "\"");
  std::string hits = "<g class=\"hits\">\n";
  for (const SceneItem& it : page.items) {
    if (it.row < 0 || it.col < 0 || it.cls.rfind("cell", 0) != 0) continue;
    hits += "<rect class=\"hit\" data-row=\"" + std::to_string(it.row) + "\" data-col=\"" +
            std::to_string(it.col) + "\" x=\"" + std::to_string(it.rect.x) + "\" y=\"" +
            std::to_string(it.rect.y) + "\" width=\"" + std::to_string(it.rect.w) + "\" height=\"" +
            std::to_string(it.rect.h) + "\"/>\n";
  }
  const size_t end = svg.rfind("</svg>");
  if (end != std::string::npos) svg.insert(end, hits + "</g>\n");
  return page_text(svg);
}

// "x y w h" around what the page draws (its white background left out), with a small margin.
std::string content_box(const ScenePage& page, const TextEngine& text) {
  double x0 = page.width, y0 = page.height, x1 = 0, y1 = 0;
  auto add = [&](double ax, double ay, double bx, double by) {
    x0 = std::min(x0, ax);
    y0 = std::min(y0, ay);
    x1 = std::max(x1, bx);
    y1 = std::max(y1, by);
  };
  for (const SceneItem& it : page.items) {
    if (it.cls == "background") continue;
    switch (it.kind) {
      case SceneItem::Kind::kText: {
        const double w = text.width(it.text, it.font);
        const double left = it.anchor == TextAnchor::kStart    ? it.x
                            : it.anchor == TextAnchor::kMiddle ? it.x - w / 2
                                                               : it.x - w;
        if (it.angle != 0) {  // slanted labels: their whole reach either way
          add(it.x - w, it.y - w, it.x + w, it.y + text.descent(it.font));
        } else {
          add(left, it.y - text.ascent(it.font), left + w, it.y + text.descent(it.font));
        }
        break;
      }
      case SceneItem::Kind::kParagraph:
        add(it.x, it.y, it.x + std::min(it.wrap, text.width(it.text, it.font)),
            it.y + text.paragraph_height(it.text, it.font, it.wrap, it.line_spacing, it.hang));
        break;
      case SceneItem::Kind::kLine:
        add(std::min(it.x, it.x2), std::min(it.y, it.y2), std::max(it.x, it.x2),
            std::max(it.y, it.y2));
        break;
      case SceneItem::Kind::kPolyline:
        for (size_t k = 0; k + 1 < it.points.size(); k += 2)
          add(it.points[k], it.points[k + 1], it.points[k], it.points[k + 1]);
        break;
      default:
        add(it.rect.x, it.rect.y, it.rect.right(), it.rect.bottom());
    }
  }
  if (x1 <= x0 || y1 <= y0)
    return "0 0 " + std::to_string(static_cast<int>(page.width)) + " " +
           std::to_string(static_cast<int>(page.height));
  const double m = 12;
  x0 = std::max(0.0, std::floor(x0 - m));
  y0 = std::max(0.0, std::floor(y0 - m));
  x1 = std::min(page.width, std::ceil(x1 + m));
  y1 = std::min(page.height, std::ceil(y1 + m));
  char out[96];
  std::snprintf(out, sizeof out, "%g %g %g %g", x0, y0, x1 - x0, y1 - y0);
  return out;
}

// Q, K and V of the step's head as tables (a step on its inputs), with what `hide` conceals as
// "?"; "" when the question hides the shapes they would show.
std::string input_tables(const LessonStep& step, const AttentionTrace& t,
                         const QuestionSecret& hide) {
  if (hide.active && (hide.shape || hide.kv_map)) return "";
  std::string out;
  const std::pair<StageId, const char*> parts[] = {
      {StageId::kQ, "Q"}, {StageId::kK, "K"}, {StageId::kV, "V"}};
  for (const auto& [id, name] : parts) {
    const TraceStep* st = t.find(id);
    if (!st) continue;
    const int index =
        matrix_index_for(t, *st, std::clamp(step.head, 0, std::max(0, t.num_heads - 1)));
    const Matrix& m = t.head(*st, index);
    const std::vector<std::string>& rows =
        id == StageId::kQ ? t.query_tokens
                          : (t.input_key_tokens.empty() ? t.key_tokens : t.input_key_tokens);
    out += "<table class=\"inputs\"><caption>" + std::string(name) + "</caption>\n";
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const std::string label = i < static_cast<Eigen::Index>(rows.size())
                                    ? rows[static_cast<size_t>(i)]
                                    : std::to_string(i);
      out += "<tr><th>" + html_escape(clip_utf8(label, 40)) + "</th>";
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        out += "<td>" +
               (hide.conceals(id, index, static_cast<int>(i), static_cast<int>(j))
                    ? std::string("?")
                    : format_fixed(m(i, j), shown_decimals(step), true)) +
               "</td>";
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

// The question as the page's script checks it: the lesson player's rules (a number within its
// tolerance, at least half a unit of the 4th decimal; the key or statement picked), the right
// answer's words and the lesson's explanation.
json question_data(const LessonQuestion& q, const AttentionTrace& t, std::string& error) {
  json j;
  j["explanation"] = page_text(q.explanation);
  j["text"] = page_text(answer_text(q, t, kAnswerPrecision, error));
  if (!error.empty()) return nullptr;
  j["show"] = page_text("The answer: " + answer_text(q, t, kAnswerPrecision, error) + "." +
                        (q.explanation.empty() ? "" : " " + q.explanation));
  if (q.kind == QuestionKind::kNumber) {
    const std::optional<double> right = number_answer(q, t, error);
    if (!right) return nullptr;
    j["kind"] = "number";
    j["answer"] = *right;
    j["tol"] = std::max(q.tolerance, 0.5 * std::pow(10.0, -kAnswerPrecision)) + 1e-9;
    j["precision"] = kAnswerPrecision;
    j["right"] = page_text(check_number(q, t, *right, kAnswerPrecision).feedback);
    return j;
  }
  const int correct =
      q.kind == QuestionKind::kKey ? key_answer(q, t, error).value_or(-1) : statement_answer(q);
  if (correct < 0) {
    if (error.empty()) error = "the question has no right choice";
    return nullptr;
  }
  j["kind"] = "choice";
  j["correct"] = correct;
  j["right"] = page_text(check_choice(q, t, correct).feedback);
  j["wrong"] = page_text(check_choice(q, t, correct == 0 ? 1 : 0).feedback);
  return j;
}

// Each cell's worked arithmetic as the app's narration writes it for a selected cell of the
// step's stage, and which rows may show it before and after the question is answered.
json working_data(const LessonStep& step, const AttentionTrace& t, const QuestionSecret& before,
                  const QuestionSecret& after) {
  const TraceStep* st = t.find(step.stage);
  if (!st || step.stage == StageId::kInputs) return nullptr;
  const int head = std::clamp(step.head, 0, std::max(0, t.num_heads - 1));
  const Matrix& m = t.head(*st, matrix_index_for(t, *st, head));
  if (m.rows() != t.n_q || static_cast<long>(m.size()) > kMaxWorkedCells) return nullptr;
  json texts = json::array(), cells = json::array(), open_before = json::array(),
       open_after = json::array();
  std::vector<std::string> seen;
  for (int i = 0; i < m.rows(); ++i) {
    json row = json::array();
    for (int j = 0; j < m.cols(); ++j) {
      ExplainRequest r;
      r.query = i;
      r.head = head;
      if (is_query_key(step.stage) && m.cols() == t.n_k) r.key = j;
      r.step = step.stage;
      r.precision = kAnswerPrecision;
      std::string error;
      const std::string text = page_text(explain(t, r, error));
      if (text.empty()) {
        row.push_back(-1);
        continue;
      }
      auto at = std::find(seen.begin(), seen.end(), text);
      if (at == seen.end()) {
        seen.push_back(text);
        texts.push_back(text);
        at = seen.end() - 1;
      }
      row.push_back(at - seen.begin());
    }
    cells.push_back(row);
    open_before.push_back(!before.hides_working(head, i));
    open_after.push_back(!after.hides_working(head, i));
  }
  if (seen.empty()) return nullptr;
  return {{"texts", texts}, {"cells", cells}, {"before", open_before}, {"after", open_after}};
}

// The step's figure as inline SVG with `hide` hidden; "" with `note` when there is none.
std::string figure_svg(const LessonStep& step, const AttentionTrace& t, const QuestionSecret& hide,
                       const TextEngine& text, const std::string& prefix, std::string& note,
                       std::string& error) {
  if (step.stage == StageId::kInputs && step.lm_model.empty() && step.seq2seq_model.empty())
    return input_tables(step, t, hide);
  std::string why;
  const SheetFigure f = lesson_step_figure(step, t, hide, why);
  if (!f.drawn()) {
    note = why.empty() ? "" : "(No figure: " + why + ".)";
    return "";
  }
  ScenePage page;
  std::string svg;
  // A long sentence's rows (a language model's head) get a square page: legible on a phone.
  const bool tall = f.model && f.model->values.rows() > 12;
  if (!sheet_figure_page(f, kFigureW, tall ? kFigureW : kFigureH, text, page, error) ||
      !render_pages({page}, ImageFormat::kSvg, svg, error))
    return "";
  std::string label = "The step's figure";
  if (f.trace) label = std::string(stage_info(f.stage, t).title) + " of " + t.name;
  return inline_svg(std::move(svg), prefix, page, label, content_box(page, text));
}

}  // namespace

std::optional<std::vector<LessonWebStep>> lesson_web_steps(const Lesson& lesson,
                                                           std::string& error) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return std::nullopt;
  const std::vector<QuestionSecret> own = own_secrets(lesson);
  std::vector<LessonWebStep> out;
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    auto fail = [&](const std::string& why) {
      error = "step " + std::to_string(i + 1) + " (“" + clip_utf8(page_text(step.title), 80) +
              "”): " + why;
      return std::nullopt;
    };
    const AttentionTrace t = lesson_step_trace(step);
    // What the figure hides: every later question's answer it holds (the page cannot know which
    // the student has answered when the figure is drawn), and its own until answered.
    const QuestionSecret before = step_secret(lesson, own, i, t, false, nullptr);
    const QuestionSecret after = step_secret(lesson, own, i, t, true, nullptr);
    LessonWebStep w;
    w.source = source_of(step, t);
    const std::string prefix = "s" + std::to_string(i + 1) + "-";
    std::string why;
    w.figure = figure_svg(step, t, before, *text, prefix + "a-", w.note, why);
    if (!why.empty()) return fail(why);
    if (before.active) {
      w.revealed = figure_svg(step, t, after, *text, prefix + "b-", w.note, why);
      if (!why.empty()) return fail(why);
    }
    json d;
    d["question"] = nullptr;
    if (step.question) {
      d["question"] = question_data(*step.question, t, why);
      if (!why.empty()) return fail(why);
    }
    d["working"] = step.lm_model.empty() && step.seq2seq_model.empty()
                       ? working_data(step, t, before, after)
                       : json(nullptr);
    w.data = d.dump(-1, ' ', false, json::error_handler_t::replace);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace attn
