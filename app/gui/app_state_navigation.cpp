// AppState's navigation: the pipeline strip's stages, stepping and playing through them, the head,
// the selected cell or row, and the narration request they make.
#include <algorithm>

#include "gui/app_state.h"

namespace attn {
namespace {

const StageInfo kAllStages[] = {
    {"qkv", "Q, K, V", "Queries, keys and values",
     "Each token asks with its query, advertises with its key and carries content in its value; "
     "attention compares every query with every key to decide how much of each value to take."},
    {"k_proj", "E·K", "Projected keys",
     "Linformer: E (k × n_k) mixes the n_k keys into k virtual keys (and F the values), so each "
     "query compares itself with k rows instead of n: O(n·k) work instead of O(n²)."},
    {"scores", "QKᵀ", "Scores",
     "A dot product measures how well a query matches a key: large and positive when they point "
     "the same way, negative when they point apart."},
    {"scaled", "÷√dₖ", "Scaled scores",
     "Dot products of random d_k-dimensional vectors have a variance that grows with d_k; dividing "
     "by √d_k keeps scores near unit size so the softmax does not saturate into a one-hot choice."},
    {"pre_conv", "mask", "Scores before the convolution",
     "The masked scores as plain attention would use them; Multi-Token Attention convolves this "
     "map next."},
    {"masked", "mask", "Masked scores",
     "Some keys must not be seen (future tokens, padding, keys outside a window); a score of −∞ "
     "gives them a weight of exactly 0 after the softmax."},
    {"pre_mix", "softmax", "Weights before head mixing",
     "Each head's own softmax weights; Multi-Token Attention then blends the weights of groups of "
     "heads."},
    {"weights", "softmax", "Attention weights",
     "Softmax turns each row of scores into positive weights that sum to 1, so the output is an "
     "average of the values; the temperature sharpens (T < 1) or flattens (T > 1) it."},
    {"output", "·V", "Output",
     "Each output row is the weighted average of the value vectors: what the query gathers from "
     "the keys it attends to."},
    {"concat", "concat", "Heads concatenated",
     "Each head attends in its own subspace; their outputs are placed side by side so the next "
     "layer sees all of them."},
    {"projected", "·W_O", "Output projection",
     "W_O mixes the heads' outputs back into the model dimension; it equals summing each head "
     "through its own slice of W_O."},
};

// With Bahdanau's additive score the first two stages read differently.
const StageInfo kAdditiveScores = {
    "scores", "vᵀtanh", "Additive scores",
    "Bahdanau's additive score runs each query–key pair through a small network, vᵀ tanh(W_q q + "
    "W_k k): W_q q and W_k k are added, squashed by tanh and weighed by v."};
const StageInfo kAdditiveScaled = {
    "scaled", "×1", "Scaled scores",
    "The additive score needs no √d_k: each tanh term lies in [−1, 1], so the score is bounded by "
    "Σ|v| whatever d_k is. The scale is 1 unless one is chosen."};

}  // namespace

void AppState::clamp_view() {
  std::vector<StageInfo> st = stages();
  stage_ = static_cast<int>(st.size()) - 1;
  for (size_t i = 0; i < st.size(); ++i)
    if (st[i].id == stage_id_) stage_ = static_cast<int>(i);
  head_ = std::clamp(head_, 0, std::max(0, trace_.num_heads - 1));
  if (selection_.query >= trace_.n_q || selection_.key >= trace_.n_k) selection_ = {};
}

std::vector<StageInfo> AppState::stages() const {
  std::vector<StageInfo> out;
  for (const StageInfo& s : kAllStages)
    if (s.id == "qkv" || trace_.find(s.id)) {
      if (trace_.additive && s.id == "scores")
        out.push_back(kAdditiveScores);
      else if (trace_.additive && s.id == "scaled")
        out.push_back(kAdditiveScaled);
      else
        out.push_back(s);
    }
  // Multi-Token Attention: masked is the convolved map, weights the mixed ones.
  for (StageInfo& s : out) {
    if (s.id == "masked" && trace_.find("pre_conv")) {
      s.label = "θ∗S";
      s.title = "Convolved scores";
      s.why =
          "Multi-Token Attention: each score becomes a weighted sum of its neighbours (queries "
          "above, keys around), so a key can win because of the words next to it.";
    }
    if (s.id == "weights" && trace_.find("pre_mix")) {
      s.label = "mix";
      s.title = "Mixed weights";
      s.why =
          "Multi-Token Attention: each head's weights become a blend of the weights of its group "
          "of heads, so one head can use what another found.";
    }
  }
  return out;
}

const StageInfo AppState::current_stage() const {
  std::vector<StageInfo> st = stages();
  return st.at(std::clamp(stage_, 0, static_cast<int>(st.size()) - 1));
}

bool AppState::set_stage(const std::string& id_in) {
  std::string id = id_in;
  if (id == "q" || id == "k" || id == "v" || id == "x" || id == "x_kv" || id == "inputs")
    id = "qkv";
  if (id == "head_contrib") id = "projected";
  std::vector<StageInfo> st = stages();
  for (size_t i = 0; i < st.size(); ++i)
    if (st[i].id == id) {
      stage_ = static_cast<int>(i);
      stage_id_ = id;
      play_clock_ = 0;
      return true;
    }
  return false;
}

void AppState::next_stage() {
  std::vector<StageInfo> st = stages();
  if (stage_ + 1 < static_cast<int>(st.size())) set_stage(st[stage_ + 1].id);
}
void AppState::prev_stage() {
  std::vector<StageInfo> st = stages();
  if (stage_ > 0) set_stage(st[stage_ - 1].id);
}
void AppState::first_stage() { set_stage(stages().front().id); }
void AppState::last_stage() { set_stage(stages().back().id); }

bool AppState::tick(double dt) {
  if (!playing) return false;
  play_clock_ += dt;
  if (play_clock_ < play_interval) return false;
  play_clock_ = 0;
  const int before = stage_;
  if (stage_ + 1 >= static_cast<int>(stages().size())) {
    playing = false;  // stop at the end rather than loop, so the class sees the result
    return false;
  }
  next_stage();
  return stage_ != before;
}

void AppState::set_head(int h) { head_ = std::clamp(h, 0, std::max(0, trace_.num_heads - 1)); }

void AppState::select_cell(int query, int key) {
  if (query < 0 || query >= trace_.n_q) return;
  selection_ = {query, key >= 0 && key < trace_.n_k ? key : -1};
}

void AppState::select_row(int query) { select_cell(query, -1); }

std::optional<ExplainRequest> AppState::narration_request() const {
  if (!selection_.active() || !has_trace()) return std::nullopt;
  ExplainRequest r;
  r.query = selection_.query;
  r.head = head_;
  if (selection_.key >= 0) r.key = selection_.key;
  const std::string id = current_stage().id;
  if (id != "qkv") r.step = id;
  r.precision = precision;
  return r;
}

std::string AppState::narration(std::string& error) const {
  std::optional<ExplainRequest> r = narration_request();
  if (!r) return "";
  return explain(trace_, *r, error);
}

}  // namespace attn
