// Class mode's classroom (no ImGui, no network): the step the teacher shows, the students' answers
// to it, the counts and the distribution for the teacher, and the results as CSV. Thread-safe: the
// app publishes from the UI thread while the server's threads read the state and add answers.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "lessons/lesson.h"

namespace attn {

// The limits that keep one device (or one script) from swamping the room (docs/robustness.md,
// "Class mode").
inline constexpr int kClassMaxClients = 500;          // distinct client ids a room accepts
inline constexpr int kClassAnswersPerSecond = 5;      // answers one client may send a second
inline constexpr int kClassWrongCodesPerMinute = 20;  // per address: guessing the code is slow
inline constexpr size_t kClassMaxClientId = 64;       // bytes; the page makes 32
inline constexpr size_t kClassMaxName = 60;           // bytes
inline constexpr size_t kClassMaxAnswer = 200;        // bytes

enum class ClassKind { kNone, kNumber, kChoice };
// "number" or "choice"; nullptr for kNone (JSON null).
const char* class_kind_name(ClassKind kind);

// What the app shows on the projector, handed to the room on every step change.
struct ClassStep {
  int index = 0;  // the lesson's step, 0-based (LessonPlayer::step_index())
  std::string title;
  std::optional<LessonQuestion> question;  // none: the step asks nothing
  // The step's trace as the app shows it: answers are checked against it as the lesson player
  // checks the teacher's own (core/lessons' check_number/check_choice). Never served.
  AttentionTrace trace;
  int precision = 4;  // decimals answers are checked and shown at (the app's setting)
  // The picture students see: the exporter's SVG with what the question hides hidden (the app
  // draws it; the room only stores and serves it).
  std::string svg;
};

struct ClassCounts {
  int joined = 0;    // distinct devices seen since the room opened
  int active = 0;    // of those, seen in the last kClassActiveSeconds
  int answered = 0;  // answers to the current step's question
};
inline constexpr int kClassActiveSeconds = 15;

// The answers to the current question, for Reveal: never who gave which.
struct ClassDistribution {
  ClassKind kind = ClassKind::kNone;
  int total = 0, right = 0;
  // kNumber: a histogram over [lo, hi] (which includes the true value) in equal bins.
  double lo = 0, hi = 0;
  std::vector<int> bins;
  std::optional<double> truth;
  // kChoice: answers per choice, in the order of `choices`.
  std::vector<std::string> choices;
  std::vector<int> counts;
  int right_choice = -1;
};

enum class AnswerStatus {
  kOk,
  kInvalid,      // not an answer the question accepts (400, with the reason)
  kRateLimited,  // too many answers from this client (429)
  kFull,         // kClassMaxClients devices already joined (429)
};
struct AnswerResult {
  AnswerStatus status = AnswerStatus::kOk;
  std::string error;  // why, in words a student reads
};

enum class CodeCheck { kOk, kWrong, kLocked };

class ClassRoom {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // `code`: the session code every request must carry. `clock`: for tests (the rate limits).
  explicit ClassRoom(std::string code, Clock clock = &std::chrono::steady_clock::now);

  const std::string& code() const { return code_; }  // fixed for the room's life
  // Whether `code` is the room's; after kClassWrongCodesPerMinute wrong ones from `address` in a
  // minute every attempt from it is kLocked until the minute is over.
  CodeCheck check_code(const std::string& code, const std::string& address);

  // A new lesson: forgets the answers (the devices stay joined).
  void start_lesson(const std::string& lesson_title);
  // The step on screen now. Publishing the same step again keeps its answers and reveal.
  void publish(ClassStep step);
  // A new picture for the current step (drawn after the step was published, or after Reveal the
  // one that hides nothing): the state's "picture" number changes, so pages fetch it again.
  void set_picture(std::string svg);
  // The current step's answer is shown: the state says so and answers close.
  void reveal();
  bool revealed() const;

  // A device polled the state (`client` may be "" for a page that has not sent one yet).
  void seen(const std::string& client);
  // A student's answer to the current step. `step` (the number the state gave, 1-based) when the
  // page sends it: an answer meant for another step is refused rather than counted here.
  AnswerResult answer(const std::string& client, const std::string& text, const std::string& name,
                      std::optional<int> step = std::nullopt);

  // GET /api/state's body (cli.md, "Class mode"); holds no answer before reveal().
  std::string state_json() const;
  std::string picture() const;
  ClassCounts counts() const;
  ClassDistribution distribution(int bins = 10) const;
  // The lesson's results: one row per question asked, with the names students gave (they appear
  // nowhere else).
  std::string results_csv() const;
  bool save_results_csv(const std::string& path, std::string& error) const;

 private:
  struct Answer {
    std::string text, name;
    double value = 0;  // the number typed, or the choice's index
    bool correct = false;
  };
  struct Question {
    int index = 0;
    std::string title, prompt;
    ClassKind kind = ClassKind::kNone;
    std::vector<std::string> choices;
    std::map<std::string, Answer> answers;  // by client id: one each, the latest
    std::optional<double> truth;            // the number, or the right choice's index
    bool revealed = false;
  };
  struct Client {
    std::chrono::steady_clock::time_point last_seen;
    double tokens = kClassAnswersPerSecond;  // the rate limit's bucket
    std::chrono::steady_clock::time_point refilled;
  };
  struct Address {
    std::chrono::steady_clock::time_point window;
    int wrong = 0;
  };
  Client* client_locked(const std::string& id, bool& full);
  const Question* current_locked() const;

  const std::string code_;
  const Clock clock_;
  mutable std::mutex mutex_;
  std::string lesson_title_;
  std::optional<ClassStep> step_;
  int picture_version_ = 0;  // counts the pictures published: the page reloads on a new one
  ClassKind kind_ = ClassKind::kNone;
  std::vector<std::string> choices_;
  std::map<int, Question> questions_;  // by step index, for the CSV
  std::map<std::string, Client> clients_;
  std::map<std::string, Address> addresses_;
};

// The options a student picks from, as the page shows them: a text that appears twice (a key
// token such as "the") gets its position, "the (2)", so each names one choice.
std::vector<std::string> class_choices(const LessonQuestion& q, const AttentionTrace& trace);

}  // namespace attn
