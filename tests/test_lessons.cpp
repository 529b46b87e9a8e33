// Lessons: every malformed field named in the error (file, step, field), every built-in lesson
// loads, every question's answer against an independent double-precision computation, answer
// checking, recording a step, the `lessons` command and `worksheet --lesson` through pdftotext.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attention/scenario.h"
#include "course.h"
#include "documents.h"
#include "io/examples.h"
#include "io/shipped.h"
#include "lessons/lesson.h"
#include "lm/forward.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "lm_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using nlohmann::json;

// A small valid lesson that every malformed case starts from.
json base_lesson() {
  return json::parse(R"({
    "format": "attention-lab-lesson", "version": 1,
    "title": "Test lesson",
    "steps": [
      {"title": "Scores", "example": "fear-is", "stage": "scores", "select": [0, 1],
       "highlight": [[0, 1]],
       "question": {"kind": "number", "prompt": "q·k?",
                    "answer": {"stage": "scores", "row": 0, "col": 1}, "tolerance": 0.01}},
      {"title": "Weights", "stage": "weights",
       "question": {"kind": "key", "prompt": "Which key?", "answer": {"row": 0}}},
      {"title": "Why", "variants": {"temperature": 2},
       "question": {"kind": "statement", "prompt": "Pick", "choices": [
         {"text": "yes", "correct": true}, {"text": "no"}]}}
    ]})");
}

std::string parse_error(const json& j) {
  std::string error;
  const std::optional<Lesson> l = parse_lesson(j.dump(), "lesson.json", error);
  EXPECT_FALSE(l) << "accepted: " << j.dump();
  return error;
}

TEST(LessonParse, TheBaseLessonReads) {
  std::string error;
  const std::optional<Lesson> l = parse_lesson(base_lesson().dump(), "lesson.json", error);
  ASSERT_TRUE(l) << error;
  ASSERT_EQ(l->steps.size(), 3u);
  EXPECT_EQ(l->steps[1].example, "fear-is");  // inherited from step 1
  EXPECT_EQ(l->steps[2].scenario.options.temperature, 2.0f);
  EXPECT_EQ(l->steps[1].scenario.options.temperature, 1.0f);  // variants are the step's own
}

TEST(LessonParse, EveryMalformedFieldIsNamedWithFileAndStep) {
  struct Case {
    std::function<void(json&)> break_it;
    std::string expected;  // a part of the message after "lesson.json: "
  };
  const std::vector<Case> cases = {
      {[](json& j) { j.erase("title"); }, "title: missing field"},
      {[](json& j) { j["title"] = 3; }, "title: expected a string"},
      {[](json& j) { j["version"] = 2; }, "version: unsupported lesson version"},
      {[](json& j) { j["format"] = "scenario"; }, "format: expected \"attention-lab-lesson\""},
      {[](json& j) { j["colour"] = "red"; }, "colour: unknown field"},
      {[](json& j) { j["steps"] = json::array(); }, "steps: expected a non-empty array"},
      {[](json& j) { j["steps"][0].erase("title"); }, "step 1: title: missing field"},
      {[](json& j) { j["steps"][0]["text"] = 5; }, "step 1 (“Scores”): text: expected a string"},
      {[](json& j) { j["steps"][0]["formula"] = json::array(); },
       "step 1 (“Scores”): formula: expected a string"},
      {[](json& j) { j["steps"][0]["example"] = "no-such"; }, "step 1 (“Scores”): example: "},
      {[](json& j) { j["steps"][0].erase("example"); },
       "step 1 (“Scores”): example: the first step must name an example or a scenario"},
      {[](json& j) { j["steps"][0]["scenario"] = "missing-file.json"; },
       "step 1 (“Scores”): scenario: give either example or scenario"},
      {[](json& j) {
         j["steps"][0].erase("example");
         j["steps"][0]["scenario"] = "missing-file.json";
       },
       "step 1 (“Scores”): scenario: "},
      {[](json& j) {
         j["steps"][0].erase("example");
         j["steps"][0]["scenario"] = {
             {"q", {{1, 2}}}, {"k", {{1, 2}}}, {"v", {{1, 2, 3}}}, {"temperature", -1}};
       },
       "step 1 (“Scores”): scenario: temperature"},
      {[](json& j) { j["steps"][0]["stage"] = "softmax"; },
       "step 1 (“Scores”): stage: unknown stage 'softmax'"},
      {[](json& j) { j["steps"][0]["head"] = 1; },
       "step 1 (“Scores”): head: head 1 is out of range"},
      {[](json& j) { j["steps"][0]["head"] = -1; },
       "step 1 (“Scores”): head: expected an integer >= 0, got -1"},
      // The same words as a scenario's errors: what was found, with the string's text.
      {[](json& j) { j["steps"][0]["head"] = "two"; },
       "step 1 (“Scores”): head: expected an integer, got a string \"two\""},
      {[](json& j) { j["steps"][0]["select"] = {5}; },
       "step 1 (“Scores”): select[0]: query 5 is out of range"},
      {[](json& j) {
         j["steps"][0]["select"] = {0, 9};
       },
       "step 1 (“Scores”): select[1]: key 9 is out of range"},
      {[](json& j) { j["steps"][0]["select"] = "0"; }, "step 1 (“Scores”): select: expected"},
      {[](json& j) {
         j["steps"][0]["highlight"] = {{0, 7}};
       },
       "step 1 (“Scores”): highlight[0][1]: key 7 is out of range"},
      {[](json& j) { j["steps"][0]["highlight"] = {"x"}; },
       "step 1 (“Scores”): highlight[0]: expected [QUERY] or [QUERY, KEY]"},
      {[](json& j) {
         j["steps"][2]["variants"] = {{"window", -1}};
       },
       "step 3 (“Why”): variants.window: expected an integer >= 0"},
      {[](json& j) {
         j["steps"][2]["variants"] = {{"temperature", 0}};
       },
       "step 3 (“Why”): variants"},
      {[](json& j) {
         j["steps"][2]["variants"] = {{"colour", 1}};
       },
       "step 3 (“Why”): variants.colour: unknown field"},
      {[](json& j) {
         j["steps"][2]["variants"] = {{"causal", "sideways"}};
       },
       "step 3 (“Why”): variants.causal: unknown mask kind"},
      {[](json& j) {
         j["steps"][2]["seq2seq"] = {{"tab", "nowhere"}};
       },
       "step 3 (“Why”): seq2seq.tab: expected translate, live or bottleneck"},
      {[](json& j) {
         j["steps"][2]["seq2seq"] = {{"model", "no-such-model"}};
       },
       "step 3 (“Why”): seq2seq.model: "},
      {[](json& j) {
         j["steps"][2]["lm"] = {{"model", "no-such-model"}};
       },
       "step 3 (“Why”): lm.model: "},
      {[](json& j) {
         j["steps"][2]["lm"] = {{"text", "a b a"}};
       },
       "step 3 (“Why”): lm.model: missing field"},
      {[](json& j) {
         j["steps"][2]["lm"] = {{"model", "no-such-model"}, {"tab", "nowhere"}};
       },
       "step 3 (“Why”): lm.tab: expected model, heads, block, next, roles, sinks, induction, "
       "circuit, circuit-why or kv"},
      {[](json& j) {
         j["steps"][2]["lm"] = {
             {"model", "no-such-model"}, {"layer", 0}, {"head", 0}, {"stepper", "sideways"}};
       },
       "step 3 (“Why”): lm.stepper: no stage is called \"sideways\""},
      {[](json& j) {
         j["steps"][2]["lm"] = {{"model", "no-such-model"}, {"stepper", "rope"}};
       },
       "step 3 (“Why”): lm.layer: the head to open in the stepper: give layer and head"},
      {[](json& j) {
         j["steps"][2]["lm"] = {{"model", "no-such-model"}, {"colour", "red"}};
       },
       "step 3 (“Why”): lm.colour: unknown field"},
      {[](json& j) { j["steps"][0]["question"].erase("kind"); },
       "step 1 (“Scores”): question.kind: missing field"},
      {[](json& j) { j["steps"][0]["question"]["kind"] = "essay"; },
       "step 1 (“Scores”): question.kind: unknown kind \"essay\""},
      {[](json& j) { j["steps"][0]["question"]["prompt"] = ""; },
       "step 1 (“Scores”): question.prompt: is empty"},
      {[](json& j) { j["steps"][0]["question"]["tolerance"] = -0.1; },
       "step 1 (“Scores”): question.tolerance: expected a number >= 0"},
      {[](json& j) { j["steps"][0]["question"]["tolerance"] = "a bit"; },
       "step 1 (“Scores”): question.tolerance: expected a number"},
      {[](json& j) { j["steps"][0]["question"].erase("answer"); },
       "step 1 (“Scores”): question.answer: missing field"},
      {[](json& j) { j["steps"][0]["question"]["answer"] = 0.54; },
       "step 1 (“Scores”): question.answer: expected an object"},
      {[](json& j) { j["steps"][0]["question"]["answer"]["stage"] = "softmax"; },
       "step 1 (“Scores”): question.answer.stage: unknown stage 'softmax'"},
      {[](json& j) { j["steps"][0]["question"]["answer"]["col"] = 3; },
       "step 1 (“Scores”): question.answer.col: column 3 is out of range"},
      {[](json& j) { j["steps"][0]["question"]["answer"]["row"] = 2; },
       "step 1 (“Scores”): question.answer.row: row 2 is out of range"},
      {[](json& j) { j["steps"][0]["question"]["answer"]["head"] = 1; },
       "step 1 (“Scores”): question.answer.head: stage 'scores' has 1 head(s)"},
      {[](json& j) { j["steps"][0]["question"]["answer"].erase("col"); },
       "step 1 (“Scores”): question.answer.col: missing field"},
      {[](json& j) { j["steps"][0]["question"]["answer"]["property"] = "scale"; },
       "step 1 (“Scores”): question.answer: give either stage (with row and col) or property"},
      {[](json& j) {
         j["steps"][0]["question"]["answer"] = {{"property", "colour"}};
       },
       "step 1 (“Scores”): question.answer.property: unknown property 'colour'"},
      {[](json& j) { j["steps"][0]["question"]["choices"] = json::array(); },
       "step 1 (“Scores”): question.choices: only statement questions have choices"},
      {[](json& j) { j["steps"][1]["question"]["answer"]["pick"] = "middle"; },
       "step 2 (“Weights”): question.answer.pick: expected \"largest\" or \"smallest\""},
      {[](json& j) { j["steps"][1]["question"]["answer"]["stage"] = "output"; },
       "step 2 (“Weights”): question.answer.stage: a key question needs a stage with one column "
       "per key"},
      {[](json& j) { j["steps"][1]["question"]["tolerance"] = 0.1; },
       "step 2 (“Weights”): question.tolerance: only number questions have a tolerance"},
      {[](json& j) { j["steps"][2]["question"]["choices"][1]["correct"] = true; },
       "step 3 (“Why”): question.choices: exactly one choice must be marked"},
      {[](json& j) {
         j["steps"][2]["question"]["choices"] = {{{"text", "only"}}};
       },
       "step 3 (“Why”): question.choices: expected an array of at least two choices"},
      {[](json& j) { j["steps"][2]["question"]["choices"][0]["correct"] = "yes"; },
       "step 3 (“Why”): question.choices[0].correct: expected true or false"},
      {[](json& j) { j["steps"][2]["question"]["choices"][1].erase("text"); },
       "step 3 (“Why”): question.choices[1].text: missing field"},
      {[](json& j) {
         j["steps"][2]["question"]["answer"] = {{"row", 0}};
       },
       "step 3 (“Why”): question.answer: not used by a statement question"},
  };
  for (const Case& c : cases) {
    json j = base_lesson();
    c.break_it(j);
    const std::string error = parse_error(j);
    EXPECT_EQ(error.rfind("lesson.json: ", 0), 0u) << error;
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in: " << error;
  }
}

TEST(LessonParse, AStepOpensALanguageModel) {
  // A model folder by path (a shipped name resolves the same way, through io/shipped.h).
  const std::string folder = test::temp_path("lesson-lm");
  test::write_test_model(test::make_test_model({}), folder);
  json j = base_lesson();
  j["steps"][1]["lm"] = {{"model", folder}, {"text", " a b a b"}, {"tab", "circuit"}};
  std::string error;
  const std::optional<Lesson> l = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(l) << error;
  EXPECT_EQ(l->steps[1].lm_model, folder);
  EXPECT_EQ(l->steps[1].lm_text, " a b a b");
  EXPECT_EQ(l->steps[1].lm_tab, "circuit");
  EXPECT_TRUE(l->steps[0].lm_model.empty());  // a step without "lm" leaves the window closed
  j["steps"][1]["lm"] = {{"model", folder}};
  const std::optional<Lesson> d = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(d) << error;
  EXPECT_EQ(d->steps[1].lm_tab, "model");  // the default tab
  EXPECT_FALSE(d->steps[1].lm_stepper);

  // A head of the model opened in the stepper at a stage, with a statement question only: the
  // numbers on screen are the head's, so a number question would be checked against others.
  j["steps"][1]["lm"] = {{"model", folder}, {"layer", 0}, {"head", 1}, {"stepper", "rope"}};
  j["steps"][1].erase("question");  // a key question
  const std::optional<Lesson> r = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(r) << error;
  ASSERT_TRUE(r->steps[1].lm_stepper);
  EXPECT_EQ(*r->steps[1].lm_stepper, StageId::kRope);
  EXPECT_EQ(r->steps[1].lm_head, 1);
  EXPECT_EQ(r->steps[1].lm_tab, "");  // the user's view of the stage
  j["steps"][1]["lm"]["tab"] = "distance";
  const std::optional<Lesson> rd = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(rd) << error;
  EXPECT_EQ(rd->steps[1].lm_tab, "distance");
  j["steps"][1]["lm"]["tab"] = "kv";  // a tab of the model's window, which stays closed
  EXPECT_FALSE(parse_lesson(j.dump(), "lesson.json", error));
  EXPECT_NE(error.find("lm.tab: with \"stepper\": \"rope\", expected angles, turned or distance"),
            std::string::npos)
      << error;
  j["steps"][1]["lm"].erase("tab");
  j["steps"][0]["lm"] = j["steps"][1]["lm"];  // step 1 asks for a number
  EXPECT_FALSE(parse_lesson(j.dump(), "lesson.json", error));
  EXPECT_NE(error.find("step 1 (“Scores”): question.kind: a step that opens a model's head in the "
                       "stepper asks statement questions only"),
            std::string::npos)
      << error;
}

TEST(LessonParse, NotJsonNamesTheFile) {
  std::string error;
  EXPECT_FALSE(parse_lesson("{\"title\": ", "broken.json", error));
  EXPECT_EQ(error.rfind("broken.json: invalid JSON", 0), 0u) << error;
  EXPECT_FALSE(parse_lesson("{\"title\": 1e999}", "huge.json", error));
  EXPECT_EQ(error.rfind("huge.json: invalid JSON", 0), 0u) << error;
  EXPECT_FALSE(
      parse_lesson(std::string(100000, '[') + std::string(100000, ']'), "deep.json", error));
  EXPECT_EQ(error.rfind("deep.json: ", 0), 0u) << error;
  EXPECT_FALSE(load_lesson_file(test::temp_path("absent.json"), error));
  EXPECT_NE(error.find("absent.json"), std::string::npos) << error;
}

TEST(LessonParse, AHiddenAnswerCellOrATiedKeyIsRefused) {
  json j = base_lesson();
  j["steps"][0]["example"] = "fear-is-the";
  j["steps"][0]["question"]["answer"] = {{"stage", "masked"}, {"row", 0}, {"col", 2}};
  EXPECT_NE(parse_error(j).find("is hidden (−∞)"), std::string::npos);
  // Equal keys tie: no single right answer.
  json k = base_lesson();
  k["steps"][0].erase("example");
  k["steps"][0]["scenario"] = {{"q", {{1, 0}}}, {"k", {{0, 1}, {0, 2}}}, {"v", {{1}, {2}}}};
  k["steps"][0]["select"] = {0};
  k["steps"][0]["highlight"] = json::array();
  k["steps"][0]["question"] = {{"kind", "key"}, {"prompt", "p"}, {"answer", {{"row", 0}}}};
  EXPECT_NE(parse_error(k).find("tie"), std::string::npos);
}

TEST(LessonParse, LmStepsNameTheirLayerHeadAndPosition) {
  const std::string folder = test::temp_path("lesson-lm-view");
  test::write_test_model(test::make_test_model({}), folder);
  json j = base_lesson();
  j["steps"][1]["lm"] = {{"model", folder}, {"text", " a b a b"}, {"tab", "next"},
                         {"layer", 1},      {"head", 0},          {"position", 2}};
  std::string error;
  const std::optional<Lesson> l = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(l) << error;
  EXPECT_EQ(l->steps[1].lm_layer, 1);
  EXPECT_EQ(l->steps[1].lm_head, 0);
  EXPECT_EQ(l->steps[1].lm_position, 2);
  EXPECT_EQ(l->steps[0].lm_position, -1);  // none: the last token
  // Refused, each naming its field: a layer without its head, negative numbers, a string.
  j["steps"][1]["lm"].erase("head");
  EXPECT_NE(parse_error(j).find("step 2 (“Weights”): lm.head: give layer and head together"),
            std::string::npos);
  j["steps"][1]["lm"]["head"] = 0;
  j["steps"][1]["lm"]["position"] = -1;
  EXPECT_NE(parse_error(j).find("lm.position"), std::string::npos);
  j["steps"][1]["lm"]["position"] = "x";
  EXPECT_NE(parse_error(j).find("lm.position"), std::string::npos);
}

TEST(LessonParse, AStepSetsItsDecimals) {
  json j = base_lesson();
  j["steps"][1]["decimals"] = 4;
  std::string error;
  const std::optional<Lesson> l = parse_lesson(j.dump(), "lesson.json", error);
  ASSERT_TRUE(l) << error;
  EXPECT_EQ(l->steps[1].decimals, 4);
  EXPECT_EQ(shown_decimals(l->steps[1]), 4);
  EXPECT_EQ(l->steps[0].decimals, -1);
  EXPECT_EQ(shown_decimals(l->steps[0]), 2);  // the heatmap's default
  for (int bad : {0, 5}) {
    j["steps"][1]["decimals"] = bad;
    EXPECT_NE(parse_error(j).find("step 2 (“Weights”): decimals"), std::string::npos) << bad;
  }
}

// One query against three 1-dimensional keys with scale 1: weights = softmax(q·k_j), computed
// here in double precision.
std::vector<double> softmax_of(double q, const std::vector<double>& k) {
  std::vector<double> w;
  double sum = 0;
  for (double kj : k) sum += std::exp(q * kj);
  for (double kj : k) w.push_back(std::exp(q * kj) / sum);
  return w;
}

json one_query_step(double q, const std::vector<double>& k) {
  json step = {{"title", "Which key?"}, {"stage", "weights"}};
  json keys = json::array(), values = json::array();
  for (size_t j = 0; j < k.size(); ++j) {
    keys.push_back({k[j]});
    values.push_back({static_cast<double>(j)});
  }
  step["scenario"] = {{"q", {{q}}}, {"k", keys}, {"v", values}, {"scale", 1}};
  step["question"] = {{"kind", "key"}, {"prompt", "p"}, {"answer", {{"row", 0}}}};
  return step;
}

TEST(LessonParse, AKeyQuestionOnANearTieIsRefused) {
  // Keys 0.2 and 0.177 apart by q = 1: weights differ by under 0.01, both show as 0.3x.
  const std::vector<double> tie = {0.2, 0.177, -0.5};
  const std::vector<double> w = softmax_of(1.0, tie);
  ASSERT_GT(w[0], w[1]);
  ASSERT_LT(w[0] - w[1], 0.01);
  json j = base_lesson();
  j["steps"] = json::array({one_query_step(1.0, tie)});
  const std::string error = parse_error(j);
  EXPECT_EQ(error.rfind("lesson.json: step 1 (“Which key?”): question.answer.row: a near-tie at 2 "
                        "decimals",
                        0),
            0u)
      << error;
  // Apart by more than a unit of the second decimal: a fair question.
  const std::vector<double> clear = {0.2, 0.1, -0.5};
  const std::vector<double> wc = softmax_of(1.0, clear);
  ASSERT_GE(wc[0] - wc[1], 0.01);
  j["steps"] = json::array({one_query_step(1.0, clear)});
  std::string e;
  EXPECT_TRUE(parse_lesson(j.dump(), "lesson.json", e)) << e;
  // At 4 decimals (the step's own) the near-tie is told apart.
  j["steps"] = json::array({one_query_step(1.0, tie)});
  j["steps"][0]["decimals"] = 4;
  EXPECT_TRUE(parse_lesson(j.dump(), "lesson.json", e)) << e;
}

TEST(LessonParse, ANumberQuestionOnARoundingEdgeIsRefused) {
  // q·k = 0.5 × 0.69 = 0.345: 0.34 or 0.35 at 2 decimals, depending on the working.
  json j = base_lesson();
  json step = {{"title", "Score"}, {"stage", "scores"}};
  step["scenario"] = {{"q", {{0.5}}}, {"k", {{0.69}, {0.1}}}, {"v", {{1}, {2}}}};
  step["question"] = {{"kind", "number"},
                      {"prompt", "q·k?"},
                      {"answer", {{"stage", "scores"}, {"row", 0}, {"col", 0}}}};
  j["steps"] = json::array({step});
  const std::string error = parse_error(j);
  EXPECT_NE(error.find("step 1 (“Score”): question.answer: the answer 0.3450 is on the rounding "
                       "edge between 0.34 and 0.35"),
            std::string::npos)
      << error;
  std::string e;
  j["steps"][0]["question"]["tolerance"] = 0.01;  // both neighbours are right
  EXPECT_TRUE(parse_lesson(j.dump(), "lesson.json", e)) << e;
  j["steps"][0]["question"].erase("tolerance");
  j["steps"][0]["question"]["answer"]["col"] = 1;  // 0.05: nowhere near an edge
  EXPECT_TRUE(parse_lesson(j.dump(), "lesson.json", e)) << e;
}

// The reference's value for a question, computed from the step's scenario in double precision
// with plain loops (tests/support/reference.h), never by the engine under test.
struct Expected {
  double number = NAN;
  int key = -1;
};

Expected independent_answer(const LessonStep& step) {
  const LessonQuestion& q = *step.question;
  const AnswerRef& a = q.answer;
  const AttentionProblem p = to_problem(step.scenario);
  const test::RefResult ref = test::reference_attention(p);
  Expected e;
  if (q.kind == QuestionKind::kKey) {
    const test::RefMat& w = a.stage == StageId::kWeights ? ref.weights[a.head] : ref.scores[a.head];
    EXPECT_TRUE(a.stage == StageId::kWeights || a.stage == StageId::kScores);
    for (int j = 0; j < w.cols; ++j) {
      if (std::isinf(ref.masked[a.head](a.row, j))) continue;
      if (e.key < 0 || (a.smallest ? w(a.row, j) < w(a.row, e.key) : w(a.row, j) > w(a.row, e.key)))
        e.key = j;
    }
    return e;
  }
  if (!a.property.empty()) {
    const int d_k = static_cast<int>(p.input.q[0].cols());
    if (a.property == "scale")
      e.number = step.scenario.options.scale ? *step.scenario.options.scale : 1 / std::sqrt(d_k);
    if (a.property == "d_k") e.number = d_k;
    if (a.property == "heads") e.number = static_cast<double>(p.input.q.size());
    if (a.property == "kv_heads") e.number = static_cast<double>(p.input.k.size());
    if (a.property == "kv_head")  // query head h uses key/value head h ÷ (H / H_kv)
      e.number = static_cast<double>(a.head / (p.input.q.size() / p.input.k.size()));
    if (a.property == "visible_keys") {
      int n = 0;
      for (int j = 0; j < ref.masked[a.head].cols; ++j)
        n += std::isinf(ref.masked[a.head](a.row, j)) ? 0 : 1;
      e.number = n;
    }
    return e;
  }
  const std::map<StageId, const std::vector<test::RefMat>*> stages = {
      {StageId::kScores, &ref.scores},
      {StageId::kScaled, &ref.scaled},
      {StageId::kMasked, &ref.masked},
      {StageId::kWeights, &ref.weights},
      {StageId::kOutput, &ref.output}};
  EXPECT_TRUE(a.stage);
  if (!a.stage) return {};
  if (stages.count(*a.stage)) return {(*stages.at(*a.stage))[a.head](a.row, a.col), -1};
  // The output projection: concat of the heads' outputs times W_O plus b_O, by loops.
  EXPECT_EQ(a.stage, StageId::kProjected);
  const ProjectionSpec& pr = step.scenario.projection;
  double sum = pr.b_o.size() ? pr.b_o(a.col) : 0.0;
  int r = 0;
  for (const test::RefMat& o : ref.output)
    for (int d = 0; d < o.cols; ++d, ++r) sum += o(a.row, d) * pr.w_o(r, a.col);
  e.number = sum;
  return e;
}

std::vector<Lesson> course() { return test::built_in_course(); }

TEST(Course, EveryQuestionMatchesAnIndependentComputation) {
  int numbers = 0, keys = 0, statements = 0;
  for (const Lesson& l : course()) {
    EXPECT_FALSE(l.title.empty());
    for (size_t i = 0; i < l.steps.size(); ++i) {
      const LessonStep& s = l.steps[i];
      EXPECT_FALSE(s.title.empty());
      if (!s.question) continue;
      SCOPED_TRACE(l.path + " step " + std::to_string(i + 1));
      const LessonQuestion& q = *s.question;
      const AttentionTrace t = lesson_step_trace(s);
      std::string error;
      if (q.kind == QuestionKind::kStatement) {
        ++statements;
        EXPECT_GE(statement_answer(q), 0);
        EXPECT_TRUE(check_choice(q, t, statement_answer(q)).correct);
        continue;
      }
      const Expected e = independent_answer(s);
      if (q.kind == QuestionKind::kNumber) {
        ++numbers;
        const std::optional<double> got = number_answer(q, t, error);
        ASSERT_TRUE(got) << error;
        EXPECT_NEAR(*got, e.number, 1e-5);
        // The right number passes; one off by more than the tolerance (and a displayed digit)
        // does not.
        EXPECT_TRUE(check_number(q, t, e.number).correct);
        EXPECT_FALSE(check_number(q, t, e.number + q.tolerance + 0.01).correct);
      } else {
        ++keys;
        const std::optional<int> got = key_answer(q, t, error);
        ASSERT_TRUE(got) << error;
        EXPECT_EQ(*got, e.key);
        EXPECT_TRUE(check_choice(q, t, e.key).correct);
        EXPECT_FALSE(check_choice(q, t, (e.key + 1) % t.n_k).correct);
      }
    }
  }
  EXPECT_GE(numbers, 15);
  EXPECT_GE(keys, 6);
  EXPECT_GE(statements, 10);
}

const LessonStep& step_titled(const std::vector<Lesson>& c, const std::string& title);

TEST(Course, EveryKeyQuestionIsClearAtTheDecimalsShown) {
  // The gap between the winner and the runner-up from the reference (double loops), at least
  // one unit of the last decimal the step shows.
  int keys = 0;
  for (const Lesson& l : course())
    for (size_t i = 0; i < l.steps.size(); ++i) {
      const LessonStep& s = l.steps[i];
      if (!s.question || s.question->kind != QuestionKind::kKey) continue;
      SCOPED_TRACE(l.path + " step " + std::to_string(i + 1));
      const AnswerRef& a = s.question->answer;
      const test::RefResult ref = test::reference_attention(to_problem(s.scenario));
      const test::RefMat& w =
          a.stage == StageId::kWeights ? ref.weights[a.head] : ref.scores[a.head];
      std::vector<double> row;
      for (int j = 0; j < w.cols; ++j)
        if (!std::isinf(ref.masked[a.head](a.row, j)))
          row.push_back(a.smallest ? -w(a.row, j) : w(a.row, j));
      std::sort(row.rbegin(), row.rend());
      if (row.size() < 2) continue;
      ++keys;
      EXPECT_GE(row[0] - row[1], std::pow(10.0, -shown_decimals(s)) - 1e-9);
    }
  EXPECT_GE(keys, 6);
}

TEST(Course, NumbersInTheTextKeepTogether) {
  // The app wraps at spaces: "4 × 3" could end a line at "4 ×". Every text a step shows.
  const std::vector<std::string> ops = {"×", "÷", "/", "·", "*", "%"};
  for (const Lesson& l : course())
    for (size_t i = 0; i < l.steps.size(); ++i) {
      const LessonStep& s = l.steps[i];
      std::vector<std::string> texts = s.text;
      if (s.question) {
        texts.push_back(s.question->prompt);
        texts.push_back(s.question->explanation);
        for (const Choice& c : s.question->choices) texts.push_back(c.text);
      }
      for (const std::string& t : texts)
        for (const std::string& op : ops)
          for (size_t at = t.find(" " + op); at != std::string::npos;
               at = t.find(" " + op, at + 1)) {
            const bool digit_before = at > 0 && std::isdigit(static_cast<unsigned char>(t[at - 1]));
            const size_t after = at + 1 + op.size();
            const bool number_after =
                op == "%" || (after + 1 < t.size() && t[after] == ' ' &&
                              std::isdigit(static_cast<unsigned char>(t[after + 1])));
            EXPECT_FALSE(digit_before && number_after)
                << l.path << " step " << i + 1 << ": \"" << t << "\"";
          }
    }
}

TEST(Course, LanguageModelStepsPointInsideTheirModel) {
  int pointed = 0;
  for (const Lesson& l : course())
    for (size_t i = 0; i < l.steps.size(); ++i) {
      const LessonStep& s = l.steps[i];
      if (s.lm_model.empty()) continue;
      SCOPED_TRACE(l.path + " step " + std::to_string(i + 1));
      std::string error;
      lm::Model m;
      ASSERT_TRUE(lm::load_model(lm::resolve_model_folder(s.lm_model, error), m, error)) << error;
      const int T = static_cast<int>(m.tokenizer.encode(s.lm_text).size());
      EXPECT_LT(s.lm_layer, m.config.n_layer);
      EXPECT_LT(s.lm_head, m.config.n_head);
      EXPECT_LT(s.lm_position, T);
      pointed += s.lm_layer >= 0 || s.lm_position >= 0 ? 1 : 0;
    }
  EXPECT_GE(pointed, 4);
}

TEST(Course, TheInductionLessonQuotesWhatTheModelComputes) {
  const std::vector<Lesson> c = course();
  const LessonStep& head = step_titled(c, "Layer 1: the induction head");
  const LessonStep& next = step_titled(c, "The prediction");
  std::string error;
  lm::Model m;
  ASSERT_TRUE(lm::load_model(lm::resolve_model_folder(next.lm_model, error), m, error)) << error;
  const std::vector<int> ids = m.tokenizer.encode(next.lm_text);
  const int T = static_cast<int>(ids.size());
  // The step points at the second "x", whose first occurrence is followed by "m".
  ASSERT_EQ(next.lm_position, 17);
  EXPECT_EQ(m.tokenizer.display(ids[17]), " x");
  EXPECT_EQ(m.tokenizer.display(ids[1]), " x");
  EXPECT_EQ(m.tokenizer.display(ids[2]), " m");
  lm::Activations a;
  lm::gpt_forward(m, ids, 1, T, a);
  // The head view's words for the isolated query ("76% → m"), and the text's.
  const float w = a.att_at(m.config, head.lm_layer, 0, head.lm_head)[17 * T + 2];
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", 100 * w);
  EXPECT_NE(head.text[0].find(std::string("about ") + pct + " of its weight goes to “m”"),
            std::string::npos)
      << pct;
  // The next-token chart's top tokens after position 17.
  const auto top = lm::top_tokens_at(m, a, next.lm_position, 3, 1.0);
  ASSERT_GE(top.size(), 2u);
  EXPECT_EQ(m.tokenizer.display(top[0].first), " m");
  std::snprintf(pct, sizeof pct, "%.1f%%", 100 * top[0].second);
  EXPECT_NE(next.text[0].find(std::string("“m” ") + pct), std::string::npos) << pct;
  EXPECT_LT(top[1].second, 0.04);
}

const LessonStep& step_titled(const std::vector<Lesson>& c, const std::string& title) {
  for (const Lesson& l : c)
    for (const LessonStep& s : l.steps)
      if (s.title == title) return s;
  ADD_FAILURE() << "no step titled " << title;
  return c.front().steps.front();
}

TEST(Course, FearIsByHandHasTheTrueNumbers) {
  const std::vector<Lesson> c = course();
  std::string error;
  // Hand-derived: q_Fear·k_is = 0.2×0.1 + 0.1×0.4 + 0.8×0.6 = 0.54 (the source says 0.38).
  const LessonStep& s = step_titled(c, "Step 1b: q_Fear · k_is, correctly");
  EXPECT_NEAR(*number_answer(*s.question, lesson_step_trace(s), error), 0.54, 1e-6);
  const LessonStep& o = step_titled(c, "Steps 4–5: the output");
  EXPECT_EQ(answer_text(*o.question, lesson_step_trace(o), 4, error), "0.4772");
  // The KV-cache step's one query gives exactly row 2 of the full causal computation.
  const LessonStep& kv = step_titled(c, "Decoding with a KV cache");
  std::optional<Scenario> fit = load_example("fear-is-the", error);
  ASSERT_TRUE(fit);
  const test::RefResult full = test::reference_attention(to_problem(*fit));
  EXPECT_NEAR(*number_answer(*kv.question, lesson_step_trace(kv), error), full.output[0](2, 0),
              1e-6);
}

TEST(Course, TheCourseFollowsTheSourceInOrder) {
  std::string error;
  std::vector<std::string> titles;
  for (const LessonInfo& l : list_course(error)) titles.push_back(l.title);
  const std::vector<std::string> order = {
      "soft dictionary", "Dot product",     "Softmax",      "weighted sum",     "by hand",
      "Causal",          "Multi-head",      "KV cache",     "Local and global", "seq2seq",
      "Efficient",       "Induction heads", "today's LLMs", "English model"};
  ASSERT_EQ(titles.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i)
    EXPECT_NE(titles[i].find(order[i]), std::string::npos) << titles[i];
}

TEST(LessonRecord, AppendsAStepAtomicallyAndRefusesOtherFiles) {
  std::string error;
  const std::string path = test::temp_path("recorded.json");
  std::optional<Scenario> s = load_example("fear-is-the", error);
  ASSERT_TRUE(s);
  s->options.temperature = 0.5f;
  const std::string step =
      step_json_for_view("Weights — fear-is-the", *s, "fear-is-the", StageId::kWeights, 0, 1, 0);
  ASSERT_TRUE(append_step_to_file(path, "Mine", step, error)) << error;
  ASSERT_TRUE(append_step_to_file(path, "Mine", step, error)) << error;
  std::optional<Lesson> l = load_lesson_file(path, error);
  ASSERT_TRUE(l) << error;
  ASSERT_EQ(l->steps.size(), 2u);
  EXPECT_EQ(l->title, "Mine");
  EXPECT_EQ(l->steps[1].example, "fear-is-the");
  EXPECT_EQ(l->steps[1].stage, StageId::kWeights);
  EXPECT_EQ(l->steps[1].select_query, 1);
  EXPECT_EQ(l->steps[1].select_key, 0);
  EXPECT_EQ(l->steps[1].scenario.options.temperature, 0.5f);
  // An edited scenario is recorded inline, numbers and all.
  s->qkv.q[0](0, 0) = 0.9f;
  ASSERT_TRUE(append_step_to_file(
      path, "Mine", step_json_for_view("Edited", *s, "fear-is-the", StageId::kScores, 0, -1, -1),
      error));
  l = load_lesson_file(path, error);
  ASSERT_TRUE(l) << error;
  EXPECT_TRUE(l->steps[2].inline_scenario);
  EXPECT_FLOAT_EQ(l->steps[2].scenario.qkv.q[0](0, 0), 0.9f);
  // Not a lesson: refused and left as it was.
  const std::string other = test::temp_path("notes.json");
  std::ofstream(other) << "[1, 2, 3]";
  EXPECT_FALSE(append_step_to_file(other, "Mine", step, error));
  std::ifstream in(other);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), "[1, 2, 3]");
}

TEST(LessonsCli, ListsTheCourseAndChecksFiles) {
  test::CliResult r = test::run_cli("lessons");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("01-soft-lookup\tAttention as a soft dictionary lookup\n", 0), 0u) << r.out;
  r = test::run_cli("lessons --check 05-fear-is-by-hand --answers");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("→ 0.5400"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("→ 0.4772"), std::string::npos) << r.out;
  const std::string bad = test::temp_path("bad-lesson.json");
  json j = base_lesson();
  j["steps"][1]["stage"] = "softmax";
  std::ofstream(bad) << j.dump();
  r = test::run_cli("lessons --check '" + bad + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: " + bad + ": step 2 (“Weights”): stage: unknown stage 'softmax'"),
            std::string::npos)
      << r.err;
  r = test::run_cli("lessons --check no-such-lesson");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --check: "), std::string::npos) << r.err;
}

TEST(LessonsCli, WorksheetOfALessonHasItsQuestionsAndAKey) {
  const std::string sheet = test::temp_path("lesson-sheet.pdf"),
                    key = test::temp_path("lesson-key.pdf");
  test::CliResult r = test::run_cli("worksheet --lesson 05-fear-is-by-hand --out '" + sheet +
                                    "' --answers '" + key + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string hand = test::pdf_text(sheet);
  ASSERT_FALSE(hand.empty()) << "pdftotext (poppler-utils) is needed";
  for (const char* s : {"“Fear is” by hand", "Spot the error", "Compute the true q_Fear · k_is",
                        "Q (queries)", "It multiplied q_is by k_is", "Name"})
    EXPECT_NE(hand.find(s), std::string::npos) << s << "\n" << hand;
  for (const char* s : {"0.5400", "0.4772", "Answer:"})
    EXPECT_EQ(hand.find(s), std::string::npos) << s << " gives the answer away";
  const std::string text = test::pdf_text(key);
  for (const char* s : {"Answer key", "Answer: 0.2700", "Answer: 0.5400", "Answer: 0.4772",
                        "Answer: A. It multiplied q_is by k_is"})
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text;
  // --seed would change numbers the questions quote; with --example it is refused.
  r = test::run_cli("worksheet --lesson 05-fear-is-by-hand --seed 3 --out '" + sheet + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --seed"), std::string::npos) << r.err;
  r = test::run_cli("worksheet --lesson 05-fear-is-by-hand --example fear-is --out '" + sheet +
                    "'");
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace attn
