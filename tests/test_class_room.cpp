// Class mode's classroom (app/gui/model/class_room.h) without a network: answer validation, one
// answer per device, the rate limits on a fake clock, the counts, the distribution and the CSV.
// The answers are derived by hand from fear-is (assets/examples/fear-is.json):
// Q row 0 = [0.2, 0.1, 0.8], K = [[0.3, 0.5, 0.2], [0.1, 0.4, 0.6]], so the scores of "Fear" are
// 0.06 + 0.05 + 0.16 = 0.27 for "Fear" and 0.02 + 0.04 + 0.48 = 0.54 for "is": "is" weighs most.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gui/model/class_room.h"
#include "reference.h"

namespace attn {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

const Lesson& test_lesson() {
  static const Lesson lesson = [] {
    const std::string text = R"({
      "format": "attention-lab-lesson", "version": 1, "title": "Class test",
      "steps": [
        {"title": "Scores", "example": "fear-is", "stage": "scores",
         "question": {"kind": "number", "prompt": "What is the score of Fear and is?",
                      "answer": {"stage": "scores", "row": 0, "col": 1}, "tolerance": 0.01}},
        {"title": "Weights", "stage": "weights",
         "question": {"kind": "key", "prompt": "Which key does Fear weigh most?",
                      "answer": {"stage": "weights", "row": 0}}},
        {"title": "Why, really", "stage": "weights",
         "question": {"kind": "statement", "prompt": "Pick", "choices": [
           {"text": "softmax keeps the order", "correct": true}, {"text": "it does not"}]}},
        {"title": "Look", "stage": "output"}
      ]})";
    std::string error;
    std::optional<Lesson> l = parse_lesson(text, "class-test.json", error);
    EXPECT_TRUE(l) << error;
    return *l;
  }();
  return lesson;
}

ClassStep step(int i, const std::string& svg = "<svg/>") {
  const LessonStep& s = test_lesson().steps.at(static_cast<size_t>(i));
  ClassStep c;
  c.index = i;
  c.title = s.title;
  c.question = s.question;
  c.trace = lesson_step_trace(s);
  c.svg = svg;
  return c;
}

// A clock the test moves by hand.
struct FakeClock {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1)};
  ClassRoom::Clock fn() {
    return [this] { return now; };
  }
};

TEST(ClassRoom, NumberQuestionsTakeOnlyFiniteNumbers) {
  ClassRoom room("1234");
  room.publish(step(0));
  int device = 0;  // one each: a device may send only 5 answers a second
  for (const char* bad : {"abc", "", "0.5x", "nan", "inf", "1e999", "0,54"}) {
    const AnswerResult r = room.answer("dev" + std::to_string(device++), bad, "");
    EXPECT_EQ(r.status, AnswerStatus::kInvalid) << bad;
    EXPECT_NE(r.error.find("Type a number"), std::string::npos) << bad << ": " << r.error;
  }
  EXPECT_EQ(room.counts().answered, 0);
  EXPECT_EQ(room.answer("dev1", " 0.54 ", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev2",
                        "\xE2\x88\x92"
                        "0.5",
                        "")
                .status,
            AnswerStatus::kOk);  // −0.5
  EXPECT_EQ(room.counts().answered, 2);
}

TEST(ClassRoom, ChoiceQuestionsTakeOnlyTheirChoices) {
  ClassRoom room("1234");
  room.publish(step(1));
  const json state = json::parse(room.state_json());
  EXPECT_EQ(state["kind"], "choice");
  EXPECT_EQ(state["choices"], json({"Fear", "is"}));
  for (const char* bad : {"was", "1", "", "is "}) {
    const AnswerResult r = room.answer("dev1", bad, "");
    EXPECT_EQ(r.status, AnswerStatus::kInvalid) << bad;
    EXPECT_EQ(r.error, "that is not one of the choices");
  }
  EXPECT_EQ(room.answer("dev1", "is", "").status, AnswerStatus::kOk);
}

TEST(ClassRoom, StatementsAreLetteredAsOnTheProjectorAndKeysAreNot) {
  ClassRoom room("1234");
  room.publish(step(1));  // a key question: its choices are the tokens themselves
  EXPECT_EQ(json::parse(room.state_json())["lettered"], false);
  ClassStep statement = step(1);
  statement.question->kind = QuestionKind::kStatement;
  statement.question->choices = {{"the weights sum to 1", true}, {"they sum to 3", false}};
  room.publish(statement);
  const json state = json::parse(room.state_json());
  EXPECT_EQ(state["kind"], "choice");
  EXPECT_EQ(state["lettered"], true);
  EXPECT_EQ(state["choices"], json({"the weights sum to 1", "they sum to 3"}));
}

TEST(ClassRoom, AStepWithoutAQuestionTakesNoAnswer) {
  ClassRoom room("1234");
  EXPECT_EQ(room.answer("dev1", "1", "").error, "this step asks no question");
  room.publish(step(3));
  const json state = json::parse(room.state_json());
  EXPECT_TRUE(state["question"].is_null());
  EXPECT_TRUE(state["kind"].is_null());
  EXPECT_EQ(room.answer("dev1", "1", "").status, AnswerStatus::kInvalid);
}

TEST(ClassRoom, OneAnswerPerDeviceTheLatestCounts) {
  ClassRoom room("1234");
  room.publish(step(0));
  EXPECT_EQ(room.answer("dev1", "0.1", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev1", "0.54", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.counts().answered, 1);
  ClassDistribution d = room.distribution();
  EXPECT_EQ(d.total, 1);
  EXPECT_EQ(d.right, 1);  // the replacement, not the first guess
  // Publishing the same step again (the app re-applies it) keeps the answer.
  room.publish(step(0));
  EXPECT_EQ(room.counts().answered, 1);
  // Another step has its own answers; coming back finds the first ones.
  room.publish(step(1));
  EXPECT_EQ(room.counts().answered, 0);
  room.publish(step(0));
  EXPECT_EQ(room.counts().answered, 1);
}

TEST(ClassRoom, AnswersForAnotherStepAreRefused) {
  ClassRoom room("1234");
  room.publish(step(1));
  const AnswerResult r = room.answer("dev1", "is", "", /*step=*/1);
  EXPECT_EQ(r.status, AnswerStatus::kInvalid);
  EXPECT_EQ(r.error, "the teacher has moved on to step 2");
  EXPECT_EQ(room.answer("dev1", "is", "", 2).status, AnswerStatus::kOk);
}

TEST(ClassRoom, ClientIdsAndNamesAreChecked) {
  ClassRoom room("1234");
  room.publish(step(0));
  for (const std::string& bad :
       {std::string(""), std::string("a b"), std::string("<x>"), std::string(65, 'a')})
    EXPECT_EQ(room.answer(bad, "0.5", "").status, AnswerStatus::kInvalid) << bad;
  EXPECT_EQ(room.answer(std::string(64, 'a'), "0.5", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev1", "0.5", std::string(61, 'n')).status, AnswerStatus::kInvalid);
  EXPECT_EQ(room.answer("dev1", "0.5", "Ana\nBob").status, AnswerStatus::kInvalid);
  EXPECT_EQ(room.answer("dev1", std::string(201, '1'), "").status, AnswerStatus::kInvalid);
  EXPECT_EQ(room.answer("dev1", "0.5", "  Ana  ").status, AnswerStatus::kOk);
}

TEST(ClassRoom, EachDeviceIsRateLimitedOnItsOwn) {
  FakeClock clock;
  ClassRoom room("1234", clock.fn());
  room.publish(step(0));
  // A burst of 5 (refused answers count too), then none until time passes.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev1", "x", "").status, AnswerStatus::kInvalid);
  const AnswerResult r = room.answer("dev1", "0.5", "");
  EXPECT_EQ(r.status, AnswerStatus::kRateLimited);
  EXPECT_EQ(r.error, "too many answers: wait a second");
  EXPECT_EQ(room.answer("dev2", "0.5", "").status, AnswerStatus::kOk);  // another device
  clock.now += 100ms;                                                   // half a token
  EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kRateLimited);
  clock.now += 150ms;  // 0.5 + 0.75 ≥ 1
  EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kRateLimited);
  clock.now += 10s;  // the bucket refills to 5, no more
  for (int i = 0; i < 5; ++i) EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.answer("dev1", "0.5", "").status, AnswerStatus::kRateLimited);
}

TEST(ClassRoom, TheRoomHoldsAtMost500Devices) {
  ClassRoom room("1234");
  room.publish(step(0));
  for (int i = 0; i < 500; ++i) room.seen("dev" + std::to_string(i));
  EXPECT_EQ(room.counts().joined, 500);
  const AnswerResult r = room.answer("late", "0.5", "");
  EXPECT_EQ(r.status, AnswerStatus::kFull);
  EXPECT_EQ(r.error, "the class is full (500 devices)");
  room.seen("later");
  EXPECT_EQ(room.counts().joined, 500);
  EXPECT_EQ(room.answer("dev499", "0.5", "").status, AnswerStatus::kOk);  // one who joined
}

TEST(ClassRoom, CountsSayHowManyNotWho) {
  FakeClock clock;
  ClassRoom room("1234", clock.fn());
  room.publish(step(0));
  room.seen("a");
  room.seen("b");
  room.seen("a");
  room.seen("");  // a page with no id yet is not a device
  EXPECT_EQ(room.answer("c", "0.2", "").status, AnswerStatus::kOk);
  ClassCounts c = room.counts();
  EXPECT_EQ(c.joined, 3);
  EXPECT_EQ(c.active, 3);
  EXPECT_EQ(c.answered, 1);
  clock.now += 10s;
  room.seen("a");
  clock.now += 10s;  // b and c last seen 20 s ago, a 10 s ago
  c = room.counts();
  EXPECT_EQ(c.joined, 3);
  EXPECT_EQ(c.active, 1);
}

TEST(ClassRoom, NumberDistributionIsAHistogramWithTheTrueValue) {
  ClassRoom room("1234");
  room.publish(step(0));
  int k = 0;
  for (const char* a : {"0.1", "0.54", "0.545", "1.0"})
    ASSERT_EQ(room.answer("d" + std::to_string(k++), a, "").status, AnswerStatus::kOk);
  const ClassDistribution d = room.distribution(10);
  EXPECT_EQ(d.kind, ClassKind::kNumber);
  EXPECT_EQ(d.total, 4);
  EXPECT_EQ(d.right, 2);  // 0.54 and 0.545 (tolerance 0.01)
  ASSERT_TRUE(d.truth);
  EXPECT_NEAR(*d.truth, 0.54, 1e-6);
  EXPECT_NEAR(d.lo, 0.1, 1e-6);
  EXPECT_NEAR(d.hi, 1.0, 1e-6);
  // Bins of 0.09 from 0.1: 0.1 → 0, 0.54 and 0.545 → 4 (0.46 to 0.55), 1.0 → the last.
  EXPECT_EQ(d.bins, (std::vector<int>{1, 0, 0, 0, 2, 0, 0, 0, 0, 1}));
}

TEST(ClassRoom, OneValueGetsABinAroundIt) {
  ClassRoom room("1234");
  room.publish(step(0));
  ASSERT_EQ(room.answer("d", "0.54", "").status, AnswerStatus::kOk);
  const ClassDistribution d = room.distribution(5);
  EXPECT_NEAR(d.lo, 0.04, 1e-6);
  EXPECT_NEAR(d.hi, 1.04, 1e-6);
  EXPECT_EQ(d.bins, (std::vector<int>{0, 0, 1, 0, 0}));  // 0.54 is 2.5 bins of 0.2 from 0.04
}

TEST(ClassRoom, ChoiceDistributionCountsEachChoice) {
  ClassRoom room("1234");
  room.publish(step(2));
  for (const char* c : {"a", "b"})
    ASSERT_EQ(room.answer(c, "softmax keeps the order", "").status, AnswerStatus::kOk);
  ASSERT_EQ(room.answer("c", "it does not", "").status, AnswerStatus::kOk);
  const ClassDistribution d = room.distribution();
  EXPECT_EQ(d.kind, ClassKind::kChoice);
  EXPECT_EQ(d.choices, (std::vector<std::string>{"softmax keeps the order", "it does not"}));
  EXPECT_EQ(d.counts, (std::vector<int>{2, 1}));
  EXPECT_EQ(d.right_choice, 0);
  EXPECT_EQ(d.right, 2);
  // The key question: "is" (index 1) is the right key, by the hand calculation above.
  room.publish(step(1));
  ASSERT_EQ(room.answer("a", "is", "").status, AnswerStatus::kOk);
  EXPECT_EQ(room.distribution().right_choice, 1);
  EXPECT_EQ(room.distribution().right, 1);
}

TEST(ClassRoom, RepeatedChoiceTextsAreToldApart) {
  LessonQuestion q;
  q.kind = QuestionKind::kStatement;
  q.choices = {{"the", true}, {"cat", false}, {"the", false}};
  EXPECT_EQ(class_choices(q, AttentionTrace{}),
            (std::vector<std::string>{"the (1)", "cat", "the (3)"}));
}

TEST(ClassRoom, TheStateHoldsNoAnswerBeforeReveal) {
  ClassRoom room("1234");
  room.publish(step(0));
  ASSERT_EQ(room.answer("a", "0.54", "Ana").status, AnswerStatus::kOk);
  std::string state = room.state_json();
  json j = json::parse(state);
  EXPECT_EQ(j["step"], 1);
  EXPECT_EQ(j["title"], "Scores");
  EXPECT_EQ(j["question"], "What is the score of Fear and is?");
  EXPECT_EQ(j["kind"], "number");
  EXPECT_EQ(j["answers"], 1);
  EXPECT_EQ(j["revealed"], false);
  EXPECT_EQ(state.find("0.54"), std::string::npos) << state;
  EXPECT_EQ(state.find("\"answer\""), std::string::npos) << state;
  EXPECT_EQ(state.find("Ana"), std::string::npos) << state;  // names are the CSV's only
  room.reveal();
  j = json::parse(room.state_json());
  EXPECT_EQ(j["revealed"], true);
  EXPECT_EQ(j["answer"], "0.5400");
  // Answers close with the reveal.
  EXPECT_EQ(room.answer("b", "0.54", "").error, "the answer has been revealed: answers are closed");
}

TEST(ClassRoom, PicturesAreStoredAsGiven) {
  ClassRoom room("1234");
  EXPECT_EQ(room.picture(), "");
  room.publish(step(0, "<svg>hidden</svg>"));
  EXPECT_EQ(room.picture(), "<svg>hidden</svg>");
  room.set_picture("<svg>all</svg>");
  EXPECT_EQ(room.picture(), "<svg>all</svg>");
}

TEST(ClassRoom, WrongCodesFromOneAddressAreLimited) {
  FakeClock clock;
  ClassRoom room("1234", clock.fn());
  EXPECT_EQ(room.check_code("1234", "10.0.0.2"), CodeCheck::kOk);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(room.check_code(std::to_string(i), "10.0.0.2"), CodeCheck::kWrong);
  // Locked for the rest of the minute, even with the right code: else trying all 10000 codes
  // would find it.
  EXPECT_EQ(room.check_code("1234", "10.0.0.2"), CodeCheck::kLocked);
  EXPECT_EQ(room.check_code("1234", "10.0.0.3"), CodeCheck::kOk);
  EXPECT_EQ(room.check_code("12345", "10.0.0.3"), CodeCheck::kWrong);
  EXPECT_EQ(room.check_code("", "10.0.0.3"), CodeCheck::kWrong);
  clock.now += 61s;
  EXPECT_EQ(room.check_code("1234", "10.0.0.2"), CodeCheck::kOk);
}

TEST(ClassRoom, ResultsCsvHasOneRowPerQuestionAndTheNames) {
  ClassRoom room("1234");
  room.start_lesson("Class test");
  room.publish(step(0));
  ASSERT_EQ(room.answer("a", "0.54", "Ana").status, AnswerStatus::kOk);
  ASSERT_EQ(room.answer("b", "0.3", "=HYPERLINK(\"x\")").status, AnswerStatus::kOk);
  ASSERT_EQ(room.answer("c", "0.56", "").status, AnswerStatus::kOk);  // 0.02 off: wrong
  room.publish(step(1));
  ASSERT_EQ(room.answer("a", "Fear", "Ana").status, AnswerStatus::kOk);
  room.publish(step(3));  // no question: no row
  const std::string expected =
      "step,title,question,answers,right,share_right,named_answers\n"
      "1,Scores,What is the score of Fear and is?,3,1,0.33,"
      "\"'=HYPERLINK(\"\"x\"\"): 0.3 (wrong); Ana: 0.54 (right)\"\n"
      "2,Weights,Which key does Fear weigh most?,1,0,0.00,Ana: Fear (wrong)\n";
  EXPECT_EQ(room.results_csv(), expected);
  // A new lesson starts with no results.
  room.start_lesson("Another");
  EXPECT_EQ(room.results_csv(), "step,title,question,answers,right,share_right,named_answers\n");
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ClassRoom, ResultsAreSavedAtomically) {
  ClassRoom room("1234");
  room.publish(step(0));
  ASSERT_EQ(room.answer("a", "0.54", "Ana").status, AnswerStatus::kOk);
  const std::string dir = test::temp_dir("class_csv");
  const std::string path = dir + "/results.csv";
  {
    std::ofstream old(path);
    old << "old contents that are longer than the new ones, to show the file is replaced whole\n"
        << std::string(500, 'x');
  }
  std::string error;
  ASSERT_TRUE(room.save_results_csv(path, error)) << error;
  EXPECT_EQ(read_all(path),
            "step,title,question,answers,right,share_right,named_answers\n"
            "1,Scores,What is the score of Fear and is?,1,1,1.00,Ana: 0.54 (right)\n");
  for (const auto& e : fs::directory_iterator(dir))  // no temporary file left beside it
    EXPECT_EQ(e.path().filename(), "results.csv");
  // A folder in the way is refused, and stays.
  fs::create_directory(dir + "/folder.csv");
  EXPECT_FALSE(room.save_results_csv(dir + "/folder.csv", error));
  EXPECT_NE(error.find("folder.csv"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_directory(dir + "/folder.csv"));
  EXPECT_FALSE(room.save_results_csv(dir + "/missing/results.csv", error));
}

}  // namespace
}  // namespace attn
