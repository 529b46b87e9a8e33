// What a lesson question hides (lessons/question_secret.h), on the built-in lessons' questions:
// the cell or row that holds the answer, with the numbers checked by hand from the source's
// vectors, and the labels that would tell it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lessons/lesson.h"
#include "lessons/question_secret.h"

namespace attn {
namespace {

// Step `step` (1-based) of the built-in lesson whose file name starts with `prefix`.
LessonStep course_step(const std::string& prefix, int step) {
  std::string error;
  for (const LessonInfo& info : list_course(error)) {
    const std::string file = info.path.substr(info.path.rfind('/') + 1);
    if (file.rfind(prefix, 0) != 0) continue;
    std::optional<Lesson> l = load_lesson_file(info.path, error);
    EXPECT_TRUE(l) << error;
    return l->steps.at(static_cast<size_t>(step - 1));
  }
  ADD_FAILURE() << "no lesson " << prefix << ": " << error;
  return {};
}

QuestionSecret secret_of(const LessonStep& s) {
  EXPECT_TRUE(s.question);
  return question_secret(*s.question, lesson_step_trace(s));
}

TEST(QuestionSecret, AScoreQuestionHidesItsCellAndTheLabelsThatWriteIt) {
  // Lesson 05 step 2: q_Fear · k_Fear = 0.2×0.3 + 0.1×0.5 + 0.8×0.2 = 0.27.
  const QuestionSecret s = secret_of(course_step("05", 2));
  ASSERT_TRUE(s.active);
  EXPECT_EQ(s.stage, StageId::kScores);
  EXPECT_TRUE(s.conceals(StageId::kScores, 0, 0, 0));
  EXPECT_FALSE(s.conceals(StageId::kScores, 0, 0, 1));
  EXPECT_FALSE(s.conceals(StageId::kScaled, 0, 0, 0));
  ASSERT_EQ(s.values.size(), 1u);
  EXPECT_NEAR(s.values[0], 0.2 * 0.3 + 0.1 * 0.5 + 0.8 * 0.2, 1e-6);
  EXPECT_TRUE(s.narration);
  EXPECT_TRUE(s.tells("0.27"));
  EXPECT_TRUE(s.tells("min 0.2700"));
  EXPECT_TRUE(s.tells("= 0.270 ("));
  EXPECT_FALSE(s.tells("0.54"));
  EXPECT_FALSE(s.tells("10.27"));
  EXPECT_FALSE(s.tells("0.3"));  // one decimal is too coarse to tell an answer checked to 0.005
  EXPECT_FALSE(s.tells("Step 2 of 7"));
  EXPECT_FALSE(s.tells("0.2×0.3 + 0.1×0.5"));
}

TEST(QuestionSecret, AWeightOrKeyQuestionHidesTheWholeRow) {
  // Lesson 03 step 1: the weight of "Fear" on "is"; the row's other weight would tell it.
  const QuestionSecret w = secret_of(course_step("03", 1));
  ASSERT_TRUE(w.active);
  EXPECT_EQ(w.stage, StageId::kWeights);
  EXPECT_EQ(w.row, 0);
  EXPECT_EQ(w.col, -1);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(w.conceals(StageId::kWeights, 0, 0, j));
  EXPECT_FALSE(w.conceals(StageId::kWeights, 0, 1, 0));
  // Lesson 01 step 3: which key "Fear" weighs most.
  const QuestionSecret k = secret_of(course_step("01", 3));
  ASSERT_TRUE(k.active);
  EXPECT_EQ(k.stage, StageId::kWeights);
  EXPECT_EQ(k.col, -1);
  EXPECT_TRUE(k.conceals(StageId::kWeights, 0, 0, 1));
  double sum = 0;
  for (double v : k.values) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-6);  // the row's visible weights
}

TEST(QuestionSecret, PropertiesHideTheirFigures) {
  // Lesson 02 step 3: the factor 1/√3 = 0.5774 and √3 = 1.7321.
  const QuestionSecret scale = secret_of(course_step("02", 3));
  ASSERT_TRUE(scale.active);
  EXPECT_TRUE(scale.scale);
  EXPECT_FALSE(scale.stage);
  EXPECT_TRUE(scale.tells("scale = 1/√d_k = 0.5774"));
  EXPECT_TRUE(scale.tells("÷ 1.732"));
  EXPECT_FALSE(scale.conceals(StageId::kScaled, 0, 0, 0));
  // Lesson 08 step 3: which key/value head query head 3 uses (3 ÷ (4/2) = 1).
  const LessonStep gqa = course_step("08", 3);
  const QuestionSecret kv = secret_of(gqa);
  ASSERT_TRUE(kv.active);
  EXPECT_TRUE(kv.kv_map);
  EXPECT_FALSE(kv.shape);
  std::string error;
  EXPECT_EQ(number_answer(*gqa.question, lesson_step_trace(gqa), error), 1.0) << error;
  // Lesson 07 step 1: how many heads (the status bar's H would say).
  const QuestionSecret heads = secret_of(course_step("07", 1));
  EXPECT_TRUE(heads.shape);
  EXPECT_FALSE(heads.kv_map);
}

TEST(QuestionSecret, AVisibleKeysQuestionHidesItsRowWhereverTheMaskShows) {
  // Lesson 11 step 2: with a window of 2 on each side, "fox" (position 4 of 8) sees positions
  // 2..6, five keys. Counting the row's unhatched cells would give that away.
  const LessonStep step = course_step("11", 2);
  const QuestionSecret s = secret_of(step);
  ASSERT_TRUE(s.active);
  EXPECT_TRUE(s.mask_row);
  EXPECT_FALSE(s.shape);
  std::string error;
  EXPECT_EQ(number_answer(*step.question, lesson_step_trace(step), error), 5.0) << error;
  for (StageId shows_mask : {StageId::kMasked, StageId::kWeights}) {
    EXPECT_TRUE(s.conceals_stage(shows_mask));
    for (int j = 0; j < 8; ++j) EXPECT_TRUE(s.conceals(shows_mask, 0, 4, j)) << j;
    EXPECT_FALSE(s.conceals(shows_mask, 0, 3, 4));  // other rows stay
  }
  // The scores before the mask say nothing about it.
  EXPECT_FALSE(s.conceals_stage(StageId::kScores));
  EXPECT_FALSE(s.conceals(StageId::kScaled, 0, 4, 4));
  EXPECT_TRUE(s.narration);
  // Lesson 06 step 2 asks the same of a causal mask: "is" (row 1) sees "Fear" and itself.
  const LessonStep causal = course_step("06", 2);
  const QuestionSecret c = secret_of(causal);
  EXPECT_TRUE(c.mask_row);
  EXPECT_EQ(c.row, 1);
  EXPECT_TRUE(c.conceals(StageId::kMasked, 0, 1, 2));
  EXPECT_EQ(number_answer(*causal.question, lesson_step_trace(causal), error), 2.0) << error;
}

TEST(QuestionSecret, AStatementHidesNothing) {
  const QuestionSecret s = secret_of(course_step("01", 2));
  EXPECT_FALSE(s.active);
  EXPECT_FALSE(s.conceals(StageId::kWeights, 0, 0, 0));
  EXPECT_FALSE(s.tells("0.27"));
}

}  // namespace
}  // namespace attn
