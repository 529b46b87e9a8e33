// The training checkpoint file (see train_checkpoint.h).
#include "lm/train_checkpoint.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace attn::lm {
namespace {

constexpr const char* kMagic = "attention-lab training checkpoint 1\n";

using Json = nlohmann::json;

Json point_json(const EvalPoint& e) {
  Json heads = Json::array();
  for (const HeadScores& h : e.heads)
    heads.push_back({h.previous, h.first, h.self, h.induction, h.induction_queries});
  return {{"step", e.step},
          {"train_loss", e.train_loss},
          {"heldout_loss", e.heldout_loss},
          {"icl_accuracy", e.icl_accuracy},
          {"icl_loss", e.icl_loss},
          {"lr", e.lr},
          {"seconds", e.seconds},
          {"heads", heads},
          {"best_induction", e.best_induction},
          {"best_previous", e.best_previous},
          {"eval_tokens", e.eval_tokens},
          {"eval_loss", e.eval_loss},
          {"eval_top1", e.eval_top1},
          {"eval_top5", e.eval_top5}};
}

EvalPoint point_of(const Json& j) {
  EvalPoint e;
  read_json_field(j, "step", e.step);
  read_json_field(j, "train_loss", e.train_loss);
  read_json_field(j, "heldout_loss", e.heldout_loss);
  read_json_field(j, "icl_accuracy", e.icl_accuracy);
  read_json_field(j, "icl_loss", e.icl_loss);
  read_json_field(j, "lr", e.lr);
  read_json_field(j, "seconds", e.seconds);
  for (const Json& h : j.at("heads")) {
    HeadScores s;
    const nlohmann::json o = {{"previous", h.at(0)},
                              {"first", h.at(1)},
                              {"self", h.at(2)},
                              {"induction", h.at(3)},
                              {"queries", h.at(4)}};
    read_json_field(o, "previous", s.previous);
    read_json_field(o, "first", s.first);
    read_json_field(o, "self", s.self);
    read_json_field(o, "induction", s.induction);
    read_json_field(o, "queries", s.induction_queries);
    e.heads.push_back(s);
  }
  read_json_field(j, "best_induction", e.best_induction);
  read_json_field(j, "best_previous", e.best_previous);
  if (e.best_induction < 0 || e.best_induction >= static_cast<int>(e.heads.size()) ||
      e.best_previous < 0 || e.best_previous >= static_cast<int>(e.heads.size()))
    throw std::out_of_range("a history point's best head is not one of its heads");
  read_json_field(j, "eval_tokens", e.eval_tokens);
  read_json_field(j, "eval_loss", e.eval_loss);
  read_json_field(j, "eval_top1", e.eval_top1);
  read_json_field(j, "eval_top5", e.eval_top5);
  return e;
}

void append_floats(std::string& out, const float* p, size_t n) {
  if (n > 0) out.append(reinterpret_cast<const char*>(p), n * sizeof(float));
}

}  // namespace

uint64_t fnv1a64(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string checkpoint_bytes(const TrainCheckpoint& c) {
  const TrainState& s = c.state;
  Json history = Json::array();
  for (const EvalPoint& e : c.history) history.push_back(point_json(e));
  const Json header = {{"run", c.run},
                       {"step", s.step},
                       {"adam_steps", s.opt.steps},
                       {"rng", s.rng.state()},
                       {"interval_loss", s.interval_loss},
                       {"interval_steps", s.interval_steps},
                       {"seconds", s.seconds},
                       {"params", c.params.size()},
                       {"moments", s.opt.m.size()},
                       {"history", history}};
  const std::string text = header.dump();
  std::string out = kMagic + std::to_string(text.size()) + "\n" + text;
  append_floats(out, c.params.data(), c.params.size());
  append_floats(out, s.opt.m.data(), s.opt.m.size());
  append_floats(out, s.opt.v.data(), s.opt.v.size());
  const uint64_t sum = fnv1a64(out);
  out.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  return out;
}

bool parse_checkpoint(const std::string& bytes, TrainCheckpoint& out, std::string& error) {
  const size_t magic = std::strlen(kMagic);
  if (bytes.compare(0, magic, kMagic) != 0) {
    error = "not a training checkpoint of this version (its first line is not '" +
            std::string(kMagic, magic - 1) + "')";
    return false;
  }
  if (bytes.size() < magic + sizeof(uint64_t)) {
    error = "cut short";
    return false;
  }
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + bytes.size() - sizeof sum, sizeof sum);
  const std::string body = bytes.substr(0, bytes.size() - sizeof sum);
  if (fnv1a64(body) != sum) {
    error = "damaged (its checksum does not match; cut short or changed)";
    return false;
  }
  const size_t eol = body.find('\n', magic);
  size_t length = 0;
  try {
    length = std::stoul(body.substr(magic, eol - magic));
  } catch (const std::exception&) {
    error = "no header length on its second line";
    return false;
  }
  if (eol == std::string::npos || length > body.size() - eol - 1) {
    error = "its header runs past the end";
    return false;
  }
  TrainCheckpoint c;
  size_t n_params = 0, n_moments = 0;
  try {
    const Json h = Json::parse(body.substr(eol + 1, length));
    read_json_field(h, "run", c.run);
    read_json_field(h, "step", c.state.step);
    read_json_field(h, "adam_steps", c.state.opt.steps);
    if (!c.state.rng.set_state(h.at("rng").get<std::string>()))
      throw std::out_of_range("rng: not a generator state");
    read_json_field(h, "interval_loss", c.state.interval_loss);
    read_json_field(h, "interval_steps", c.state.interval_steps);
    read_json_field(h, "seconds", c.state.seconds);
    read_json_field(h, "params", n_params);
    read_json_field(h, "moments", n_moments);
    for (const Json& e : h.at("history")) c.history.push_back(point_of(e));
  } catch (const std::exception& e) {
    error = std::string("its header is not valid: ") + e.what();
    return false;
  }
  if (c.state.step < 0 || c.state.interval_steps < 0 || (n_moments != 0 && n_moments != n_params)) {
    error = "its header is not valid: negative steps, or moments not laid out like the weights";
    return false;
  }
  const size_t floats = body.size() - eol - 1 - length;
  if (floats != (n_params + 2 * n_moments) * sizeof(float)) {
    error = "its weights and moments are " + std::to_string(floats) + " bytes, the header says " +
            std::to_string((n_params + 2 * n_moments) * sizeof(float));
    return false;
  }
  const char* p = body.data() + eol + 1 + length;
  auto take = [&p](std::vector<float>& v, size_t n) {
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), p, n * sizeof(float));  // an empty vector's data() may be null
    p += n * sizeof(float);
  };
  take(c.params, n_params);
  take(c.state.opt.m, n_moments);
  take(c.state.opt.v, n_moments);
  out = std::move(c);
  return true;
}

}  // namespace attn::lm
