// `attention-lab export --lesson NAME|FILE --html OUT.html` and `export --course --html DIR/`: a
// lesson as one self-contained web page (core/lessons/lesson_html.h), or the whole built-in
// course with an index page linking them.
#include <filesystem>
#include <iostream>

#include "attention/format.h"
#include "cli/cli.h"
#include "lessons/lesson.h"
#include "lessons/lesson_html.h"

namespace attn::cli {

namespace {

bool html_name(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".html" || ext == ".htm";
}

LessonHtmlOptions page_options() {
  LessonHtmlOptions o;
  o.app_version = ATTN_VERSION;
  return o;
}

std::string page_or_throw(const Lesson& lesson, const std::string& name) {
  std::string html, error;
  if (!lesson_html(lesson, page_options(), html, error))
    throw CliError{kExitRuntime, "--html: cannot write the page of " + name + ": " + error};
  return html;
}

int export_course(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (fs::exists(dir, ec))
      throw CliError{kExitUsage, "--html: with --course, give a folder ('" + dir +
                                     "' is a file); the lessons and index.html go into it"};
    if (!fs::create_directory(dir, ec))
      throw CliError{kExitUsage, "--html: cannot create the folder '" + dir + "': " + ec.message()};
  }
  std::string error;
  const std::vector<LessonInfo> course = list_course(error);
  if (course.empty()) throw CliError{kExitRuntime, "--course: " + error};
  OutputFiles files;  // every page and the index, all or none
  std::vector<int> index_of;
  std::vector<CourseLink> links;
  for (const LessonInfo& info : course) {
    const std::string file = fs::path(info.path).stem().string() + ".html";
    index_of.push_back(files.add("--html", (fs::path(dir) / file).string()));
    links.push_back({file, info.title, info.summary});
  }
  const int index = files.add("--html", (fs::path(dir) / "index.html").string());
  for (size_t i = 0; i < course.size(); ++i) {
    const Lesson lesson = load_lesson_or_throw(course[i].path, "--course");
    files.write(index_of[i], page_or_throw(lesson, "'" + course[i].path + "'"));
  }
  files.write(index, course_index_html(links, page_options()));
  files.commit();
  std::cout << "wrote " << course.size() << " lessons and index.html to " << printable_text(dir)
            << "\n";
  return kExitOk;
}

}  // namespace

int export_lesson_html(const ExportHtmlArgs& a) {
  if (a.out.empty())
    throw CliError{kExitUsage, std::string(a.course ? "--course" : "--lesson") +
                                   ": a lesson is exported as a web page; give --html " +
                                   (a.course ? "DIR/" : "OUT.html")};
  if (a.lesson.empty() && !a.course)
    throw CliError{kExitUsage,
                   "--html: give the lesson to write (--lesson NAME|FILE) or --course for all"};
  if (a.course) return export_course(a.out);
  if (!html_name(a.out))
    throw CliError{kExitUsage,
                   "--html: a web page's name ends in .html (got '" + printable_text(a.out) + "')"};
  OutputFiles files;  // checked before any work
  const int index = files.add("--html", a.out);
  const Lesson lesson = load_lesson_or_throw(a.lesson, "--lesson");
  files.write(index, page_or_throw(lesson, "'" + a.lesson + "'"));
  files.commit();
  std::cout << "wrote " << printable_text(a.out) << "\n";
  return kExitOk;
}

}  // namespace attn::cli
