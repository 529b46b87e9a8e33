// docs/cli.md stays true: every example command in it is run and its output compared with what
// the page shows, and every option the command line has (CLI11) is documented in its section.
//
// How to write docs/cli.md so this test reads it (follow this when you add a subcommand or flag):
//
// - Each subcommand has a section whose heading is exactly the command in backticks, at level
//   2 to 4: "## `attention-lab trace`", "### `attention-lab seq2seq translate`", and
//   "## `attention-lab`" for the program itself (--version, --help-all). A section runs to the
//   next such heading. Every option of the subcommand (its long name) must appear in its section
//   as "`--name", e.g. in the options table: | `--model NAME|FILE` | … |. Every section needs at
//   least one example that runs its subcommand. A section for a subcommand that does not exist
//   fails too.
// - Examples are fenced blocks tagged `console`. A line "$ command" is run (a line ending in "\"
//   continues on the next); the lines after it, up to the next "$ " or the end of the block, are
//   the expected output (stdout and stderr together). Blocks tagged anything else are not run.
// - "…" on a line of its own stands for any number of lines (also none); "…" inside a line stands
//   for any text within that line (timings, absolute paths). Trailing spaces and trailing empty
//   lines are ignored; everything else must match exactly.
// - float32 results can differ in their last digits between builds (FMA in -march=native, none
//   in the portable build): print them rounded, or cut them short with "…" ("0.3854…").
// - Every command must exit with status 0. To show an error, end the command with
//   `; echo "exit status $?"` so the page shows the status too.
// - Commands run with /bin/sh, one after another in one scratch folder (later examples may use
//   files earlier ones wrote), with the built attention-lab first on PATH and `docs` and `assets`
//   linked from the source tree, i.e. as if typed at the repository root. Write outputs to the
//   current folder, never into docs/ or assets/.
// - A block that opens a window needs a display: put "<!-- test: needs-display -->" on the line
//   before its fence (it is skipped, with a message, when DISPLAY is unset).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli/cli.h"

namespace attn {
namespace {

const std::string kEllipsis = "…";

struct Command {
  int line = 0;  // in docs/cli.md, 1-based
  std::string section;
  std::string text;  // continuation lines joined
  bool needs_display = false;
  std::vector<std::string> expected;
};

struct Doc {
  std::vector<Command> commands;
  std::map<std::string, std::string> sections;  // subcommand path ("" = the program) -> its text
  std::map<std::string, int> section_lines;
};

std::string rstrip(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(rstrip(line));
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

Doc parse_doc(const std::string& text) {
  Doc doc;
  const std::regex heading(R"(^#{2,4} `attention-lab((?: [a-z0-9-]+)*)`$)");
  const std::vector<std::string> lines = split_lines(text);
  std::string section = "(before any subcommand section)";
  bool in_fence = false, console = false, needs_display = false;
  int current = -1;  // the command (index) the block's next output lines belong to
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("```", 0) == 0) {
      if (!in_fence) {
        console = line == "```console";
        needs_display = i > 0 && lines[i - 1] == "<!-- test: needs-display -->";
        current = -1;
      }
      in_fence = !in_fence;
      continue;
    }
    if (!in_fence) {
      std::smatch m;
      if (std::regex_match(line, m, heading)) {
        section = m[1].str().empty() ? "" : m[1].str().substr(1);
        doc.section_lines[section] = static_cast<int>(i + 1);
        doc.sections[section];
      }
      if (doc.section_lines.count(section)) doc.sections[section] += line + "\n";
      continue;
    }
    if (doc.section_lines.count(section)) doc.sections[section] += line + "\n";
    if (!console) continue;
    if (line.rfind("$ ", 0) == 0) {
      Command c{static_cast<int>(i + 1), section, line.substr(2), needs_display, {}};
      while (!c.text.empty() && c.text.back() == '\\' && i + 1 < lines.size())
        c.text += "\n" + lines[++i];
      doc.commands.push_back(c);
      current = static_cast<int>(doc.commands.size()) - 1;
    } else if (current >= 0) {
      doc.commands[static_cast<size_t>(current)].expected.push_back(line);
    }
  }
  for (Command& c : doc.commands)
    while (!c.expected.empty() && c.expected.back().empty()) c.expected.pop_back();
  return doc;
}

// One line against a pattern where "…" stands for any text.
bool line_matches(const std::string& pattern, const std::string& line) {
  std::vector<std::string> pieces;
  for (size_t start = 0;;) {
    const size_t at = pattern.find(kEllipsis, start);
    pieces.push_back(pattern.substr(start, at == std::string::npos ? at : at - start));
    if (at == std::string::npos) break;
    start = at + kEllipsis.size();
  }
  if (pieces.size() == 1) return pattern == line;
  const std::string& first = pieces.front();
  const std::string& last = pieces.back();
  if (line.size() < first.size() + last.size() || line.compare(0, first.size(), first) != 0 ||
      line.compare(line.size() - last.size(), last.size(), last) != 0)
    return false;
  // Middle pieces in order, each as early as possible (enough for "*"-only patterns).
  size_t pos = first.size();
  const size_t end = line.size() - last.size();
  for (size_t k = 1; k + 1 < pieces.size(); ++k) {
    const size_t at = line.find(pieces[k], pos);
    if (at == std::string::npos || at + pieces[k].size() > end) return false;
    pos = at + pieces[k].size();
  }
  return true;
}

// Expected lines against actual lines, a line "…" standing for any number of lines.
bool lines_match(const std::vector<std::string>& expected, size_t e,
                 const std::vector<std::string>& actual, size_t a) {
  if (e == expected.size()) return a == actual.size();
  if (expected[e] == kEllipsis) {
    for (size_t skip = a; skip <= actual.size(); ++skip)
      if (lines_match(expected, e + 1, actual, skip)) return true;
    return false;
  }
  return a < actual.size() && line_matches(rstrip(expected[e]), actual[a]) &&
         lines_match(expected, e + 1, actual, a + 1);
}

bool output_matches(const std::vector<std::string>& expected, const std::string& actual) {
  return lines_match(expected, 0, split_lines(actual), 0);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string doc_path() { return std::string(ATTN_SOURCE_DIR) + "/docs/cli.md"; }

// A scratch folder laid out like the repository root: docs/ and assets/ linked.
std::string make_scratch() {
  std::string tmpl = std::string(ATTN_TEST_TMP) + "/cli-doc-XXXXXX";
  if (!mkdtemp(tmpl.data())) return "";
  for (const char* sub : {"docs", "assets"})
    if (symlink((std::string(ATTN_SOURCE_DIR) + "/" + sub).c_str(), (tmpl + "/" + sub).c_str()))
      return "";
  return tmpl;
}

// Runs one command as the page shows it; returns its exit status, output in `out`.
int run_in(const std::string& dir, const std::string& command, std::string& out) {
  const std::string script = dir + "/.command.sh";
  {
    std::ofstream s(script);
    std::string bin = ATTN_CLI_PATH;
    bin = bin.substr(0, bin.rfind('/'));
    s << "cd '" << dir << "' || exit 99\nunset ATTN_DATA_DIR\nexport PATH='" << bin
      << "':\"$PATH\"\n"
      << command << "\n";
  }
  FILE* p = popen(("timeout 300 /bin/sh '" + script + "' 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  out.clear();
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliDocMatcher, EllipsisStandsForTextOrLinesAndNothingElse) {
  EXPECT_TRUE(line_matches("a … b", "a 12.5 ms b"));
  EXPECT_TRUE(line_matches("…", "anything"));
  EXPECT_TRUE(line_matches("x…y…z", "xyz"));
  EXPECT_FALSE(line_matches("x…y…z", "xzy"));
  EXPECT_FALSE(line_matches("a … b", "a 1 c"));
  EXPECT_FALSE(line_matches("abc", "abd"));
  EXPECT_TRUE(output_matches({"one", "…", "four"}, "one\ntwo\nthree\nfour\n"));
  EXPECT_TRUE(output_matches({"one", "…", "two"}, "one\ntwo\n"));
  EXPECT_FALSE(output_matches({"one", "…", "four"}, "one\ntwo\n"));
  EXPECT_FALSE(output_matches({"one"}, "one\ntwo\n"));
  EXPECT_FALSE(output_matches({"one", "two"}, "one\n"));
  EXPECT_TRUE(output_matches({"one  "}, "one\n\n"));
}

TEST(CliDocMatcher, ParsesCommandsContinuationsAndSections) {
  const Doc doc = parse_doc(
      "## `attention-lab trace`\n\n"
      "| `--example NAME` | x |\n\n"
      "```console\n$ attention-lab trace \\\n  --example fear-is\nout 1\n\n$ echo hi\nhi\n```\n"
      "```sh\n$ not run\n```\n"
      "<!-- test: needs-display -->\n```console\n$ attention-lab gui\n```\n");
  ASSERT_EQ(doc.commands.size(), 3u);
  EXPECT_EQ(doc.commands[0].text, "attention-lab trace \\\n  --example fear-is");
  EXPECT_EQ(doc.commands[0].expected, std::vector<std::string>{"out 1"});
  EXPECT_EQ(doc.commands[0].section, "trace");
  EXPECT_EQ(doc.commands[1].expected, std::vector<std::string>{"hi"});
  EXPECT_FALSE(doc.commands[1].needs_display);
  EXPECT_TRUE(doc.commands[2].needs_display);
  ASSERT_EQ(doc.sections.count("trace"), 1u);
  EXPECT_NE(doc.sections.at("trace").find("`--example"), std::string::npos);
}

TEST(CliDoc, EveryExampleRunsAndPrintsWhatThePageShows) {
  const Doc doc = parse_doc(read_file(doc_path()));
  ASSERT_GE(doc.commands.size(), 20u) << "no examples found in " << doc_path();
  const std::string dir = make_scratch();
  ASSERT_FALSE(dir.empty()) << "cannot make a scratch folder under " << ATTN_TEST_TMP;
  const bool display = std::getenv("DISPLAY") && *std::getenv("DISPLAY");
  for (const Command& c : doc.commands) {
    if (c.needs_display && !display) {
      std::printf("docs/cli.md:%d: skipped (needs a display): %s\n", c.line, c.text.c_str());
      continue;
    }
    std::string out;
    const int status = run_in(dir, c.text, out);
    std::ostringstream expected;
    for (const std::string& l : c.expected) expected << l << "\n";
    EXPECT_EQ(status, 0) << "docs/cli.md:" << c.line << ": $ " << c.text << "\n" << out;
    EXPECT_TRUE(output_matches(c.expected, out))
        << "docs/cli.md:" << c.line << ": $ " << c.text << "\n--- the page shows:\n"
        << expected.str() << "--- the program printed:\n"
        << out;
  }
  // Kept for a look when something failed; the links inside are removed, not followed.
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
}

// Every subcommand path ("seq2seq translate") with its options' long names.
void collect(const CLI::App& app, const std::string& path,
             std::map<std::string, std::vector<std::string>>& out) {
  auto& names = out[path];
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames())
      if (n != "help" && n != "help-all") names.push_back(n);  // documented once
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

bool documents_option(const std::string& section, const std::string& name) {
  const std::string needle = "`--" + name;
  for (size_t at = section.find(needle); at != std::string::npos;
       at = section.find(needle, at + 1)) {
    const size_t after = at + needle.size();
    const char c = after < section.size() ? section[after] : ' ';
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return true;
  }
  return false;
}

TEST(CliDoc, EverySubcommandAndOptionIsDocumented) {
  CLI::App app;
  cli::Action action;
  cli::configure_app(app, action);
  std::map<std::string, std::vector<std::string>> commands;
  collect(app, "", commands);
  const Doc doc = parse_doc(read_file(doc_path()));
  for (const auto& [path, options] : commands) {
    const std::string shown = path.empty() ? "attention-lab" : "attention-lab " + path;
    const auto it = doc.sections.find(path);
    if (it == doc.sections.end()) {
      ADD_FAILURE() << "docs/cli.md has no section \"## `" << shown << "`\"";
      continue;
    }
    for (const std::string& name : options)
      EXPECT_TRUE(documents_option(it->second, name))
          << "docs/cli.md:" << doc.section_lines.at(path) << ": the section of `" << shown
          << "` does not document `--" << name << "`";
    bool example = false;
    for (const Command& c : doc.commands)
      example = example || c.text == shown || c.text.rfind(shown + " ", 0) == 0;
    EXPECT_TRUE(example) << "docs/cli.md: no example runs `" << shown << "`";
  }
  for (const auto& [path, text] : doc.sections)
    EXPECT_TRUE(commands.count(path))
        << "docs/cli.md:" << doc.section_lines.at(path) << ": `attention-lab " << path
        << "` is not a subcommand (renamed or removed?)";
}

}  // namespace
}  // namespace attn
