// The seq2seq side of the app, with no ImGui: the date models (shipped, or a file the user
// named), the input and its translation by each model, the decoder step the window points at and
// its predict-then-reveal question, the live trainer with its settings, and the bottleneck
// evaluation. The seq2seq window (panel_seq2seq.cpp) only draws it and calls its setters; tests
// drive it directly.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gui/model/predict.h"
#include "seq2seq/alignment.h"
#include "seq2seq/live_trainer.h"
#include "seq2seq/model.h"
#include "seq2seq/trainer.h"
#include "train/background_job.h"

namespace attn {

// One model's translation of the input: the decoder's forward pass, the output, and the alignment
// as rows of output characters (ending with </s>) by columns of input characters.
struct Seq2seqTranslation {
  s2s::ForwardCache<float> fc;
  std::string output, error;  // error: why the input cannot be translated ("" when it can)
  std::vector<std::string> rows, cols;
  s2s::Mat<float> weights;  // α_tj; a model without attention reads only the last position
  s2s::Mat<float> visible;  // 1 inside a local window, 0 outside (empty: no window)
  int steps() const { return static_cast<int>(rows.size()); }
};

// Translates `input` with `model`; Seq2seqSession::translation caches it.
Seq2seqTranslation translate_for_view(const s2s::Model& model, const std::string& input);

class Seq2seqSession {
 public:
  // The models: the shipped ones by short name, then `open_model` when it is a file that is not
  // one of them. Selects `open_model`, or bahdanau. Run on first use and after open_model changes.
  void find_models();
  void ensure_models();    // find_models once
  std::string open_model;  // a model to add to the list and select (gui --model, a lesson step)
  // Puts a model already loaded (gui --seq2seq-model checked it) in the cache for `path`.
  void add_loaded(const std::string& path, s2s::Model model);

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::string& name(int index) const { return names_[static_cast<size_t>(index)]; }
  int model_count() const { return static_cast<int>(files_.size()); }
  // The model at `index`, loaded on first use; null when out of range or it does not load
  // (load_error says why).
  const s2s::Model* model(int index);
  std::string load_error(int index) const;
  bool any_load_error() const { return !load_errors_.empty(); }
  int model_a = 0, model_b = -1;  // the model stepped through and the one beside it (-1: none)

  // The input, and the translation of it by model `index` (null when the model does not load),
  // computed once per model and input.
  std::string input = s2s::kExampleInput;
  const Seq2seqTranslation* translation(int index);

  // Stepping through model_a's decoder: the step, and the input position explained (-1: the
  // position with the largest weight). Predict, then reveal: while `predicting`, the step's row
  // stays hidden until the class has picked a position (`guess`) and it is `revealed`.
  int step = 0, position = -1;
  bool predicting = false, revealed = false;
  int guess = -1;
  void go_to_step(int s);  // a new question: forgets the position, the guess and the reveal
  void clamp_step(int steps) { step = std::max(0, std::min(step, steps - 1)); }
  // The position the step explains: `position` when set, else the one with the largest weight
  // (-1 for a model without attention or no steps).
  int explained_position(const s2s::Model& m, const Seq2seqTranslation& t) const;
  bool asking(const s2s::Model& m) const;  // a hidden row waits for the class's pick
  // The verdict on `guess` for the current step of `t`.
  Verdict verdict(const Seq2seqTranslation& t) const;

  // Training a small model live: its settings, the run, and why the last start was refused.
  s2s::LiveTrainer live;
  int live_score = 1, live_hidden = 32, live_epochs = 4;  // live_hidden: even
  std::string live_example = "sunday the 22nd of november, 2026";
  std::string live_error;
  bool start_live();  // with the settings above; false with live_error
  // The live run's failure in snapshot `s` of it, once ("" when there is none or it was already
  // taken).
  std::string take_training_failure(const s2s::LiveSnapshot& s);

  // The bottleneck tab's evaluation: accuracy by length of each shipped bottleneck/ model on
  // kCompareDates held-out dates, on a worker thread. Results are kept per model file (while its
  // size and time stay the same), so opening the tab again — a lesson step does it — shows them
  // at once; `fresh` evaluates again all the same.
  static constexpr int kCompareDates = 1000;
  BackgroundJob<std::vector<std::vector<s2s::LengthBucket>>> compare_job;
  std::vector<std::string> compare_names;
  std::vector<std::vector<s2s::LengthBucket>> compare_rows;
  std::string compare_error;
  void start_compare(bool fresh = false);
  // Picks up a finished evaluation; its failure, once, else "".
  std::string poll_compare();

 private:
  bool scanned_ = false;
  std::string scanned_for_;
  std::vector<std::string> files_, names_;
  std::map<std::string, s2s::Model> models_;
  std::map<std::string, std::string> load_errors_;
  // Translations by model file, with the input they were made from.
  std::map<std::string, std::pair<std::string, Seq2seqTranslation>> translations_;
  std::string reported_failure_;
  // Evaluations by model file: the file's stamp (size and time) when evaluated, and the result.
  std::map<std::string, std::pair<std::string, std::vector<s2s::LengthBucket>>> compare_cache_;
  std::vector<std::string> compare_files_, compare_stamps_;  // of the evaluation running
};

}  // namespace attn
