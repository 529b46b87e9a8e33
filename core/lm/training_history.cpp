// Reads back the history `lm train` writes (training_json in lm/trainer.cpp).
#include "lm/training_history.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/input_file.h"

namespace attn::lm {

namespace {

// A finite number at `key` of `row`, or false.
bool finite_at(const nlohmann::json& row, const char* key, double& out) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number()) return false;
  out = it->get<double>();
  return std::isfinite(out);
}

}  // namespace

bool read_training_history(const std::string& folder, TrainingHistory& out, std::string& error) {
  const std::string path = folder + "/training.json";
  std::string text;
  return read_regular_file(path, 64u << 20, text, error) &&
         parse_training_history(text, path, out, error);
}

bool parse_training_history(const std::string& text, const std::string& path, TrainingHistory& out,
                            std::string& error) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = path + ": not a JSON object";
    return false;
  }
  const auto rows = j.find("history");
  if (rows == j.end() || !rows->is_array() || rows->empty()) {
    error = path + ": no \"history\" of evaluated steps";
    return false;
  }
  TrainingHistory h;
  if (const auto c = j.find("command"); c != j.end() && c->is_string()) h.command = *c;
  std::vector<double> batch_loss, corpus_loss;
  for (size_t i = 0; i < rows->size(); ++i) {
    const nlohmann::json& row = (*rows)[i];
    const std::string where = path + ": history[" + std::to_string(i) + "]";
    const auto step = row.is_object() ? row.find("step") : row.end();
    if (step == row.end() || !step->is_number_integer() || *step < 0) {
      error = where + " has no step (a whole number, 0 or more)";
      return false;
    }
    const int s = step->get<int>();
    if (!h.steps.empty() && s <= h.steps.back()) {
      error = where + ": step " + std::to_string(s) + " does not come after step " +
              std::to_string(h.steps.back());
      return false;
    }
    double train = 0, held = 0, corpus = 0;
    if (!finite_at(row, "train_loss", train) || !finite_at(row, "heldout_loss", held)) {
      error = where + " (step " + std::to_string(s) +
              ") has no finite \"train_loss\" and \"heldout_loss\"";
      return false;
    }
    h.steps.push_back(s);
    h.train_loss.push_back(train);
    batch_loss.push_back(held);
    const auto ec = row.find("eval_corpus");
    if (ec != row.end() && ec->is_object() && finite_at(*ec, "loss", corpus))
      corpus_loss.push_back(corpus);
  }
  h.heldout_is_corpus = corpus_loss.size() == h.steps.size();
  h.heldout_loss = h.heldout_is_corpus ? corpus_loss : batch_loss;
  out = std::move(h);
  return true;
}

}  // namespace attn::lm
