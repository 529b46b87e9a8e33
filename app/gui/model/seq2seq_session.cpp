#include "gui/model/seq2seq_session.h"

#include <algorithm>
#include <filesystem>

#include "io/shipped.h"

namespace attn {

using namespace attn::s2s;

Seq2seqTranslation translate_for_view(const Model& m, const std::string& input) {
  Seq2seqTranslation t;
  s2s::Alignment a;
  if (!s2s::align(m, input, a, t.error)) return t;
  t.fc = std::move(a.fc);
  t.output = std::move(a.output);
  t.rows = std::move(a.rows);
  t.cols = std::move(a.cols);
  t.weights = std::move(a.weights);
  t.visible = std::move(a.visible);
  return t;
}

void Seq2seqSession::find_models() {
  scanned_ = true;
  scanned_for_ = open_model;
  files_.clear();
  names_.clear();
  for (const ShippedItem& item : list_shipped(kSeq2seqModels)) {
    files_.push_back(item.path);
    names_.push_back(item.name);
  }
  const std::string& want = open_model;
  if (!want.empty() && std::find(files_.begin(), files_.end(), want) == files_.end()) {
    const size_t slash = want.rfind('/');
    files_.push_back(want);
    names_.push_back(slash == std::string::npos ? want : want.substr(slash + 1));
  }
  for (int i = 0; i < model_count(); ++i)
    if (want.empty() ? name(i) == "bahdanau" : files_[static_cast<size_t>(i)] == want) model_a = i;
}

void Seq2seqSession::ensure_models() {
  if (!scanned_ || scanned_for_ != open_model) find_models();
}

void Seq2seqSession::add_loaded(const std::string& path, Model m) {
  models_[path] = std::move(m);
  load_errors_.erase(path);
}

const Model* Seq2seqSession::model(int index) {
  if (index < 0 || index >= model_count()) return nullptr;
  const std::string& f = files_[static_cast<size_t>(index)];
  auto it = models_.find(f);
  if (it != models_.end()) return &it->second;
  if (load_errors_.count(f)) return nullptr;
  Model m;
  std::string error;
  if (!load_model(f, m, error)) {
    load_errors_[f] = error;
    return nullptr;
  }
  return &(models_[f] = std::move(m));
}

std::string Seq2seqSession::load_error(int index) const {
  if (files_.empty()) return no_shipped_message(kSeq2seqModels);
  if (index < 0 || index >= model_count()) return "no model selected";
  auto it = load_errors_.find(files_[static_cast<size_t>(index)]);
  return it == load_errors_.end() ? std::string() : it->second;
}

const Seq2seqTranslation* Seq2seqSession::translation(int index) {
  const Model* m = model(index);
  if (!m) return nullptr;
  const std::string& file = files_[static_cast<size_t>(index)];
  auto it = translations_.find(file);
  if (it == translations_.end() || it->second.first != input)
    it = translations_.insert_or_assign(file, std::make_pair(input, translate_for_view(*m, input)))
             .first;
  return &it->second.second;
}

void Seq2seqSession::go_to_step(int s) {
  step = s;
  position = -1;
  revealed = false;
  guess = -1;
}

int Seq2seqSession::explained_position(const Model& m, const Seq2seqTranslation& t) const {
  if (m.config.score == Score::kNone || t.steps() == 0) return -1;
  if (position >= 0 && position < static_cast<int>(t.cols.size())) return position;
  Eigen::Index best = 0;
  t.fc.steps[static_cast<size_t>(std::clamp(step, 0, t.steps() - 1))].alpha.row(0).maxCoeff(&best);
  return static_cast<int>(best);
}

bool Seq2seqSession::asking(const Model& m) const {
  return m.config.score != Score::kNone && predicting && !revealed;
}

Verdict Seq2seqSession::verdict(const Seq2seqTranslation& t) const {
  const auto& st = t.fc.steps[static_cast<size_t>(std::clamp(step, 0, t.steps() - 1))];
  std::vector<double> alpha;
  std::vector<bool> hidden;
  for (int j = 0; j < t.fc.src_len; ++j) {
    alpha.push_back(st.alpha(0, j));
    hidden.push_back(st.valid.size() > 0 && st.valid(0, j) == 0.0f);
  }
  std::vector<std::string> labels;
  for (const std::string& c : t.cols) labels.push_back(c == " " ? "_" : c);
  return judge_pick(guess, alpha, labels, hidden, "attention weight", 3);
}

bool Seq2seqSession::start_live() {
  LiveTrainingSetup setup;
  setup.score = static_cast<Score>(live_score);
  setup.hidden = live_hidden;
  setup.train.epochs = live_epochs;
  setup.train.train_size = 8000;
  setup.train.heldout_size = 300;
  setup.train.threads = 2;
  setup.example = live_example;
  live.set_paused(false);
  if (!live.start(setup, live_error)) {
    live_error = "example: " + live_error;
    return false;
  }
  live_error.clear();
  return true;
}

std::string Seq2seqSession::take_training_failure(const LiveSnapshot& s) {
  const std::string& error = s.error;
  if (error.empty()) {
    reported_failure_.clear();
    return "";
  }
  if (error == reported_failure_) return "";
  reported_failure_ = error;
  return "Training failed: " + error;
}

namespace {

// What identifies a model file's contents cheaply: its size and last write time.
std::string file_stamp(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return "";
  const auto time = std::filesystem::last_write_time(path, ec);
  if (ec) return "";
  return std::to_string(size) + "@" + std::to_string(time.time_since_epoch().count());
}

}  // namespace

void Seq2seqSession::start_compare(bool fresh) {
  std::vector<Model> copies;
  compare_names.clear();
  compare_files_.clear();
  compare_stamps_.clear();
  bool cached = true;
  std::vector<std::vector<LengthBucket>> rows;
  for (int i = 0; i < model_count(); ++i)
    if (name(i).rfind("bottleneck/", 0) == 0)
      if (const Model* m = model(i)) {
        const std::string& file = files_[static_cast<size_t>(i)];
        compare_names.push_back(name(i));
        compare_files_.push_back(file);
        compare_stamps_.push_back(file_stamp(file));
        copies.push_back(*m);
        auto it = compare_cache_.find(file);
        if (it == compare_cache_.end() || it->second.first != compare_stamps_.back() ||
            compare_stamps_.back().empty())
          cached = false;
        else
          rows.push_back(it->second.second);
      }
  compare_error.clear();
  if (cached && !fresh && !copies.empty()) {
    compare_rows = std::move(rows);
    return;
  }
  compare_job.start([copies](JobControl& control) {
    const auto data = heldout_dates(kCompareDates);
    std::vector<std::vector<LengthBucket>> out;
    for (const auto& m : copies) {
      if (control.cancelled()) break;
      out.push_back(accuracy_by_length(m, data, 2));
      control.set_progress(static_cast<double>(out.size()) / static_cast<double>(copies.size()));
    }
    return out;
  });
}

std::string Seq2seqSession::poll_compare() {
  std::optional<JobResult<std::vector<std::vector<LengthBucket>>>> done = compare_job.poll();
  if (!done || done->cancelled) return "";
  if (done->ok()) {
    compare_rows = std::move(*done->value);
    for (size_t k = 0; k < compare_rows.size() && k < compare_files_.size(); ++k)
      compare_cache_[compare_files_[k]] = {compare_stamps_[k], compare_rows[k]};
    return "";
  }
  compare_error = "Evaluating the bottleneck models failed: " + done->error;
  return compare_error;
}

}  // namespace attn
