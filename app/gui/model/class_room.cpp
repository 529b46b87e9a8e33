// Class mode's classroom: the published step, answers checked with the lesson's own code, the
// rate limits, the teacher's counts and distribution, and the CSV of results.
#include "gui/model/class_room.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gui/model/app_state.h"
#include "io/atomic_file.h"

namespace attn {
namespace {

using Time = std::chrono::steady_clock::time_point;

double seconds_between(Time a, Time b) { return std::chrono::duration<double>(b - a).count(); }

// The page makes ids of letters and digits; anything else (spaces, control bytes, markup) is not
// from it.
bool valid_client_id(const std::string& id) {
  if (id.empty() || id.size() > kClassMaxClientId) return false;
  for (const char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool has_control_bytes(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// One CSV field (RFC 4180 quoting). A cell a spreadsheet would run as a formula (=, +, -, @)
// starts with an apostrophe: a student's name must not become a formula on the teacher's computer.
std::string csv_field(const std::string& s) {
  std::string v = s;
  if (!v.empty() && std::string("=+-@\t\r").find(v[0]) != std::string::npos) v = "'" + v;
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (const char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string fixed(double v, int decimals) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(decimals);
  o << v;
  return o.str();
}

}  // namespace

const char* class_kind_name(ClassKind kind) {
  switch (kind) {
    case ClassKind::kNumber:
      return "number";
    case ClassKind::kChoice:
      return "choice";
    case ClassKind::kNone:
      break;
  }
  return nullptr;
}

std::vector<std::string> class_choices(const LessonQuestion& q, const AttentionTrace& trace) {
  std::vector<std::string> out = question_options(q, trace);
  std::map<std::string, int> times;
  for (const std::string& s : out) ++times[s];
  for (size_t i = 0; i < out.size(); ++i)
    if (times[out[i]] > 1) out[i] += " (" + std::to_string(i + 1) + ")";
  return out;
}

ClassRoom::ClassRoom(std::string code, Clock clock) : code_(std::move(code)), clock_(clock) {}

CodeCheck ClassRoom::check_code(const std::string& code, const std::string& address) {
  // Compared in full whatever the first difference, so timing tells nothing about the code.
  bool same = !code_.empty() && code.size() == code_.size();
  unsigned diff = 0;
  for (size_t i = 0; same && i < code.size(); ++i)
    diff |= static_cast<unsigned char>(code[i] ^ code_[i]);
  same = same && diff == 0;
  std::lock_guard<std::mutex> lock(mutex_);
  const Time now = clock_();
  // Addresses are forgotten after their minute; the table cannot grow without bound.
  if (addresses_.size() >= 4096)
    for (auto it = addresses_.begin(); it != addresses_.end();)
      it = seconds_between(it->second.window, now) >= 60 ? addresses_.erase(it) : std::next(it);
  if (addresses_.size() >= 4096 && !addresses_.count(address)) return CodeCheck::kLocked;
  Address& a = addresses_[address];
  if (a.wrong == 0 || seconds_between(a.window, now) >= 60) a = {now, 0};
  if (a.wrong >= kClassWrongCodesPerMinute) return CodeCheck::kLocked;
  if (same) return CodeCheck::kOk;
  ++a.wrong;
  return CodeCheck::kWrong;
}

void ClassRoom::start_lesson(const std::string& lesson_title) {
  std::lock_guard<std::mutex> lock(mutex_);
  lesson_title_ = lesson_title;
  questions_.clear();
  step_.reset();
  kind_ = ClassKind::kNone;
  choices_.clear();
}

void ClassRoom::publish(ClassStep step) {
  std::lock_guard<std::mutex> lock(mutex_);
  kind_ = ClassKind::kNone;
  choices_.clear();
  if (step.question) {
    const LessonQuestion& q = *step.question;
    kind_ = q.kind == QuestionKind::kNumber ? ClassKind::kNumber : ClassKind::kChoice;
    if (kind_ == ClassKind::kChoice) choices_ = class_choices(q, step.trace);
    std::optional<double> truth;
    std::string error;
    if (q.kind == QuestionKind::kNumber) {
      truth = number_answer(q, step.trace, error);
    } else if (q.kind == QuestionKind::kKey) {
      if (const std::optional<int> k = key_answer(q, step.trace, error)) truth = *k;
    } else {
      truth = statement_answer(q);
    }
    Question& rec = questions_[step.index];
    // The same question again keeps its answers; another one at this step (the lesson was
    // reopened after an edit) starts afresh.
    if (rec.prompt != q.prompt || rec.kind != kind_ || rec.choices != choices_) rec = Question{};
    rec.index = step.index;
    rec.title = step.title;
    rec.prompt = q.prompt;
    rec.kind = kind_;
    rec.choices = choices_;
    rec.truth = truth;
  }
  step_ = std::move(step);
  ++picture_version_;
}

void ClassRoom::set_picture(std::string svg) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!step_) return;
  step_->svg = std::move(svg);
  ++picture_version_;
}

void ClassRoom::reveal() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (step_ && step_->question) questions_[step_->index].revealed = true;
}

bool ClassRoom::revealed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Question* q = current_locked();
  return q && q->revealed;
}

const ClassRoom::Question* ClassRoom::current_locked() const {
  if (!step_ || !step_->question) return nullptr;
  const auto it = questions_.find(step_->index);
  return it == questions_.end() ? nullptr : &it->second;
}

ClassRoom::Client* ClassRoom::client_locked(const std::string& id, bool& full) {
  full = false;
  auto it = clients_.find(id);
  if (it == clients_.end()) {
    if (static_cast<int>(clients_.size()) >= kClassMaxClients) {
      full = true;
      return nullptr;
    }
    const Time now = clock_();
    it = clients_.emplace(id, Client{now, kClassAnswersPerSecond, now}).first;
  }
  it->second.last_seen = clock_();
  return &it->second;
}

void ClassRoom::seen(const std::string& client) {
  if (!valid_client_id(client)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  bool full = false;
  client_locked(client, full);
}

AnswerResult ClassRoom::answer(const std::string& client, const std::string& text,
                               const std::string& name_sent, std::optional<int> step) {
  const auto invalid = [](std::string why) { return AnswerResult{AnswerStatus::kInvalid, why}; };
  if (!valid_client_id(client))
    return invalid("the client id must be 1 to " + std::to_string(kClassMaxClientId) +
                   " letters, digits, '-' or '_'");
  std::lock_guard<std::mutex> lock(mutex_);
  bool full = false;
  Client* c = client_locked(client, full);
  if (!c)
    return {AnswerStatus::kFull,
            "the class is full (" + std::to_string(kClassMaxClients) + " devices)"};
  // A token bucket: a burst of kClassAnswersPerSecond, then that many a second. Refused answers
  // count too, so a flood of bad ones is slowed as much as a flood of good ones.
  const Time now = clock_();
  c->tokens =
      std::min<double>(kClassAnswersPerSecond,
                       c->tokens + seconds_between(c->refilled, now) * kClassAnswersPerSecond);
  c->refilled = now;
  if (c->tokens < 1) return {AnswerStatus::kRateLimited, "too many answers: wait a second"};
  c->tokens -= 1;

  const auto qit = step_ && step_->question ? questions_.find(step_->index) : questions_.end();
  if (qit == questions_.end()) return invalid("this step asks no question");
  Question& rec = qit->second;
  if (step && *step != step_->index + 1)
    return invalid("the teacher has moved on to step " + std::to_string(step_->index + 1));
  if (rec.revealed) return invalid("the answer has been revealed: answers are closed");
  if (text.size() > kClassMaxAnswer)
    return invalid("the answer is too long (at most " + std::to_string(kClassMaxAnswer) +
                   " bytes)");
  const std::string name = trimmed(name_sent);
  if (name.size() > kClassMaxName)
    return invalid("the name is too long (at most " + std::to_string(kClassMaxName) + " bytes)");
  if (has_control_bytes(name)) return invalid("the name has control characters");

  const LessonQuestion& q = *step_->question;
  Answer a;
  a.name = name;
  if (rec.kind == ClassKind::kNumber) {
    // Parsed and checked exactly as the lesson player checks the teacher's own answer.
    std::string why;
    const std::optional<float> v = parse_user_number(text, why);
    if (!v) return invalid("Type a number (" + why + ").");
    a.value = *v;
    a.text = trimmed(text);
    a.correct = check_number(q, step_->trace, *v, step_->precision).correct;
  } else {
    const auto it = std::find(rec.choices.begin(), rec.choices.end(), text);
    if (it == rec.choices.end()) return invalid("that is not one of the choices");
    const int i = static_cast<int>(it - rec.choices.begin());
    a.value = i;
    a.text = text;
    a.correct = check_choice(q, step_->trace, i).correct;
  }
  rec.answers[client] = std::move(a);
  return {};
}

std::string ClassRoom::state_json() const {
  using nlohmann::json;
  std::lock_guard<std::mutex> lock(mutex_);
  const Question* q = current_locked();
  json j = {{"step", step_ ? step_->index + 1 : 0},
            {"title", step_ ? step_->title : ""},
            {"question", q ? json(q->prompt) : json(nullptr)},
            {"kind", q ? json(class_kind_name(q->kind)) : json(nullptr)},
            {"choices", q ? q->choices : std::vector<std::string>{}},
            // Statements are lettered A, B, C… on the projector; the page letters them too, so
            // "most of you said B" means the same on every screen.
            {"lettered", q && step_->question && step_->question->kind == QuestionKind::kStatement},
            {"answers", q ? static_cast<int>(q->answers.size()) : 0},
            {"revealed", q && q->revealed},
            {"picture", picture_version_}};
  // The answer exists in these bytes only once the teacher has revealed it.
  if (q && q->revealed) {
    std::string error;
    j["answer"] = answer_text(*step_->question, step_->trace, step_->precision, error);
  }
  // Lesson text is the teacher's; a byte that is not UTF-8 must not stop the state being served.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ClassRoom::picture() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return step_ ? step_->svg : std::string();
}

ClassCounts ClassRoom::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ClassCounts c;
  const Time now = clock_();
  c.joined = static_cast<int>(clients_.size());
  for (const auto& [id, client] : clients_)
    c.active += seconds_between(client.last_seen, now) <= kClassActiveSeconds ? 1 : 0;
  const Question* q = current_locked();
  c.answered = q ? static_cast<int>(q->answers.size()) : 0;
  return c;
}

ClassDistribution ClassRoom::distribution(int bins) const {
  std::lock_guard<std::mutex> lock(mutex_);
  ClassDistribution d;
  const Question* q = current_locked();
  if (!q) return d;
  d.kind = q->kind;
  d.total = static_cast<int>(q->answers.size());
  for (const auto& [id, a] : q->answers) d.right += a.correct ? 1 : 0;
  if (q->kind == ClassKind::kChoice) {
    d.choices = q->choices;
    d.counts.assign(q->choices.size(), 0);
    for (const auto& [id, a] : q->answers) ++d.counts[static_cast<size_t>(a.value)];
    d.right_choice = q->truth ? static_cast<int>(*q->truth) : -1;
    return d;
  }
  d.truth = q->truth;
  bins = std::max(1, bins);
  d.bins.assign(static_cast<size_t>(bins), 0);
  bool any = false;
  const auto widen = [&](double v) {
    d.lo = any ? std::min(d.lo, v) : v;
    d.hi = any ? std::max(d.hi, v) : v;
    any = true;
  };
  if (d.truth) widen(*d.truth);
  for (const auto& [id, a] : q->answers) widen(a.value);
  if (!any) return d;
  if (d.hi - d.lo < 1e-9) {  // one value: a bin of width 1 around it
    d.lo -= 0.5;
    d.hi += 0.5;
  }
  for (const auto& [id, a] : q->answers) {
    const int b = static_cast<int>(std::floor((a.value - d.lo) / (d.hi - d.lo) * bins));
    ++d.bins[static_cast<size_t>(std::clamp(b, 0, bins - 1))];
  }
  return d;
}

std::string ClassRoom::results_csv() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "step,title,question,answers,right,share_right,named_answers\n";
  for (const auto& [index, q] : questions_) {
    int right = 0;
    std::multiset<std::string> named;  // sorted by name, not by when or by device
    for (const auto& [id, a] : q.answers) {
      right += a.correct ? 1 : 0;
      if (!a.name.empty())
        named.insert(a.name + ": " + a.text + (a.correct ? " (right)" : " (wrong)"));
    }
    std::string names;
    for (const std::string& n : named) names += (names.empty() ? "" : "; ") + n;
    const int n = static_cast<int>(q.answers.size());
    out += std::to_string(index + 1) + "," + csv_field(q.title) + "," + csv_field(q.prompt) + "," +
           std::to_string(n) + "," + std::to_string(right) + "," +
           (n ? fixed(static_cast<double>(right) / n, 2) : "") + "," + csv_field(names) + "\n";
  }
  return out;
}

bool ClassRoom::save_results_csv(const std::string& path, std::string& error) const {
  return write_file_atomically(path, results_csv(), error);
}

}  // namespace attn
