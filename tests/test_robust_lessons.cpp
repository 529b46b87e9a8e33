// Issue 28, classes 7 and 8, through the real binary and the lesson reader: lesson strings, step
// counts and the memory the steps hold are bounded and refused up front with the field, the step
// and the numbers; worksheets shorten long tokens before laying them out; `gui --lesson-step`
// without `--lesson` is a usage error (docs/robustness.md, docs/lessons.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "lessons/lesson.h"
#include "lessons/lesson_sheet.h"
#include "npy_fixture.h"
#include "reference.h"
#include "render/worksheet.h"

namespace attn {
namespace {

using nlohmann::json;
using test::run_capped;
using test::run_cli;
using test::temp_path;
using test::write_bytes;

void expect_usage_error(const test::CliResult& r, const std::vector<std::string>& words) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  for (const std::string& w : words)
    EXPECT_NE(r.err.find(w), std::string::npos) << r.err << "\nwanted: " << w;
}

// A one-step lesson on the fear-is example with a statement question; `edit` changes it.
json small_lesson() {
  return json::parse(R"({
    "format": "attention-lab-lesson", "version": 1, "title": "Small", "summary": "s",
    "steps": [{"title": "One", "example": "fear-is", "stage": "weights", "text": ["t"],
               "formula": "f",
               "question": {"kind": "statement", "prompt": "p", "explanation": "e",
                            "choices": [{"text": "A", "correct": true}, {"text": "B"}]}}]})");
}

std::string write_lesson(const json& j, const std::string& name) {
  const std::string path = temp_path(name);
  EXPECT_TRUE(write_bytes(path, j.dump()));
  return path;
}

TEST(RobustLessons, LongStringsAreRefusedNamingTheFieldAndTheStep) {
  const std::string huge(30000, 'x');
  struct Case {
    const char* field;
    std::function<void(json&)> edit;
  };
  const std::vector<Case> cases = {
      {"title", [&](json& j) { j["title"] = huge; }},
      {"summary", [&](json& j) { j["summary"] = huge; }},
      {"step 1", [&](json& j) { j["steps"][0]["title"] = huge; }},
      {"formula", [&](json& j) { j["steps"][0]["formula"] = huge; }},
      {"text[0]", [&](json& j) { j["steps"][0]["text"][0] = huge; }},
      {"question.prompt", [&](json& j) { j["steps"][0]["question"]["prompt"] = huge; }},
      {"question.explanation", [&](json& j) { j["steps"][0]["question"]["explanation"] = huge; }},
      {"question.choices[1].text",
       [&](json& j) { j["steps"][0]["question"]["choices"][1]["text"] = huge; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    json j = small_lesson();
    c.edit(j);
    const test::CliResult r = run_cli("lessons --check " + write_lesson(j, "long.json"));
    expect_usage_error(r, {c.field, "30,000 bytes", "at most"});
    // The message quotes no 30,000-character string (a step's title is shortened in it).
    EXPECT_LT(r.err.size(), 1000u) << r.err.size();
    if (std::string(c.field) != "title" && std::string(c.field) != "summary") {
      EXPECT_NE(r.err.find("step 1"), std::string::npos) << r.err;
    }
  }
  // The app refuses it the same way, before a window opens.
  json j = small_lesson();
  j["steps"][0]["formula"] = huge;
  expect_usage_error(run_cli("gui --lesson " + write_lesson(j, "long-gui.json") + " --screenshot " +
                             temp_path("never.png")),
                     {"--lesson", "formula", "at most"});
}

TEST(RobustLessons, StringsAtTheirLimitsAreAccepted) {
  json j = small_lesson();
  j["title"] = std::string(kMaxLessonTitleBytes, 't');
  j["steps"][0]["title"] = std::string(kMaxLessonTitleBytes, 's');
  j["steps"][0]["formula"] = std::string(kMaxLessonLineBytes, 'f');
  j["steps"][0]["text"] = json::array();
  for (size_t i = 0; i < kMaxLessonParagraphs; ++i)
    j["steps"][0]["text"].push_back(std::string(kMaxLessonTextBytes, 'p'));
  for (size_t i = 2; i < kMaxLessonChoices; ++i)
    j["steps"][0]["question"]["choices"].push_back(
        {{"text", std::string(kMaxLessonLineBytes, 'c')}});
  const test::CliResult r = run_cli("lessons --check " + write_lesson(j, "limits.json"));
  EXPECT_EQ(r.status, 0) << r.err;
  // One more of anything is refused.
  j["steps"][0]["question"]["choices"].push_back({{"text", "one too many"}});
  expect_usage_error(run_cli("lessons --check " + write_lesson(j, "choices.json")),
                     {"question.choices", "11 choices", "at most 10"});
}

// A lesson of `steps` steps; every step after the first keeps the first one's scenario.
std::string many_steps(size_t steps) {
  std::string s = R"({"title": "Many", "steps": [{"title": "a", "example": "fear-is"})";
  s.reserve(s.size() + steps * 16);
  for (size_t i = 1; i < steps; ++i) s += R"(, {"title": "b"})";
  return s + "]}";
}

TEST(RobustLessons, StepCountsOverTheLimitAreRefusedUpFrontInBoundedMemory) {
  // 10^6 steps (16 MB): over the file limit, refused before parsing.
  const std::string big = temp_path("million.json");
  ASSERT_TRUE(write_bytes(big, many_steps(1000000)));
  expect_usage_error(run_capped("lessons --check " + big, 1024), {"at most", "4.2 MB"});
  // 10^5 steps (1.6 MB): refused by its step count, before any step is read.
  const std::string many = temp_path("hundred-thousand.json");
  ASSERT_TRUE(write_bytes(many, many_steps(100000)));
  expect_usage_error(run_capped("lessons --check " + many, 1024),
                     {"steps", "100,000 steps", "at most 500"});
  expect_usage_error(
      run_capped("worksheet --lesson " + many + " --out " + temp_path("w.pdf"), 1024),
      {"100,000 steps"});
  // The limit itself is fine.
  const std::string ok = temp_path("five-hundred.json");
  ASSERT_TRUE(write_bytes(ok, many_steps(kMaxLessonSteps)));
  EXPECT_EQ(run_capped("lessons --check " + ok, 1024).status, 0);
}

// An inline scenario of n tokens with d-dimensional Q, K and V.
json inline_scenario(int n, int d) {
  json s;
  s["query_tokens"] = json::array();
  json m = json::array();
  for (int i = 0; i < n; ++i) {
    s["query_tokens"].push_back("t" + std::to_string(i));
    json row = json::array();
    for (int k = 0; k < d; ++k) row.push_back(((i * 7 + k * 3) % 10) / 10.0);
    m.push_back(row);
  }
  s["q"] = m;
  s["k"] = m;
  s["v"] = m;
  return s;
}

TEST(RobustLessons, WhatTheStepsHoldIsBoundedAndRefusedWithTheNumbers) {
  // A 2 MB scenario that 499 steps would each copy twice (3 GB in all) is refused at the step
  // where the copies pass the limit. Getting there handles 256 MiB of scenarios, step by step:
  // a second in a plain build, ten minutes at -O0 under the sanitizers, so only the plain build
  // runs this case (its memory is what it checks, and ulimit only bounds plain builds anyway).
  if (!test::kSanitized) {
    json j;
    j["title"] = "Copies";
    j["steps"] = json::array({{{"title", "big"}, {"scenario", inline_scenario(500, 256)}}});
    for (size_t i = 1; i < kMaxLessonSteps; ++i) j["steps"].push_back({{"title", "again"}});
    expect_usage_error(
        run_capped("lessons --check " + write_lesson(j, "copies.json"), 1536),
        {"scenario", "the steps' scenarios up to this one hold", "at most 268.4 MB"});
  }
  // A step whose trace alone is too large for a lesson.
  json wide;
  wide["title"] = "Wide";
  wide["steps"] = json::array({{{"title", "wide"}, {"scenario", inline_scenario(1100, 1)}}});
  expect_usage_error(run_capped("lessons --check " + write_lesson(wide, "wide.json"), 1536),
                     {"step 1", "too large for a lesson", "1·1100·1100", "1,048,576"});
}

TEST(RobustLessons, LessonStepWithoutALessonIsAUsageError) {
  expect_usage_error(run_cli("gui --lesson-step 2"), {"--lesson-step", "--lesson"});
  expect_usage_error(run_cli("gui --example fear-is --lesson-step 1"), {"--lesson"});
}

// ---------------------------------------------------------------- worksheets (class 8)

// Every text a sheet lays out, and the longest run of `c` in any of them.
size_t longest_run(const std::vector<ScenePage>& pages, char c, size_t* items = nullptr) {
  size_t best = 0;
  for (const ScenePage& p : pages)
    for (const SceneItem& it : p.items) {
      if (items && !it.text.empty()) ++*items;
      size_t run = 0;
      for (char x : it.text) {
        run = x == c ? run + 1 : 0;
        best = std::max(best, run);
      }
    }
  return best;
}

TEST(RobustWorksheets, LongTokensAreShortenedBeforeLayout) {
  // A key question on a scenario whose first key is a 40,000-character token: the token is a
  // grid label, an option and the answer.
  json s = inline_scenario(3, 2);
  s["query_tokens"][0] = std::string(40000, 'k');
  json j;
  j["title"] = "Long token";
  j["steps"] = json::array(
      {{{"title", "which"},
        {"scenario", s},
        {"stage", "weights"},
        {"question",
         {{"kind", "statement"},
          {"prompt", "p"},
          {"choices", json::array({{{"text", "A"}, {"correct", true}}, {{"text", "B"}}})}}}}});
  std::string error;
  const std::optional<Lesson> lesson = parse_lesson(j.dump(), "long-token.json", error);
  ASSERT_TRUE(lesson) << error;
  std::vector<AttentionTrace> traces;
  const std::optional<LessonSheet> sheet = lesson_sheet(*lesson, traces, 4, error);
  ASSERT_TRUE(sheet) << error;
  for (bool key : {false, true}) {
    std::vector<ScenePage> pages;
    ASSERT_TRUE(lesson_sheet_pages(*sheet, WorksheetOptions{}, key, pages, error)) << error;
    size_t items = 0;
    EXPECT_LE(longest_run(pages, 'k', &items), kWorksheetMaxTokenBytes) << "key " << key;
    EXPECT_GT(items, 5u);
  }
  // The command: a scenario worksheet and its key (with the worked arithmetic) on such a token.
  const std::string scenario = temp_path("long-token.json");
  ASSERT_TRUE(write_bytes(scenario, s.dump()));
  const test::CliResult r =
      run_capped("worksheet --scenario " + scenario + " --out " + temp_path("long.pdf") +
                     " --answers " + temp_path("long-key.pdf"),
                 1536);
  EXPECT_EQ(r.status, 0) << r.err;
  AttentionTrace t = lesson_step_trace(lesson->steps[0]);
  clip_worksheet_tokens(t);
  EXPECT_EQ(t.query_tokens[0], std::string(kWorksheetMaxTokenBytes, 'k') + "…");
  EXPECT_EQ(t.query_tokens[1], "t1");
}

TEST(RobustWorksheets, LongChoicesAreRefusedBeforeAnyLayout) {
  // The 120 KB lesson of the issue: choices of 30,000 characters.
  json j = small_lesson();
  for (json& c : j["steps"][0]["question"]["choices"]) c["text"] = std::string(30000, 'c');
  j["steps"][0]["question"]["choices"].push_back({{"text", std::string(30000, 'c')}});
  j["steps"][0]["question"]["choices"].push_back({{"text", std::string(30000, 'c')}});
  expect_usage_error(run_capped("worksheet --lesson " + write_lesson(j, "choices.json") +
                                    " --out " + temp_path("c.pdf"),
                                1536),
                     {"question.choices[0].text", "at most 1,000"});
}

}  // namespace
}  // namespace attn
