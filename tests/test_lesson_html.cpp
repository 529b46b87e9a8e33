// A lesson as one web page (lessons/lesson_html.h): everything a lesson writes is escaped (a
// 30,000-character title, control characters, "</script>" and "<!--" in its words and its
// question), no page of the built-in course names anything outside itself, and no question's
// answer is on its step's page (text or figure) before it is answered, while the figure shown
// after answering holds it. Expected answers are read from the step's trace by the test itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "course.h"
#include "lessons/lesson.h"
#include "lessons/lesson_html.h"

namespace attn {
namespace {

using nlohmann::json;

std::string page_of(const Lesson& lesson) {
  std::string html, error;
  EXPECT_TRUE(lesson_html(lesson, {"9.9.9"}, html, error)) << lesson.title << ": " << error;
  return html;
}

// The built-in course's pages, made once.
const std::vector<std::pair<Lesson, std::string>>& course_pages() {
  static const std::vector<std::pair<Lesson, std::string>> pages = [] {
    std::vector<std::pair<Lesson, std::string>> out;
    for (Lesson& l : test::built_in_course()) {
      std::string html = page_of(l);
      out.emplace_back(std::move(l), std::move(html));
    }
    return out;
  }();
  return pages;
}

// The text between `open` and the next `close` after it, from `from`.
std::string between(const std::string& s, const std::string& open, const std::string& close,
                    size_t from = 0) {
  const size_t a = s.find(open, from);
  if (a == std::string::npos) return "";
  const size_t b = s.find(close, a + open.size());
  return b == std::string::npos ? "" : s.substr(a + open.size(), b - a - open.size());
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Markup out, the five character references back: the text a reader (or a search) finds.
std::string text_of(const std::string& markup) {
  std::string out;
  bool tag = false;
  for (char c : markup) {
    if (c == '<') tag = true;
    if (!tag) out += c;
    if (c == '>') {
      tag = false;
      out += ' ';
    }
  }
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + 1))
      out.replace(at, from.size(), to);
  return out;
}

// Step i's <section> (1-based) with its <template> of the revealed figure cut out: what the page
// shows before the step's question is answered; and that template alone.
std::string section(const std::string& html, size_t i) {
  return between(html, "<section class=\"step", "</section>",
                 html.find("id=\"step-" + std::to_string(i) + "\"") - 40);
}
std::string before_answer(const std::string& sec) {
  std::string s = sec;
  const size_t a = s.find("<template"), b = s.find("</template>");
  if (a != std::string::npos && b != std::string::npos) s.erase(a, b + 11 - a);
  return s;
}
std::string revealed(const std::string& sec) {
  return between(sec, "<template class=\"revealed\">", "</template>");
}

std::string fixed(double x, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, x);
  std::string s = text;
  if (s[0] == '-') s.replace(0, 1, "−");  // the exporter's minus
  return s;
}

Lesson hostile_lesson() {
  const json j = {{"format", "attention-lab-lesson"},
                  {"version", 1},
                  {"title", "Hostile"},
                  {"steps",
                   {{{"title", "One"},
                     {"example", "fear-is"},
                     {"stage", "weights"},
                     {"text", {"plain"}},
                     {"question",
                      {{"kind", "statement"},
                       {"prompt", "Which?"},
                       {"choices", {{{"text", "yes"}, {"correct", true}}, {{"text", "no"}}}},
                       {"explanation", "because"}}}}}}};
  std::string error;
  std::optional<Lesson> l = parse_lesson(j.dump(), "hostile.json", error);
  EXPECT_TRUE(l) << error;
  // Past what the loader accepts: the writer must not depend on the loader's limits.
  std::string title;
  while (title.size() < 30000) title += "T<i>&\"'";
  l->title = title;
  LessonStep& s = l->steps[0];
  s.title = "</script><script>alert(1)</script>";
  s.text = {"<!-- <script>x</script> \x01\x1b[31m\x7f \xC2\x85 bad \xFF\xFE utf8",
            "line\xE2\x80\xA8separator"};
  s.formula = "a < b && c > d";
  s.question->prompt = "Which </SCRIPT> <!-- is \x02 true?";
  s.question->choices[0].text = "</script><!--";
  s.question->explanation = "</script> ends nothing \xE2\x80\xA9 here <!-- -->";
  return *l;
}

TEST(LessonHtml, HostileTextIsEscapedEverywhere) {
  const Lesson lesson = hostile_lesson();
  const std::string html = page_of(lesson);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // Exactly the page's two scripts, however often the lesson writes "</script>".
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(count(lower, "<script"), 2u);
  EXPECT_EQ(count(lower, "</script"), 2u);
  // The template's own comment is the only one.
  EXPECT_EQ(count(html, "<!--"), 1u);
  EXPECT_EQ(count(html, "<section"), count(html, "</section>"));
  EXPECT_EQ(count(html, "<div"), count(html, "</div>"));
  // No control character but newline and tab; no byte that is not UTF-8 (U+FFFD instead).
  for (unsigned char c : html) EXPECT_FALSE((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f);
  EXPECT_EQ(html.find("\xFF"), std::string::npos);
  EXPECT_EQ(html.find("\xC2\x85"), std::string::npos);  // C1 control NEL
  EXPECT_NE(html.find("\xEF\xBF\xBD"), std::string::npos);
  // The words are on the page as text.
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;!-- &lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("a &lt; b &amp;&amp; c &gt; d"), std::string::npos);
  EXPECT_NE(html.find("Which &lt;/SCRIPT&gt; &lt;!-- is  true?"), std::string::npos);
  // The 30,000-character title whole in the bar, escaped, and cut in the tab's <title>.
  EXPECT_NE(html.find(html_escape(lesson.title)), std::string::npos);
  EXPECT_LT(between(html, "<title>", "</title>").size(), 1500u);
  // The script's data: no < > & at all, U+2028/9 escaped, and it reads back as the lesson wrote.
  const std::string data =
      between(html, "<script id=\"lesson-data\" type=\"application/json\">", "</script>");
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.find_first_of("<>&"), std::string::npos);
  EXPECT_EQ(data.find("\xE2\x80\xA9"), std::string::npos);
  const json d = json::parse(data);
  EXPECT_EQ(d["steps"][0]["question"]["explanation"],
            "</script> ends nothing \xE2\x80\xA9 here <!-- -->");
}

TEST(LessonHtml, EscapingHelpers) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(page_text(std::string("a\0b\x1f"
                                  "c\td\ne\x7f",
                                  11)),
            "abc\td\ne");
  EXPECT_EQ(page_text("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // a cut sequence
  EXPECT_EQ(page_text("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(page_text("é€😀"), "é€😀");
  EXPECT_EQ(script_safe_json("{\"a\":\"</script><!--&\xE2\x80\xA8\"}"),
            "{\"a\":\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\"}");
}

// The first thing in `html` that names something outside the page, case-insensitively: a scheme
// (http:, https:, ftp:, ws:, wss:), a "//host.tld/" address, <link, <iframe, @import or a src=
// attribute; "" when there is none. A plain scan: std::regex took minutes under the sanitizers.
std::string outside_reference(const std::string& html) {
  std::string low = html;
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (const char* what : {"http:", "https:", "ftp:", "ws:", "wss:", "<link", "<iframe", "@import"})
    if (const size_t at = low.find(what); at != std::string::npos)
      return html.substr(at, 40) + " at " + std::to_string(at);
  for (size_t at = low.find("src="); at != std::string::npos; at = low.find("src=", at + 1))
    if (at == 0 || !word(low[at - 1])) return html.substr(at, 40) + " at " + std::to_string(at);
  // "//", a host of letters, digits, dots and hyphens whose last dot is followed by two or more
  // letters, then "/".
  for (size_t at = low.find("//"); at != std::string::npos; at = low.find("//", at + 1)) {
    size_t end = at + 2;
    while (end < low.size() && (std::isalnum(static_cast<unsigned char>(low[end])) ||
                                low[end] == '.' || low[end] == '-'))
      ++end;
    if (end >= low.size() || low[end] != '/') continue;
    const std::string host = low.substr(at + 2, end - at - 2);
    const size_t dot = host.rfind('.');
    if (dot == std::string::npos || host.size() - dot - 1 < 2) continue;
    if (std::all_of(host.begin() + static_cast<long>(dot) + 1, host.end(),
                    [](unsigned char c) { return std::isalpha(c); }))
      return html.substr(at, 40) + " at " + std::to_string(at);
  }
  return "";
}

TEST(LessonHtml, TheOutsideScanFindsWhatItLooksFor) {
  for (const char* bad : {"<a href=\"HTTPS://x\">", "see ftp:files", "new WebSocket('wss:a')",
                          "<LINK rel=x>", "<iframe>", "@IMPORT 'x'", "<img src='a'>",
                          "fetch('//cdn.example.com/x')", "x //a-b.c.de/ y"})
    EXPECT_NE(outside_reference(bad), "") << bad;
  for (const char* good : {"<svg><path d=\"M0 0\"/></svg>", "a // comment", "img_src=1", "//x.1/ y",
                           "//localhost/ y", "<a href=\"#step-2\">"})
    EXPECT_EQ(outside_reference(good), "") << good;
}

TEST(LessonHtml, NoPageOfTheCourseNamesAnythingOutsideItself) {
  ASSERT_GE(course_pages().size(), 13u);
  for (const auto& [lesson, html] : course_pages()) {
    EXPECT_EQ(outside_reference(html), "") << lesson.title;
    // Every url(#…) and href="#…" points into the page.
    for (const char* ref : {"url(", "href=\""}) {
      for (size_t at = html.find(ref); at != std::string::npos; at = html.find(ref, at + 1))
        EXPECT_TRUE(html.compare(at + std::string(ref).size(), 1, "#") == 0 ||
                    html.compare(at + std::string(ref).size(), 5, "data:") == 0)
            << lesson.title << ": " << html.substr(at, 40);
    }
    EXPECT_NE(html.find("Attention Lab 9.9.9"), std::string::npos) << lesson.title;
    EXPECT_EQ(count(html, "<section class=\"step"), lesson.steps.size()) << lesson.title;
  }
}

// The right answer of a number or key question, read from the step's trace here (not from the
// page): the cell or property, or the key the row weighs most (least), and the row's numbers.
struct Expected {
  std::optional<double> number;
  std::vector<double> row;  // a key question's row (its visible cells)
  bool on_figure = false;   // the answer is a cell of the stage the step shows
};

// Whether a later step of `lesson` asks about row `row` of `stage` too: the step's figure keeps
// that row hidden even after its own question is answered (a later answer would show).
bool later_asks(const Lesson& lesson, size_t i, StageId stage, int row) {
  for (size_t j = i + 1; j < lesson.steps.size(); ++j) {
    const auto& q = lesson.steps[j].question;
    if (q && q->answer.stage &&
        (*q->answer.stage == stage ||
         (stage == StageId::kWeights && *q->answer.stage == StageId::kOutput) ||
         *q->answer.stage == StageId::kWeights) &&
        q->answer.row == row)
      return true;
    if (q && q->answer.property == "visible_keys" && q->answer.row == row) return true;
  }
  return false;
}

// `v` as the figure may print it at `d` decimals: a float a hair from a rounding edge may print
// either neighbour.
bool prints(const std::string& text, double v, int d) {
  const double unit = std::pow(10.0, -d);
  for (double x : {v, v - 0.01 * unit, v + 0.01 * unit}) {
    char s[64];
    std::snprintf(s, sizeof s, "%.*f", d, x);
    std::string t = s;
    if (t[0] == '-') t.replace(0, 1, "−");
    if (text.find(t) != std::string::npos) return true;
  }
  return false;
}

Expected expected_answer(const LessonStep& step) {
  Expected e;
  const LessonQuestion& q = *step.question;
  const AttentionTrace t = lesson_step_trace(step);
  const AnswerRef& a = q.answer;
  if (q.kind == QuestionKind::kStatement) return e;
  if (!a.stage) {
    if (a.property == "scale") e.number = t.scale;
    return e;  // whole-number properties: written everywhere as digits, checked in words below
  }
  const Matrix& m = t.head(*a.stage, a.head);
  e.on_figure = *a.stage == step.stage && a.head == step.head && step.lm_model.empty() &&
                step.seq2seq_model.empty() &&
                !(hides_keys(*a.stage) && t.hidden_of(a.head)(a.row, a.col));
  if (q.kind == QuestionKind::kNumber) {
    e.number = m(a.row, a.col);
  } else {
    for (int j = 0; j < m.cols(); ++j)
      if (std::isfinite(m(a.row, j)) && !(*a.stage == StageId::kWeights && m(a.row, j) == 0))
        e.row.push_back(m(a.row, j));
  }
  return e;
}

TEST(LessonHtml, NoAnswerOnItsStepBeforeItIsAnswered) {
  int numbers = 0, rows = 0, revealed_checked = 0;
  for (const auto& [lesson, html] : course_pages()) {
    for (size_t i = 0; i < lesson.steps.size(); ++i) {
      const LessonStep& step = lesson.steps[i];
      if (!step.question) continue;
      const std::string where = lesson.title + ", step " + std::to_string(i + 1);
      const std::string sec = section(html, i + 1);
      ASSERT_FALSE(sec.empty()) << where;
      const std::string shown = text_of(before_answer(sec));
      const std::string after = text_of(revealed(sec));
      // No verdict and no explanation before answering, whatever the kind.
      EXPECT_EQ(shown.find("The answer: "), std::string::npos) << where;
      EXPECT_EQ(shown.find("Right:"), std::string::npos) << where;
      if (step.question->explanation.size() > 20) {
        EXPECT_EQ(shown.find(step.question->explanation), std::string::npos) << where;
      }
      const Expected e = expected_answer(step);
      const int decimals = shown_decimals(step);
      if (e.number) {
        ++numbers;
        for (int d : {decimals, 4}) {
          EXPECT_EQ(shown.find(fixed(*e.number, d)), std::string::npos)
              << where << ": the answer " << fixed(*e.number, d) << " is on the page";
        }
        if (e.on_figure &&
            !later_asks(lesson, i, *step.question->answer.stage, step.question->answer.row)) {
          ++revealed_checked;
          EXPECT_TRUE(prints(after, *e.number, decimals))
              << where << ": the revealed figure lacks " << fixed(*e.number, decimals);
        }
      }
      if (!e.row.empty() && e.on_figure &&
          !later_asks(lesson, i, *step.question->answer.stage, step.question->answer.row)) {
        ++rows;
        for (double v : e.row) {
          EXPECT_EQ(shown.find(fixed(v, decimals)), std::string::npos)
              << where << ": the key question's row shows " << fixed(v, decimals);
          EXPECT_TRUE(prints(after, v, decimals))
              << where << ": the revealed row lacks " << fixed(v, decimals);
        }
      }
    }
  }
  // The course asks enough of each kind for this to mean something.
  EXPECT_GE(numbers, 10);
  EXPECT_GE(rows, 3);
  EXPECT_GE(revealed_checked, 4);
}

TEST(LessonHtml, QuestionDataFollowsThePlayersRules) {
  // Lesson 05's step 2 asks score(Fear, Fear) = 0.2×0.3 + 0.1×0.5 + 0.8×0.2 = 0.27 (by hand).
  for (const auto& [lesson, html] : course_pages()) {
    if (lesson.path.find("05-fear-is-by-hand") == std::string::npos) continue;
    const json d = json::parse(
        between(html, "<script id=\"lesson-data\" type=\"application/json\">", "</script>"));
    const json& q = d["steps"][1]["question"];
    EXPECT_EQ(q["kind"], "number");
    EXPECT_NEAR(q["answer"].get<double>(), 0.27, 1e-6);
    EXPECT_NEAR(q["tol"].get<double>(), 0.005, 1e-6);  // the lesson's default tolerance
    EXPECT_EQ(q["right"].get<std::string>().rfind("Right: 0.2700.", 0), 0u);
    // Before answering, no row of the step may show its working; after, row 1 ("is") may.
    const json& w = d["steps"][1]["working"];
    ASSERT_TRUE(w.is_object());
    EXPECT_EQ(w["before"], json::array({false, false}));
    EXPECT_EQ(w["after"][1], true);
    return;
  }
  FAIL() << "lesson 05 is not in the course";
}

}  // namespace
}  // namespace attn
