// `attention-lab export --lesson … --html` and `export --course --html DIR/` (docs/cli.md): the
// files they write (a whole page; the course's index linking a page for every lesson, relatively)
// and their errors, each exit 2 naming the flag with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "reference.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LessonHtmlCli, OneLessonIsOneWholePage) {
  const std::string out = test::temp_path("lesson-05.html");
  fs::remove(out);
  const auto r = test::run_cli("export --lesson 05-fear-is-by-hand --html '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + out + "\n");
  const std::string html = read(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // Seven steps, each a section; the lesson's title; the app's version.
  size_t sections = 0;
  for (size_t at = html.find("<section class=\"step"); at != std::string::npos;
       at = html.find("<section class=\"step", at + 1))
    ++sections;
  EXPECT_EQ(sections, 7u);
  EXPECT_NE(html.find("“Fear is” by hand"), std::string::npos);
  EXPECT_TRUE(std::regex_search(html, std::regex("Attention Lab [0-9]+\\.[0-9]+\\.[0-9]+")));
}

TEST(LessonHtmlCli, TheCourseHasAnIndexLinkingEveryLesson) {
  const fs::path dir = test::temp_path("course-html");
  fs::remove_all(dir);
  const auto r = test::run_cli("export --course --html '" + dir.string() + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::string> pages;
  for (const auto& e : fs::directory_iterator(dir)) pages.insert(e.path().filename().string());
  ASSERT_EQ(pages.count("index.html"), 1u);
  const std::string index = read(dir / "index.html");
  std::set<std::string> linked;
  const std::regex href("href=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(index.begin(), index.end(), href);
       it != std::sregex_iterator(); ++it)
    linked.insert((*it)[1]);
  pages.erase("index.html");
  // One page per lesson file of the course, each linked by its own (relative) name.
  size_t lessons = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ATTN_SOURCE_DIR) / "assets/lessons"))
    if (e.path().extension() == ".json") {
      ++lessons;
      const std::string page = e.path().stem().string() + ".html";
      EXPECT_EQ(pages.count(page), 1u) << page;
      EXPECT_EQ(linked.count(page), 1u) << page;
    }
  EXPECT_EQ(pages.size(), lessons);
  EXPECT_EQ(linked.size(), lessons);
}

TEST(LessonHtmlCli, BadInputIsExit2NamingTheFlagAndWritesNothing) {
  const std::string out = test::temp_path("never.html");
  fs::remove(out);
  const std::string txt = test::temp_path("x.txt");  // a file where a folder is wanted
  std::ofstream(txt) << "a file, not a folder";
  const std::pair<std::string, std::string> cases[] = {
      {"export --lesson no-such-lesson --html '" + out + "'", "error: --lesson: 'no-such-lesson'"},
      {"export --html '" + out + "'", "error: --html: give the lesson to write"},
      {"export --lesson 05-fear-is-by-hand", "error: --lesson: a lesson is exported as a web page"},
      {"export --course", "error: --course: a lesson is exported as a web page"},
      {"export --lesson 05-fear-is-by-hand --html /no/such/folder/x.html",
       "error: --html: cannot write '/no/such/folder/x.html'"},
      {"export --lesson 05-fear-is-by-hand --html '" + txt + "'",
       "error: --html: a web page's name ends in .html"},
      {"export --example fear-is --lesson 05-fear-is-by-hand --html '" + out + "'",
       "error: --html: a lesson's web page takes --lesson or --course and --html only; --example "
       "is for a heatmap"},
      {"export --lesson 05-fear-is-by-hand --width 800 --html '" + out + "'",
       "only; --width is for a heatmap"},
      {"export --lesson 05-fear-is-by-hand --course --html '" + out + "'", "excludes"},
      {"export --course --html '" + txt + "'", "error: --html: with --course, give a folder"},
      {"export --example fear-is --step weights", "error: --out: give the file to write"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  EXPECT_EQ(read(txt), "a file, not a folder");
}

}  // namespace
}  // namespace attn
