// A lesson as one web page (see lesson_html.h): the page's markup around the steps, escaping, and
// the course's index. The page's styles and script are assets/class/lesson.html, compiled in.
#include "lessons/lesson_html.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>

#include "attention/format.h"
#include "io/atomic_file.h"
#include "io/embedded_assets.h"

namespace attn {
namespace {

// The next code point of UTF-8 `s` at `k` (advancing k), or -1 for a byte that does not start
// a valid sequence (k advances by one).
long next_code_point(const std::string& s, size_t& k) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(k);
  int n = c < 0x80             ? 0
          : (c & 0xE0) == 0xC0 ? 1
          : (c & 0xF0) == 0xE0 ? 2
          : (c & 0xF8) == 0xF0 ? 3
                               : -1;
  if (n <= 0 || k + n >= s.size()) {  // ASCII, a stray byte, or a sequence cut short
    ++k;
    return n == 0 ? c : -1;
  }
  long cp = c & (0x3F >> n);
  for (int i = 1; i <= n; ++i) {
    if ((b(k + i) & 0xC0) != 0x80) {
      ++k;
      return -1;
    }
    cp = (cp << 6) | (b(k + i) & 0x3F);
  }
  static const long kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++k;
    return -1;
  }
  k += n + 1;
  return cp;
}

void append_utf8(std::string& out, long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The template split at its @@NAME@@ places: lesson text never passes through a search for them.
std::string fill(const std::string& tmpl,
                 const std::vector<std::pair<std::string, std::string>>& v) {
  std::string out;
  size_t from = 0;
  while (true) {
    const size_t at = tmpl.find("@@", from);
    const size_t end = at == std::string::npos ? at : tmpl.find("@@", at + 2);
    if (end == std::string::npos) break;
    const std::string name = tmpl.substr(at + 2, end - at - 2);
    bool known = false;
    for (const auto& [key, value] : v)
      if (key == name) {
        out += tmpl.substr(from, at - from) + value;
        known = true;
      }
    if (!known) out += tmpl.substr(from, end + 2 - from);
    from = end + 2;
  }
  return out + tmpl.substr(from);
}

// Class mode's shared styles, from its student page (between its shared-styles markers).
std::string shared_styles() {
  const char* page = embedded_class_page("student.html");
  const std::string s = page ? page : "";
  const std::string begin = "/* shared-styles: begin", end = "/* shared-styles: end */";
  const size_t a = s.find(begin), b = s.find(end);
  if (a == std::string::npos || b == std::string::npos || b < a) return "";
  return s.substr(a, b + end.size() - a);
}

std::string generator(const LessonHtmlOptions& o) {
  return "Attention Lab" + (o.app_version.empty() ? "" : " " + o.app_version);
}

// A stable name for the page's progress in the browser's storage: FNV-1a of the lesson's titles.
std::string storage_id(const Lesson& lesson) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xFF) * 1099511628211ull;
  };
  mix(lesson.title);
  for (const LessonStep& s : lesson.steps) mix(s.title);
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// The glyph outlines of every figure, once: cairo's SVG draws each figure's text from <symbol>s of
// its own, so the same "0" would be in the file once per figure. Each figure's symbols move to one
// table (the same outline → one symbol) and its <use>s point there; a figure revealed later from
// its <template> finds them in the document too.
class GlyphTable {
 public:
  std::string take(std::string svg) {
    std::map<std::string, std::string> renamed;
    for (size_t at = svg.find("<symbol "); at != std::string::npos; at = svg.find("<symbol ", at)) {
      const size_t id = svg.find("id=\"", at), head_end = svg.find('>', at);
      const size_t end = svg.find("</symbol>", at);
      if (id == std::string::npos || head_end == std::string::npos || end == std::string::npos ||
          id > head_end)
        break;
      const std::string old_id = svg.substr(id + 4, svg.find('"', id + 4) - id - 4);
      const std::string body = svg.substr(head_end + 1, end - head_end - 1);
      auto [it, added] = ids_.emplace(body, "g" + std::to_string(ids_.size()));
      if (added)
        symbols_ +=
            "<symbol overflow=\"visible\" id=\"" + it->second + "\">" + body + "</symbol>\n";
      renamed[old_id] = it->second;
      svg.erase(at, end + 9 - at);
    }
    std::string out;
    size_t from = 0;
    for (size_t at = svg.find("href=\"#"); at != std::string::npos; at = svg.find("href=\"#", at)) {
      const size_t q = svg.find('"', at + 7);
      if (q == std::string::npos) break;
      const auto it = renamed.find(svg.substr(at + 7, q - at - 7));
      out += svg.substr(from, at + 7 - from) +
             (it == renamed.end() ? svg.substr(at + 7, q - at - 7) : it->second);
      from = at = q;
    }
    return out + svg.substr(from);
  }
  std::string defs() const {
    return symbols_.empty() ? ""
                            : "<svg class=\"glyphs\" width=\"0\" height=\"0\" aria-hidden=\"true\" "
                              "style=\"position:absolute\"><defs>\n" +
                                  symbols_ + "</defs></svg>\n";
  }

 private:
  std::map<std::string, std::string> ids_;  // outline → shared id
  std::string symbols_;
};

std::string question_html(const LessonQuestion& q, const std::vector<std::string>& options) {
  std::string out =
      "<div class=\"question\">\n<p class=\"prompt\">" + html_escape(q.prompt) + "</p>\n";
  if (q.kind == QuestionKind::kNumber) {
    // Phones' decimal keypads have no minus sign: the ± button gives one (as class mode's page).
    out +=
        "<div class=\"row\"><button type=\"button\" class=\"sign\" aria-label=\"Change the "
        "sign\">±</button><input class=\"number\" inputmode=\"decimal\" autocomplete=\"off\" "
        "aria-label=\"Your answer\" placeholder=\"Your answer, e.g. 0.42\"></div>\n";
  } else {
    const bool lettered = q.kind == QuestionKind::kStatement;
    for (size_t k = 0; k < options.size(); ++k)
      out += "<button type=\"button\" class=\"choice\">" +
             html_escape((lettered ? std::string(1, static_cast<char>('A' + k)) + ". " : "") +
                         clip_utf8(options[k], 1000)) +
             "</button>\n";
  }
  return out +
         "<div class=\"actions\"><button type=\"button\" class=\"check\">Check</button>"
         "<button type=\"button\" class=\"show\">Show answer</button></div>\n"
         "<p class=\"feedback\" aria-live=\"polite\"></p>\n</div>\n";
}

std::string step_html(const Lesson& lesson, size_t i, const LessonWebStep& w) {
  const LessonStep& step = lesson.steps[i];
  const bool figure = !w.figure.empty() || !w.revealed.empty();
  std::string out = "<section class=\"step" + std::string(figure ? " has-figure" : "") +
                    "\" id=\"step-" + std::to_string(i + 1) + "\"" + (i > 0 ? " hidden" : "") +
                    ">\n<p class=\"kicker\">Step " + std::to_string(i + 1) + " of " +
                    std::to_string(lesson.steps.size()) + "</p>\n<h2>" + html_escape(step.title) +
                    "</h2>\n<p class=\"source\">" + html_escape(w.source) + "</p>\n";
  if (i == 0 && !lesson.summary.empty())
    out += "<p class=\"intro\">" + html_escape(lesson.summary) + "</p>\n";
  if (!step.text.empty()) {
    out += "<div class=\"words\">\n";
    for (const std::string& p : step.text) out += "<p>" + html_escape(p) + "</p>\n";
    out += "</div>\n";
  }
  if (!step.formula.empty())
    out += "<div class=\"formula\">" + html_escape(step.formula) + "</div>\n";
  if (figure) {
    out += "<div class=\"figure\"><div class=\"pic\">" + w.figure + "</div>\n";
    if (!w.revealed.empty()) out += "<template class=\"revealed\">" + w.revealed + "</template>\n";
    if (w.data.find("\"working\":{") != std::string::npos)
      out +=
          "<p class=\"note\">Hover over a cell, or tap it, for its arithmetic.</p>\n"
          "<pre class=\"work\" aria-live=\"polite\" hidden></pre>\n";
    out += "</div>\n";
  } else if (!w.note.empty()) {
    out += "<p class=\"note\">" + html_escape(w.note) + "</p>\n";
  }
  if (step.question)
    out += question_html(*step.question, question_options(*step.question, lesson_step_trace(step)));
  return out + "</section>\n";
}

}  // namespace

std::string page_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t k = 0; k < s.size();) {
    const long cp = next_code_point(s, k);
    if (cp < 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
    } else if ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp <= 0x9F)) {
      continue;
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : page_text(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe_json(const std::string& json) {
  std::string out;
  for (size_t k = 0; k < json.size(); ++k) {
    const char c = json[k];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (json.compare(k, 3, "\xE2\x80\xA8") == 0 || json.compare(k, 3, "\xE2\x80\xA9") == 0) {
      out += json[k + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      k += 2;
    } else {
      out += c;
    }
  }
  return out;
}

bool lesson_html(const Lesson& lesson, const LessonHtmlOptions& options, std::string& html,
                 std::string& error) {
  const char* tmpl = embedded_class_page("lesson.html");
  if (!tmpl) {
    error = "the lesson page's template is not compiled in";
    return false;
  }
  if (lesson.steps.empty()) {
    error = "the lesson has no steps";
    return false;
  }
  const std::optional<std::vector<LessonWebStep>> steps = lesson_web_steps(lesson, error);
  if (!steps) return false;
  const std::string title = html_escape(lesson.title);
  std::string body =
      "<div class=\"bar\"><span class=\"name\">" + title +
      "</span><span class=\"pos\" id=\"pos\">Step 1 of " + std::to_string(lesson.steps.size()) +
      "</span><button type=\"button\" id=\"prev\" aria-label=\"Previous step\">←</button>"
      "<button type=\"button\" id=\"next\" aria-label=\"Next step\">→</button></div>\n"
      "<div class=\"track\"><div id=\"track\"></div></div>\n<main>\n";
  std::string data = "{\"id\":\"" + storage_id(lesson) + "\",\"steps\":[";
  GlyphTable glyphs;
  std::string pages;
  for (size_t i = 0; i < steps->size(); ++i) {
    LessonWebStep w = (*steps)[i];
    w.figure = glyphs.take(std::move(w.figure));
    w.revealed = glyphs.take(std::move(w.revealed));
    pages += step_html(lesson, i, w);
    data += (i ? "," : "") + (*steps)[i].data;
  }
  data += "]}";
  body += glyphs.defs() + pages;
  body += "</main>\n<footer><span>" + title + " · written by " + html_escape(generator(options)) +
          " · for self-study: the answers are in this file (class mode collects a class's "
          "answers) · ←/→, Page Up/Down or a swipe move between steps</span>"
          "<button type=\"button\" id=\"restart\">Start again</button></footer>";
  html = fill(tmpl, {{"GENERATOR", html_escape(generator(options))},
                     {"TITLE", html_escape(clip_utf8(page_text(lesson.title), 200))},
                     {"SHARED_STYLES", shared_styles()},
                     {"BODY", body},
                     {"DATA", script_safe_json(data)}});
  return true;
}

bool save_lesson_html(const Lesson& lesson, const LessonHtmlOptions& options,
                      const std::string& path, std::string& error) {
  AtomicOutputs out;
  const int index = out.add(path, error);
  if (index < 0) return false;
  std::string html;
  if (!lesson_html(lesson, options, html, error)) return false;
  return out.write(index, html, error) && out.commit(error);
}

std::string course_index_html(const std::vector<CourseLink>& lessons,
                              const LessonHtmlOptions& options) {
  const char* tmpl = embedded_class_page("lesson.html");
  std::string css;
  if (tmpl) {
    const std::string t = tmpl;
    const size_t a = t.find("<style>"), b = t.find("</style>");
    if (a != std::string::npos && b != std::string::npos)
      css = fill(t.substr(a, b - a), {{"SHARED_STYLES", shared_styles()}});
  }
  std::string list;
  for (const CourseLink& l : lessons) {
    std::string href;  // a relative link: anything but a plain file-name character escaped
    for (unsigned char c : l.file) {
      if (std::isalnum(c) || c == '.' || c == '-' || c == '_') {
        href += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        href += hex;
      }
    }
    list +=
        "<li><a href=\"" + href + "\">" + html_escape(l.title) + "</a>" +
        (l.summary.empty() ? ""
                           : "<br><span class=\"source\">" + html_escape(l.summary) + "</span>") +
        "</li>\n";
  }
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"" +
         html_escape(generator(options)) + "\">\n<title>Attention Lab — the course</title>\n" +
         css +
         "\n  ol.course li { margin: 0 0 14px; } ol.course a { color: var(--accent); font-weight: "
         "650; }\n</style>\n</head>\n<body>\n<main>\n<h1>Attention Lab — the course</h1>\n"
         "<p class=\"intro\">Every lesson is one page that works offline; the answers are in the "
         "pages, for self-study.</p>\n<ol class=\"course\">\n" +
         list + "</ol>\n</main>\n<footer><span>Written by " + html_escape(generator(options)) +
         "</span></footer>\n</body>\n</html>\n";
}

}  // namespace attn
