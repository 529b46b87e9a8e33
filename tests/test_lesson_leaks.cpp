// A lesson must not give its answers away: the leak rules `lessons --check` applies to a step's
// words (lesson_leaks.h), one lesson written to break each, and the figures of earlier steps that
// hide a later question's answer (question_secret.h: later_secrets), on screen and on paper.
// Expected numbers are worked by hand from the fear-is example: q_Fear = [0.2, 0.1, 0.8],
// k_Fear = [0.3, 0.5, 0.2], k_is = [0.1, 0.4, 0.6], so score(Fear, Fear) = 0.06 + 0.05 + 0.16 =
// 0.27 and score(Fear, is) = 0.02 + 0.04 + 0.48 = 0.54.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "course.h"
#include "lessons/lesson.h"
#include "lessons/lesson_leaks.h"
#include "lessons/lesson_sheet.h"
#include "lessons/question_secret.h"

namespace attn {
namespace {

using nlohmann::json;

Lesson parse(const json& j) {
  std::string error;
  std::optional<Lesson> l = parse_lesson(j.dump(), "leaky.json", error);
  EXPECT_TRUE(l) << error;
  return l ? *l : Lesson{};
}

json lesson_of(const json& steps) {
  return {{"format", "attention-lab-lesson"}, {"version", 1}, {"title", "Leaky"}, {"steps", steps}};
}

const json kScoreQuestion = {{"kind", "number"},
                             {"prompt", "What is score(Fear, is)?"},
                             {"answer", {{"stage", "scores"}, {"row", 0}, {"col", 1}}}};

std::vector<LeakKind> kinds(const std::vector<LessonLeak>& leaks) {
  std::vector<LeakKind> out;
  for (const LessonLeak& l : leaks) out.push_back(l.kind);
  return out;
}

TEST(LessonLeaks, ANumberAnswerWrittenInItsStepsWordsIsFlagged) {
  json step = {{"title", "Score"},
               {"example", "fear-is"},
               {"stage", "scores"},
               {"question", kScoreQuestion},
               {"text", {"Fear and is score 0.54 together."}}};
  std::vector<LessonLeak> leaks = lesson_leaks(parse(lesson_of(json::array({step}))));
  ASSERT_EQ(kinds(leaks), std::vector<LeakKind>{LeakKind::kNumberInText});
  EXPECT_EQ(leaks[0].step, 0u);
  EXPECT_NE(leaks[0].message.find("step 1 (“Score”): the answer 0.5400"), std::string::npos)
      << leaks[0].message;
  // Written at three decimals it tells the answer as well; a different number does not.
  step["text"] = {"It is 0.540."};
  EXPECT_EQ(lesson_leaks(parse(lesson_of(json::array({step})))).size(), 1u);
  step["text"] = {"Fear with itself scores 0.27."};
  EXPECT_TRUE(lesson_leaks(parse(lesson_of(json::array({step})))).empty());
}

TEST(LessonLeaks, AnEarlierStepsWordsThatWriteALaterAnswerAreFlagged) {
  const json first = {{"title", "The scores"},
                      {"example", "fear-is"},
                      {"stage", "scores"},
                      {"text", {"Fear·is = 0.54 is the largest score."}}};
  const json second = {{"title", "Your turn"}, {"question", kScoreQuestion}};
  const std::vector<LessonLeak> leaks =
      lesson_leaks(parse(lesson_of(json::array({first, second}))));
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0].kind, LeakKind::kNumberInText);
  EXPECT_EQ(leaks[0].step, 1u);
  EXPECT_EQ(leaks[0].where, 0u);
  EXPECT_NE(leaks[0].message.find("step 1 (“The scores”)'s words"), std::string::npos)
      << leaks[0].message;
}

TEST(LessonLeaks, ACountWrittenInItsStepsWordsIsFlagged) {
  // Causal: "is" (row 1) sees Fear and itself, 2 keys.
  json step = {{"title", "Masked"},
               {"example", "fear-is"},
               {"variants", {{"causal", true}}},
               {"stage", "masked"},
               {"text", {"Under the mask “is” sees 2 keys."}},
               {"question",
                {{"kind", "number"},
                 {"prompt", "How many keys may “is” see (1 or 2)?"},
                 {"answer", {{"property", "visible_keys"}, {"row", 1}}}}}};
  EXPECT_EQ(kinds(lesson_leaks(parse(lesson_of(json::array({step}))))),
            std::vector<LeakKind>{LeakKind::kNumberInText});
  // The prompt may name the choices; 12 or 0.2 is not 2.
  step["text"] = {"Under the mask each row sees 12 keys at most, weighted 0.2 or more."};
  EXPECT_TRUE(lesson_leaks(parse(lesson_of(json::array({step})))).empty());
}

TEST(LessonLeaks, AKeyQuestionWhoseWordsNameOnlyItsAnswerIsFlagged) {
  // Row "Fear": softmax of 0.27 and 0.54 puts the most weight on "is".
  json step = {{"title", "Weights"},
               {"example", "fear-is"},
               {"stage", "weights"},
               {"text", {"Look how much of “Fear”'s weight goes to “is”."}},
               {"question",
                {{"kind", "key"},
                 {"prompt", "Which key does “Fear” weigh most?"},
                 {"answer", {{"stage", "weights"}, {"row", 0}}}}}};
  std::vector<LessonLeak> leaks = lesson_leaks(parse(lesson_of(json::array({step}))));
  ASSERT_EQ(kinds(leaks), std::vector<LeakKind>{LeakKind::kKeyNamed});
  EXPECT_NE(leaks[0].message.find("name “is”"), std::string::npos) << leaks[0].message;
  step["text"] = {"Compare the two weights of the row."};
  EXPECT_TRUE(lesson_leaks(parse(lesson_of(json::array({step})))).empty());
}

TEST(LessonLeaks, OneChoiceAloneCarryingAReasonIsFlagged) {
  json step = {{"title", "Why"},
               {"example", "fear-is"},
               {"stage", "weights"},
               {"question",
                {{"kind", "statement"},
                 {"prompt", "Add 10 to every score of a row. Its weights…"},
                 {"choices",
                  {{{"text", "stay the same, because the factor e^10 cancels"}, {"correct", true}},
                   {{"text", "all grow"}},
                   {{"text", "become equal"}}}}}}};
  std::vector<LessonLeak> leaks = lesson_leaks(parse(lesson_of(json::array({step}))));
  ASSERT_EQ(kinds(leaks), std::vector<LeakKind>{LeakKind::kLoneJustification});
  EXPECT_NE(leaks[0].message.find("choice A alone gives a reason"), std::string::npos)
      << leaks[0].message;
  step["question"]["choices"][0]["text"] = "stay the same";
  EXPECT_TRUE(lesson_leaks(parse(lesson_of(json::array({step})))).empty());
  // Every choice with a reason, or none: nothing singles one out.
  step["question"]["choices"] = {{{"text", "stay the same: e^10 cancels"}, {"correct", true}},
                                 {{"text", "all grow: each e^s grows"}},
                                 {{"text", "become equal: 10 dwarfs them"}}};
  EXPECT_TRUE(lesson_leaks(parse(lesson_of(json::array({step})))).empty());
}

TEST(LessonLeaks, EveryBuiltInLessonPassesTheRules) {
  for (const Lesson& l : test::built_in_course())
    for (const LessonLeak& leak : lesson_leaks(l)) ADD_FAILURE() << l.path << ": " << leak.message;
}

// Step 1 shows the scores; step 2 asks score(Fear, is); step 3 asks a weight at temperature 2.
Lesson two_questions_later() {
  const json first = {{"title", "The scores"}, {"example", "fear-is"}, {"stage", "scores"}};
  const json second = {{"title", "Your turn"}, {"question", kScoreQuestion}};
  const json third = {{"title", "Cooler"},
                      {"variants", {{"temperature", 2}}},
                      {"stage", "weights"},
                      {"question",
                       {{"kind", "number"},
                        {"prompt", "weight(Fear → is)?"},
                        {"answer", {{"stage", "weights"}, {"row", 0}, {"col", 1}}}}}};
  return parse(lesson_of(json::array({first, second, third})));
}

TEST(LaterSecrets, AnEarlierStepHidesALaterAnswerItsFigureHolds) {
  const Lesson l = two_questions_later();
  const std::vector<QuestionSecret> own = own_secrets(l);
  ASSERT_EQ(own.size(), 3u);
  EXPECT_FALSE(own[0].active);
  const AttentionTrace t = lesson_step_trace(l.steps[0]);
  auto all_open = [](size_t) { return true; };
  const QuestionSecret s = step_secret(l, own, 0, t, false, all_open);
  EXPECT_FALSE(s.active);  // step 1 asks nothing itself
  EXPECT_TRUE(s.hides_anything());
  EXPECT_TRUE(s.conceals(StageId::kScores, 0, 0, 1));
  EXPECT_FALSE(s.conceals(StageId::kScores, 0, 0, 0));
  EXPECT_TRUE(s.conceals_stage(StageId::kScores));
  EXPECT_TRUE(s.tells("0.54"));
  EXPECT_FALSE(s.tells("0.27"));
  EXPECT_TRUE(s.hides_working(0, 0));
  EXPECT_FALSE(s.hides_working(0, 1));
  // Step 1's weights are at temperature 1, step 3 asks them at 2: its numbers are not step 1's.
  EXPECT_FALSE(s.conceals(StageId::kWeights, 0, 0, 1));
  // Once step 2 is answered, step 1 shows its cell again.
  const QuestionSecret answered = step_secret(l, own, 0, t, false, [](size_t j) { return j != 1; });
  EXPECT_FALSE(answered.hides_anything());
  // An edit that changes score(Fear, is) changes the numbers: nothing to hide any more.
  Scenario edited = l.steps[0].scenario;
  edited.qkv.q[0](0, 2) = 0.7f;  // 0.02 + 0.04 + 0.42 = 0.48
  const QuestionSecret after_edit = step_secret(l, own, 0, scenario_trace(edited), false, all_open);
  EXPECT_FALSE(after_edit.hides_anything());
}

// Lesson 09 asks in step 3 how many keys [CLS] may see; step 2's figure (the same mask, [CLS]
// global) shows [CLS]'s row whole, so it hides that row until step 3 is answered.
TEST(LaterSecrets, AnEarlierMaskHidesTheRowALaterCountAsksAbout) {
  std::string error;
  std::optional<Lesson> l = load_lesson_file(
      std::string(ATTN_SOURCE_DIR) + "/assets/lessons/09-local-and-global.json", error);
  ASSERT_TRUE(l) << error;
  ASSERT_GE(l->steps.size(), 3u);
  ASSERT_TRUE(l->steps[2].question);
  ASSERT_EQ(l->steps[2].question->answer.property, "visible_keys");
  ASSERT_EQ(l->steps[2].question->answer.row, 0);
  const std::vector<QuestionSecret> own = own_secrets(*l);
  const AttentionTrace t = lesson_step_trace(l->steps[1]);
  const QuestionSecret s = step_secret(*l, own, 1, t, true, [](size_t) { return true; });
  for (int j = 0; j < t.n_k; ++j) EXPECT_TRUE(s.conceals(StageId::kMasked, 0, 0, j)) << j;
  EXPECT_FALSE(s.conceals(StageId::kMasked, 0, 1, 0));
  // Step 1 has no global token: its row of [CLS] is another, and stays in view.
  const QuestionSecret first =
      step_secret(*l, own, 0, lesson_step_trace(l->steps[0]), true, [](size_t) { return true; });
  EXPECT_FALSE(first.conceals(StageId::kMasked, 0, 0, 0));
}

// Lesson 05 asks score(Fear, Fear) in step 2 and score(Fear, is) in step 4: on the worksheet,
// question 1's figure (the scores) hides both cells; on class mode's picture of step 2 as well.
TEST(LaterSecrets, AWorksheetsEarlierFigureHidesALaterAnswer) {
  std::string error;
  std::optional<Lesson> l = load_lesson_file(
      std::string(ATTN_SOURCE_DIR) + "/assets/lessons/05-fear-is-by-hand.json", error);
  ASSERT_TRUE(l) << error;
  std::vector<AttentionTrace> traces;
  const std::optional<LessonSheet> sheet = lesson_sheet(*l, traces, 4, error);
  ASSERT_TRUE(sheet) << error;
  const SheetFigure& f = sheet->questions.at(0).figure;
  ASSERT_EQ(f.stage, StageId::kScores);
  ASSERT_EQ(f.concealed.size(), 4u);  // 2 × 2
  EXPECT_TRUE(f.concealed[0]);        // (Fear, Fear): its own question
  EXPECT_TRUE(f.concealed[1]);        // (Fear, is): question 3's
  EXPECT_FALSE(f.concealed[2]);
  EXPECT_FALSE(f.concealed[3]);
  ASSERT_TRUE(f.tells);
  EXPECT_TRUE(f.tells("0.54"));
}

}  // namespace
}  // namespace attn
