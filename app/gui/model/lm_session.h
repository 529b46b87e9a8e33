// The language-model side of the app, with no ImGui: the open GPT-2-format model, the sentence,
// its forward pass (loading and computing off the UI thread), the head the views point at, the
// next-token distribution at a temperature, head scores and the KV cache. The panels in
// panel_lm*.cpp only read it and call its setters; tests drive it directly.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attention/scenario.h"
#include "gui/model/lm_views.h"
#include "lm/forward.h"
#include "lm/head_trace.h"
#include "lm/model.h"
#include "train/background_job.h"

namespace attn {

// What one forward pass produced, handed from the worker to the UI as a whole.
struct LmRun {
  std::shared_ptr<const lm::Model> model;
  std::string text;
  std::vector<int> ids;
  std::vector<std::string> tokens;  // display text of each token
  lm::Activations acts;
  std::vector<lm::HeadScores> scores;  // [l · NH + h]
};

// The sentence a model opens on until the user types one: English for a model of text; for a
// model trained on the induction task (its vocabulary is lm::letter_tokenizer's: bytes, " a" …
// " z", <|endoftext|>), a sequence like those it learned from — random letters in which a
// segment occurs twice (lm::induction_sequence, fixed seed), so its induction head has a copy to
// find. English would be bytes it never saw.
constexpr const char* kDefaultLmText = "The cat sat on the mat. The cat sat on the";
// The shipped English model, `austen`, opens on the first sentence of Pride and Prejudice
// without the word that ends it: what does it predict?
constexpr const char* kAustenLmText =
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    "must be in want of a";
// The model the language-model window opens on when nothing chose one (a lesson, --model, a
// folder opened): the shipped English model, when it is installed.
constexpr const char* kDefaultLmModel = "austen";
bool is_induction_vocabulary(const lm::Tokenizer& t);
std::string default_text_for(const lm::Model& model);

// One forward pass of `model` over token ids `ids` of `text`: what the session's worker runs.
std::unique_ptr<LmRun> lm_forward_run(std::shared_ptr<const lm::Model> model,
                                      const std::string& text, const std::vector<int>& ids);

class LmSession {
 public:
  ~LmSession();

  // Starts loading a model folder (or a shipped model's name) in the background; the current
  // model stays until the new one has loaded. False with error() when the name resolves nowhere.
  bool open(const std::string& folder_or_name);
  // Opens a model that is already in memory (one just trained in the app) and runs the sentence.
  void adopt(std::shared_ptr<const lm::Model> model);
  // Sets the sentence (the user's from now on: another model keeps it); recomputed in the
  // background. Text that is not UTF-8, empty or longer
  // than the model's n_positions tokens sets error() and keeps the last run.
  void set_text(const std::string& text);
  const std::string& text() const { return text_; }
  // Whether the sentence is still the one the session chose for its model (default_text_for).
  bool text_is_default() const { return !text_from_user_; }

  // Picks up finished work; call once per frame. True when something changed.
  bool poll();
  void wait();  // blocks until nothing is pending, the tabs' views too (tests, screenshots)
  bool busy() const { return load_.running() || compute_.running(); }
  double busy_seconds() const;
  const std::string& busy_what() const { return busy_what_; }

  bool has_model() const { return model_ != nullptr; }
  const lm::Model* model() const { return model_.get(); }
  // The last completed run (null before the first).
  const LmRun* run() const { return run_.get(); }
  // The tabs' views of the run (gui/model/lm_views.h), each computed on a worker: the value for
  // the current run and these arguments, or null while it is computed (poll() picks it up).
  const CircuitView* circuit(int query, int prev, int ind);
  const CircuitView* last_circuit() const { return circuit_.last(); }  // what the tab drew last
  const lm::BlockPath* block_path(int layer, int head, int position, double temperature);
  const std::vector<std::vector<double>>* rollout(int token);  // lm::rollout_of_token
  // Whether one of them is being computed (the window keeps drawing until it is done).
  bool deriving() const { return circuit_.busy() || block_.busy() || rollout_.busy(); }
  // Changes with every new run, so views can cache what they draw from it.
  uint64_t serial() const { return serial_; }

  const std::string& error() const { return error_; }
  // The last failure of background work (loading, a forward pass) not yet taken, then ""; the
  // panel puts it in the status bar once.
  std::string take_failure() { return std::exchange(failure_, std::string()); }
  // status() once, when a model has just opened (the status bar names it), else "".
  std::string take_opened() { return std::exchange(opened_, std::string()); }
  const std::string& status() const { return status_; }

  // The head the head view and "open in the stepper" use. While a model is loading, select()
  // keeps (l, h) as asked and the loaded model's sizes bound them (a lesson step asks first).
  int layer = 0, head = 0;
  void select(int l, int h);
  // The token the views point at: its lines in the head view, its query on the Circuit tab and
  // the prediction after it on the next-token chart. -1: none (the chart shows the last token).
  int position = -1;
  // `position` when it is a token of the current run, else the last token (-1 without a run).
  int shown_position() const;
  // The next-token chart: the tokens most likely to follow shown_position().
  double temperature = 1.0;
  int top_k = 10;
  std::vector<std::pair<int, double>> next_tokens() const;

  // The scenario of head (l, h) on the current run: real Q, K, V, causal mask, token labels.
  Scenario head_scenario(int l, int h) const;
  // The tag AppState::origin() carries when that head is open in the stepper.
  std::string origin_tag(int l, int h) const;
  // Parses an origin tag back: true and the layer and head when `origin` is one of ours.
  static bool parse_origin(const std::string& origin, int& l, int& h);

  // ---- live generation ----
  // Adds up to `tokens` tokens to the sentence one at a time, each chosen from the model's
  // distribution after the last token — the most likely, or sampled at `temperature` (the Next
  // tab's) when `sample` — and then run like any sentence, so the new token's row appears in
  // every view as it is produced. Stops at the model's end-of-text token, at n_positions, when
  // stop_generating() is called or the sentence is typed. Calling it again continues. False,
  // with error(), while there is no finished run to continue from.
  bool start_generating(int tokens, bool sample);
  void stop_generating() { generate_left_ = 0; }
  bool generating() const { return generate_left_ > 0; }
  // The tokens generation has added since the sentence was last typed, and their text.
  const std::vector<int>& generated_ids() const { return generated_; }
  std::string generated_text() const;

  // The forward pass the worker runs (lm_forward_run); a test puts one here that throws, to see
  // the session report it and keep going.
  std::function<std::unique_ptr<LmRun>(std::shared_ptr<const lm::Model>, const std::string&,
                                       const std::vector<int>&)>
      forward = lm_forward_run;

 private:
  void start_compute();
  void start_compute_ids(std::vector<int> ids);
  void generate_next();  // the next token from run_, and its run

  void took_model();  // after model_ changed: status, head in range, run the sentence

  std::shared_ptr<const lm::Model> model_;
  std::shared_ptr<const LmRun> run_;  // shared with the views' workers, which may outlive it here
  std::string text_ = kDefaultLmText;
  bool text_from_user_ = false;
  std::string error_, status_, busy_what_, failure_, opened_;
  uint64_t serial_ = 0;
  // Loading returns the model, or null and why.
  BackgroundJob<std::pair<std::shared_ptr<lm::Model>, std::string>> load_;
  BackgroundJob<std::unique_ptr<LmRun>> compute_;
  bool compute_again_ = false;
  RunDerived<std::array<int, 3>, CircuitView> circuit_;
  RunDerived<std::tuple<int, int, int, double>, lm::BlockPath> block_;
  RunDerived<int, std::vector<std::vector<double>>> rollout_;
  // Live generation: tokens still to add, greedy or sampled, what was added, the text before
  // it, the ids of the run on its way, and the sampler's generator (seeded: a class sees the
  // same continuation twice).
  int generate_left_ = 0;
  bool generate_sample_ = false;
  std::vector<int> generated_, generating_ids_;
  std::string prompt_text_;
  std::mt19937_64 rng_{2024};
};

}  // namespace attn
