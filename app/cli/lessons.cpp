// `attention-lab lessons`: the built-in course, one lesson per line (NAME<TAB>title), and
// `lessons --check FILE…` to check lesson files before a class: each is read and checked against
// its traces, then against the leak rules (lesson_leaks.h: a step whose words give its answer
// away); --answers prints every question's answer.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli.h"
#include "io/shipped.h"
#include "lessons/lesson.h"
#include "lessons/lesson_leaks.h"

namespace attn::cli {

void register_lessons(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "lessons", "List the built-in course, or check lesson files (--check) and show answers");
  auto check = std::make_shared<std::vector<std::string>>();
  auto answers = std::make_shared<bool>(false);
  cmd->add_option("--check", *check,
                  "lesson files or built-in names to read and check against their traces");
  cmd->add_flag("--answers", *answers, "with --check: print every question with its answer");
  cmd->callback([&action, check, answers] {
    action = [check, answers] {
      if (*answers && check->empty()) throw CliError{kExitUsage, "--answers: needs --check FILE"};
      if (check->empty()) {
        std::string error;
        const std::vector<LessonInfo> course = list_course(error);
        if (course.empty()) throw CliError{kExitRuntime, error};
        const std::vector<ShippedItem> items = list_shipped(kLessons);
        for (size_t i = 0; i < course.size(); ++i)
          std::cout << items[i].name << '\t' << course[i].title << '\n';
        return kExitOk;
      }
      size_t leaked = 0;
      for (const std::string& name : *check) {
        const Lesson lesson = load_lesson_or_throw(name, "--check");
        int questions = 0;
        for (const LessonStep& s : lesson.steps) questions += s.question ? 1 : 0;
        std::cout << lesson.path << ": " << lesson.title << " (" << lesson.steps.size()
                  << (lesson.steps.size() == 1 ? " step, " : " steps, ") << questions
                  << (questions == 1 ? " question)" : " questions)") << '\n';
        const std::vector<LessonLeak> leaks = lesson_leaks(lesson);
        if (!leaks.empty()) std::cout.flush();  // each leak after its lesson's line
        for (const LessonLeak& leak : leaks)
          std::cerr << lesson.path << ": leak: " << leak.message << '\n';
        leaked += leaks.size();
        if (!*answers) continue;
        for (size_t i = 0; i < lesson.steps.size(); ++i) {
          const LessonStep& s = lesson.steps[i];
          if (!s.question) continue;
          std::string error;
          const std::string a = answer_text(*s.question, lesson_step_trace(s), 4, error);
          if (a.empty())
            throw CliError{kExitUsage,
                           lesson.path + ": step " + std::to_string(i + 1) + ": " + error};
          std::cout << "  step " << i + 1 << ": " << s.question->prompt << "\n    → " << a << '\n';
        }
      }
      if (leaked > 0)
        throw CliError{kExitUsage, std::to_string(leaked) +
                                       (leaked == 1 ? " step gives" : " steps give") +
                                       " its answer away (above)"};
      return kExitOk;
    };
  });
}

}  // namespace attn::cli
