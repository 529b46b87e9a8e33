// The language-model state of the app: loading and forward passes on worker threads.
#include "gui/model/lm_session.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "lm/generate.h"
#include "lm/rollout.h"
#include "lm/train_data.h"

namespace attn {

std::unique_ptr<LmRun> lm_forward_run(std::shared_ptr<const lm::Model> model,
                                      const std::string& text, const std::vector<int>& ids) {
  auto r = std::make_unique<LmRun>();
  r->model = std::move(model);
  r->text = text;
  r->ids = ids;
  r->tokens = lm::display_tokens(r->model->tokenizer, ids);
  lm::ForwardOptions o;
  o.all_logits = false;  // the chart needs the last position only
  // A pass that overflows float32 is an error naming where, shown instead of nan cells (the
  // job hands the message to poll()); start_compute checked the size.
  if (std::string e =
          lm::checked_forward(*r->model, ids, 1, static_cast<int>(ids.size()), r->acts, o);
      !e.empty())
    throw std::runtime_error(e);
  r->scores = lm::head_scores(r->model->config, r->acts);
  return r;
}

bool is_induction_vocabulary(const lm::Tokenizer& t) {
  const lm::Tokenizer letters = lm::letter_tokenizer();
  if (t.size() != letters.size()) return false;
  for (int id = 0; id < letters.size(); ++id)
    if (t.find(letters.token(id)) != id) return false;
  return true;
}

std::string default_text_for(const lm::Model& model) {
  if (model.name == "austen") return kAustenLmText;
  if (!is_induction_vocabulary(model.tokenizer)) return kDefaultLmText;
  // 32 letters (the shipped model reads 64) with a segment of 6 to 10 repeated: the shipped
  // model learned segments of 6 to 24 (its training.json), and 32 rows fit the head view.
  lm::TrainSet set = lm::induction_set();
  const int T = std::min(31, model.config.n_positions - 1);
  if (T < 5) return kDefaultLmText;
  set.repeat_min = std::min(6, (T + 1) / 3);
  set.repeat_max = std::max(set.repeat_min, (T + 1) / 3);
  lm::Rng rng(7);
  std::vector<int> ids;
  int n = 0;
  lm::induction_sequence(set, rng, T, ids, n);
  return set.tokenizer.decode(ids);
}

LmSession::~LmSession() { wait(); }

bool LmSession::open(const std::string& folder_or_name) {
  std::string error;
  const std::string folder = lm::resolve_model_folder(folder_or_name, error);
  if (folder.empty()) {
    // The resolver names the field; the app's model picker says what it is without it.
    error_ = error.rfind("model: ", 0) == 0 ? error.substr(7) : error;
    return false;
  }
  if (load_.running()) load_.wait();
  busy_what_ = "loading " + folder;
  load_.start([folder](JobControl&) {
    auto m = std::make_shared<lm::Model>();
    std::string e;
    if (!lm::load_model(folder, *m, e)) m.reset();
    return std::make_pair(std::move(m), e);
  });
  return true;
}

void LmSession::adopt(std::shared_ptr<const lm::Model> model) {
  if (!model) return;
  if (load_.running()) {  // a folder still loading would replace it: dropped
    load_.wait();
    load_.poll();
  }
  model_ = std::move(model);
  took_model();
}

void LmSession::took_model() {
  const lm::Config& c = model_->config;
  status_ = "Opened " + model_->name + ": " + std::to_string(c.n_layer) + " layers × " +
            std::to_string(c.n_head) + " heads, n_embd " + std::to_string(c.n_embd) +
            ", vocabulary " + std::to_string(c.vocab_size) + " (" + model_->dtype + ")";
  opened_ = status_;
  error_.clear();
  run_.reset();
  if (!text_from_user_) text_ = default_text_for(*model_);
  layer = std::min(layer, c.n_layer - 1);
  head = std::min(head, c.n_head - 1);
  start_compute();
}

void LmSession::set_text(const std::string& text) {
  text_ = text;
  text_from_user_ = true;
  generate_left_ = 0;  // typing ends a generation; what it added is now the user's text
  generated_.clear();
  start_compute();
}

bool LmSession::start_generating(int tokens, bool sample) {
  if (!model_ || !run_ || busy()) {
    error_ = !model_ ? "Open a model to generate with." : "Wait for the sentence to run first.";
    return false;
  }
  if (generated_.empty()) prompt_text_ = text_;
  generate_left_ = std::max(tokens, 0);
  generate_sample_ = sample;
  generate_next();
  return true;
}

std::string LmSession::generated_text() const {
  std::string out;
  if (model_)
    for (int id : generated_) out += model_->tokenizer.token_bytes(id);
  return out;
}

void LmSession::generate_next() {
  if (generate_left_ <= 0 || !run_ || !model_) return;
  const lm::Config& c = model_->config;
  const auto V = static_cast<size_t>(c.vocab_size);
  const lm::Activations& a = run_->acts;
  const std::vector<float> logits(a.logits.end() - static_cast<long>(V), a.logits.end());
  const int next = lm::choose_next_token(logits, generate_sample_ ? temperature : 0.0, 0, rng_);
  const std::vector<int> stop = lm::end_of_text_ids(*model_);
  if (std::find(stop.begin(), stop.end(), next) != stop.end()) {
    generate_left_ = 0;
    status_ = "Generation stopped: the model chose its end-of-text token.";
    return;
  }
  if (static_cast<int>(run_->ids.size()) + 1 > c.n_positions) {
    generate_left_ = 0;
    status_ = "Generation stopped: " + model_->name + " reads at most " +
              std::to_string(c.n_positions) + " tokens.";
    return;
  }
  --generate_left_;
  generated_.push_back(next);
  std::vector<int> ids = run_->ids;
  ids.push_back(next);
  // The sentence shows what was generated (each token's own bytes: re-encoding a decoded text
  // could split it differently); the run reads the ids themselves.
  text_ = prompt_text_ + generated_text();
  text_from_user_ = true;
  generating_ids_ = ids;
  start_compute_ids(std::move(ids));
}

void LmSession::start_compute() {
  if (!model_) return;
  size_t bad = 0;
  if (text_.empty()) {
    error_ = "Type a sentence: at least one character.";
    return;
  }
  if (!lm::valid_utf8(text_, &bad)) {
    error_ = "The sentence is not valid UTF-8 (byte " + std::to_string(bad) + ").";
    return;
  }
  std::vector<int> ids;
  std::string why;
  if (!model_->tokenizer.encode(text_, ids, why)) {
    error_ = "The sentence cannot be tokenized: " + why;
    return;
  }
  start_compute_ids(std::move(ids));
}

void LmSession::start_compute_ids(std::vector<int> ids) {
  if (ids.empty()) {  // a pass over no tokens would have nothing to show
    error_ =
        "The sentence gives no tokens: this model's tokenizer removes every character, or "
        "knows none of them. Type a sentence with characters the model knows.";
    return;
  }
  if (static_cast<int>(ids.size()) > model_->config.n_positions) {
    error_ = "The sentence has " + std::to_string(ids.size()) + " tokens; " + model_->name +
             " reads at most " + std::to_string(model_->config.n_positions) + ".";
    return;
  }
  {  // Too large to run is said now, before a worker allocates gigabytes (docs/robustness.md).
    lm::ForwardOptions o;
    o.all_logits = false;
    o.mlp = model_->mlp;
    if (std::string e = lm::check_forward_size(model_->config, 1, static_cast<int>(ids.size()), o);
        !e.empty()) {
      error_ = "The sentence has " + std::to_string(ids.size()) + " tokens: " + e + ".";
      return;
    }
  }
  error_.clear();
  if (compute_.running()) {
    compute_again_ = true;  // the newest text runs when this one is done
    return;
  }
  busy_what_ = "running " + model_->name;
  compute_.start([forward = forward, model = model_, text = text_,
                  ids = std::move(ids)](JobControl&) { return forward(model, text, ids); });
}

bool LmSession::poll() {
  bool changed = false;
  std::string failed;
  for (bool got : {circuit_.poll(failed), block_.poll(failed), rollout_.poll(failed)})
    changed = changed || got;
  if (!failed.empty()) failure_ = error_ = "Computing the view failed: " + failed;
  if (std::optional<JobResult<std::pair<std::shared_ptr<lm::Model>, std::string>>> done =
          load_.poll()) {
    if (!done->ok()) {
      failure_ = error_ = "Loading the model failed: " + done->error;
    } else if (done->value->first) {
      model_ = std::move(done->value->first);
      took_model();
    } else {
      failure_ = error_ = done->value->second;
    }
    changed = true;
  }
  if (std::optional<JobResult<std::unique_ptr<LmRun>>> done = compute_.poll()) {
    if (!done->ok()) {
      // The last run stays on screen; the panel and the status bar say why it did not change.
      failure_ = error_ = "Running " + (model_ ? model_->name : std::string("the model")) +
                          " failed: " + done->error;
    } else if ((*done->value)->model == model_) {
      // A run of a model replaced meanwhile is dropped; the new model's run is on its way.
      run_ = std::move(*done->value);
      ++serial_;
    }
    changed = true;
    if (compute_again_) {
      compute_again_ = false;
      start_compute();
    } else if (generate_left_ > 0 && run_ && run_->ids == generating_ids_) {
      generate_next();  // the token just added has run: the next one
    } else if (!done->ok()) {
      generate_left_ = 0;
    }
  }
  return changed;
}

void LmSession::wait() {
  while (busy() || deriving()) {
    load_.wait();
    compute_.wait();
    circuit_.wait();
    block_.wait();
    rollout_.wait();
    poll();
  }
}

const CircuitView* LmSession::circuit(int query, int prev, int ind) {
  if (!run_) return nullptr;
  return circuit_.get(serial_, {query, prev, ind}, [run = run_, query, prev, ind] {
    return circuit_view(*run, query, prev, ind);
  });
}

const lm::BlockPath* LmSession::block_path(int layer, int head, int position, double temperature) {
  if (!run_) return nullptr;
  return block_.get(serial_, {layer, head, position, temperature},
                    [run = run_, layer, head, position, temperature] {
                      return block_view(*run, layer, head, position, temperature);
                    });
}

const std::vector<std::vector<double>>* LmSession::rollout(int token) {
  if (!run_) return nullptr;
  return rollout_.get(serial_, token, [run = run_, token] {
    return lm::rollout_of_token(run->model->config, run->acts, token);
  });
}

double LmSession::busy_seconds() const {
  return load_.running() ? load_.elapsed_seconds() : compute_.elapsed_seconds();
}

void LmSession::select(int l, int h) {
  layer = std::max(l, 0);
  head = std::max(h, 0);
  // The model on its way decides the range (took_model clamps): not the one it replaces.
  if (!model_ || load_.running()) return;
  layer = std::min(layer, model_->config.n_layer - 1);
  head = std::min(head, model_->config.n_head - 1);
}

int LmSession::shown_position() const {
  if (!run_ || run_->ids.empty()) return -1;
  const int T = static_cast<int>(run_->ids.size());
  return position >= 0 && position < T ? position : T - 1;
}

std::vector<std::pair<int, double>> LmSession::next_tokens() const {
  if (!run_) return {};
  const int t = shown_position();
  if (t + 1 < static_cast<int>(run_->ids.size()))  // the run keeps the last position's logits
    return lm::top_tokens_at(*run_->model, run_->acts, t, top_k, temperature);
  return lm::top_next_tokens(run_->model->config, run_->acts, top_k, temperature);
}

Scenario LmSession::head_scenario(int l, int h) const {
  return lm::head_scenario(*run_->model, run_->acts, l, h, run_->tokens, run_->text);
}

std::string LmSession::origin_tag(int l, int h) const {
  return "lm:" + std::to_string(l) + ":" + std::to_string(h) + ":" +
         (run_ ? run_->model->name : std::string());
}

bool LmSession::parse_origin(const std::string& origin, int& l, int& h) {
  if (origin.rfind("lm:", 0) != 0) return false;
  return std::sscanf(origin.c_str() + 3, "%d:%d:", &l, &h) == 2;
}

}  // namespace attn
