// The language-model state of the app: loading and forward passes on worker threads.
#include "gui/lm_session.h"

#include <algorithm>
#include <cstdio>

namespace attn {

LmSession::~LmSession() { wait(); }

bool LmSession::open(const std::string& folder_or_name) {
  std::string error;
  const std::string folder = lm::resolve_model_folder(folder_or_name, error);
  if (folder.empty()) {
    // The resolver names the field; the app's model picker says what it is without it.
    error_ = error.rfind("model: ", 0) == 0 ? error.substr(7) : error;
    return false;
  }
  if (load_.valid()) load_.wait();
  busy_what_ = "loading " + folder;
  busy_start_ = std::chrono::steady_clock::now();
  load_ = std::async(std::launch::async, [folder] {
    auto m = std::make_shared<lm::Model>();
    std::string e;
    if (!lm::load_model(folder, *m, e)) m.reset();
    return std::make_pair(std::move(m), e);
  });
  return true;
}

void LmSession::adopt(std::shared_ptr<const lm::Model> model) {
  if (!model) return;
  if (load_.valid()) load_.get();  // a folder still loading would replace it: dropped
  model_ = std::move(model);
  took_model();
}

void LmSession::took_model() {
  const lm::Config& c = model_->config;
  status_ = "Opened " + model_->name + ": " + std::to_string(c.n_layer) + " layers × " +
            std::to_string(c.n_head) + " heads, n_embd " + std::to_string(c.n_embd) +
            ", vocabulary " + std::to_string(c.vocab_size) + " (" + model_->dtype + ")";
  error_.clear();
  run_.reset();
  layer = std::min(layer, c.n_layer - 1);
  head = std::min(head, c.n_head - 1);
  start_compute();
}

void LmSession::set_text(const std::string& text) {
  text_ = text;
  start_compute();
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
  std::vector<int> ids = model_->tokenizer.encode(text_);
  if (static_cast<int>(ids.size()) > model_->config.n_positions) {
    error_ = "The sentence has " + std::to_string(ids.size()) + " tokens; " + model_->name +
             " reads at most " + std::to_string(model_->config.n_positions) + ".";
    return;
  }
  error_.clear();
  if (compute_.valid()) {
    compute_again_ = true;  // the newest text runs when this one is done
    return;
  }
  busy_what_ = "running " + model_->name;
  busy_start_ = std::chrono::steady_clock::now();
  compute_ = std::async(std::launch::async, [model = model_, text = text_, ids = std::move(ids)] {
    auto r = std::make_unique<LmRun>();
    r->model = model;
    r->text = text;
    r->ids = ids;
    r->tokens = lm::display_tokens(model->tokenizer, ids);
    lm::ForwardOptions o;
    o.all_logits = false;  // the chart needs the last position only
    lm::gpt_forward(*model, ids, 1, static_cast<int>(ids.size()), r->acts, o);
    r->scores = lm::head_scores(model->config, r->acts);
    return r;
  });
}

bool LmSession::poll() {
  bool changed = false;
  if (load_.valid() && load_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    auto [m, e] = load_.get();
    if (m) {
      model_ = std::move(m);
      took_model();
    } else {
      error_ = e;
    }
    changed = true;
  }
  if (compute_.valid() && compute_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    std::unique_ptr<LmRun> r = compute_.get();
    // A run of a model replaced meanwhile is dropped; the new model's run is on its way.
    if (r->model == model_) {
      run_ = std::move(r);
      ++serial_;
    }
    changed = true;
    if (compute_again_) {
      compute_again_ = false;
      start_compute();
    }
  }
  return changed;
}

void LmSession::wait() {
  while (busy()) {
    if (load_.valid()) load_.wait();
    if (compute_.valid()) compute_.wait();
    poll();
  }
}

double LmSession::busy_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_start_).count();
}

void LmSession::select(int l, int h) {
  if (!model_) return;
  layer = std::clamp(l, 0, model_->config.n_layer - 1);
  head = std::clamp(h, 0, model_->config.n_head - 1);
}

std::vector<std::pair<int, double>> LmSession::next_tokens() const {
  if (!run_) return {};
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
