// A lesson as one self-contained web page (export --lesson … --html, File → Export lesson as web
// page…): every step with its words, its figure drawn by the exporter as inline SVG with what its
// question hides blank, the question checked in the page by the lesson player's rules, and the
// hidden cells shown only once answered. No URL, font or script from outside the file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lessons/lesson.h"

namespace attn {

struct LessonHtmlOptions {
  std::string app_version;  // the app that writes the page ("0.1.0"), stated on it
};

// One step of the page as the writer builds it (tests read it).
struct LessonWebStep {
  std::string source;  // the example, scenario or model behind the step, in words
  // The figure before the step's question is answered (its answer and later questions' blank),
  // and after (its own answer shown, later ones still blank); "" = no figure. Inline SVG (or, for
  // a step on its inputs, HTML tables of Q, K and V).
  std::string figure, revealed;
  std::string note;  // why there is no figure, when there is none
  std::string data;  // the step's JSON for the page's script: question, answer, working
};

// Every step of `lesson`; none with `error` naming the step when a figure cannot be drawn.
std::optional<std::vector<LessonWebStep>> lesson_web_steps(const Lesson& lesson,
                                                           std::string& error);

// The whole page's bytes (UTF-8 HTML). false with `error` when it cannot be made.
bool lesson_html(const Lesson& lesson, const LessonHtmlOptions& options, std::string& html,
                 std::string& error);

// The page written atomically to `path` (io/atomic_file.h): what the app's File → Export lesson
// as web page… calls. false with `error` naming the path or the step.
bool save_lesson_html(const Lesson& lesson, const LessonHtmlOptions& options,
                      const std::string& path, std::string& error);

// An index page for a course: one link per lesson (relative file names), titles and summaries.
struct CourseLink {
  std::string file, title, summary;
};
std::string course_index_html(const std::vector<CourseLink>& lessons,
                              const LessonHtmlOptions& options);

// Escaping, for every piece of text a page holds.
// Text as it may appear on a page: not UTF-8 becomes U+FFFD; control characters (C0 but tab and
// newline, DEL, C1) are removed.
std::string page_text(const std::string& s);
// page_text, then & < > " ' as character references: safe in element content and in a quoted
// attribute value.
std::string html_escape(const std::string& s);
// JSON text made safe inside <script>: < > & and U+2028/U+2029 as \u escapes, so no "</script>"
// or "<!--" can end or change the script. Input must be JSON (they only occur in its strings).
std::string script_safe_json(const std::string& json);

}  // namespace attn
