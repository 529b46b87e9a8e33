// Predict, then reveal: the app hides a stage's numbers (one cell, a row or the whole stage) and
// asks the class to predict — type the number, or pick the key that gets the most weight — then
// reveals the answer and says how close the guess was. The seq2seq window asks the same "pick"
// question of a decoder step. No ImGui here: the panels draw what this model decides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

enum class PredictKind {
  kValue,  // type the number in one cell
  kPick,   // pick the key (column) with the largest value in a row
};
enum class PredictScope { kCell, kRow, kStage };  // what stays hidden until the reveal

struct Verdict {
  enum class Grade { kExact, kClose, kOff };
  Grade grade = Grade::kOff;
  std::string headline;  // "Exactly right", "Close", "Not quite"
  std::string detail;    // the guess against the answer, in words and numbers
};

// Judges a typed guess against the answer; `decimals` is the precision the class sees, `spread`
// the size of the stage's values (their largest magnitude), so "close" means the same on scores of
// 5 and on weights of 0.05. −∞ (a hidden key's masked score) is right only when guessed as −∞.
Verdict judge_value(double guess, double answer, int decimals, double spread);

// Judges a picked column against a row of values: the largest visible value wins (ties: any of
// them). `hidden` (optional, same length) marks columns that cannot be picked (masked keys).
// `what` names the value ("weight", "score"); a guess of −1 only states the answer.
Verdict judge_pick(int guess, const std::vector<double>& values,
                   const std::vector<std::string>& labels, const std::vector<bool>& hidden,
                   const std::string& what, int decimals = 2);

// A guess typed by a student: a number, or −∞ written as "-inf", "−∞" or "-∞".
std::optional<double> parse_guess(const std::string& text, std::string& error);

struct PredictQuestion {
  StageId stage = StageId::kScores;
  int head = 0;  // the head shown (matrix index for steps with one matrix)
  int row = 0, col = 0;
  PredictKind kind = PredictKind::kValue;
  PredictScope scope = PredictScope::kCell;
};

// Which kinds a stage supports: every numeric stage takes a typed value; the attention stages
// (query × key: scores … weights) also take a pick. The inputs have nothing computed to predict.
bool stage_supports(StageId stage, PredictKind kind);

class Prediction {
 public:
  // Starts a question on `stage` of the trace: about cell (row, col) when given (col −1 for a
  // pick, or any column), else a cell chosen to be worth asking (a visible key of the last query).
  // False with `why` when the stage has nothing to predict or the kind does not suit it.
  bool start(const AttentionTrace& t, StageId stage, int head, int sel_row, int sel_col,
             PredictKind kind, PredictScope scope, std::string& why);
  void cancel() { active_ = false; }
  bool active() const { return active_; }
  bool revealed() const { return active_ && revealed_; }
  const PredictQuestion& question() const { return q_; }

  // The question in words, with the tokens: "What is the attention weight of "is" on "Fear"?"
  std::string prompt(const AttentionTrace& t) const;
  // Whether cell (i, j) of `stage` (matrix `head`) is hidden right now.
  bool conceals(StageId stage, int head, int i, int j) const;
  // True when anything of `stage` is hidden (a panel blanks its derived views: row sums, heads).
  bool conceals_stage(StageId stage) const;

  // Records a guess; a typed value is parsed (false with `error` when it is not a number).
  bool guess_text(const std::string& text, std::string& error);
  void guess_pick(int col);
  bool has_guess() const { return has_guess_; }
  int guess_col() const { return guess_col_; }
  // Reveals the answer and judges the guess (without a guess: the answer only).
  const Verdict& reveal(const AttentionTrace& t, int decimals);
  const Verdict& verdict() const { return verdict_; }
  // The answer's value (the cell, or the picked row's winner).
  double answer(const AttentionTrace& t) const;

 private:
  const Matrix* matrix(const AttentionTrace& t) const;
  bool active_ = false, revealed_ = false, has_guess_ = false;
  PredictQuestion q_;
  double guess_value_ = 0;
  int guess_col_ = -1;
  Verdict verdict_;
};

}  // namespace attn
