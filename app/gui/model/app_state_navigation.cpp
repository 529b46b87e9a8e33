// AppState's navigation: the pipeline strip's stages, stepping and playing through them, the head,
// the selected cell or row, and the narration request they make.
#include <algorithm>

#include "gui/model/app_state.h"

namespace attn {

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
  for (int i = 0; i < kStageCount; ++i) {
    const StageId id = static_cast<StageId>(i);
    if (in_strip(id) && (id == StageId::kInputs || trace_.find(id)))
      out.push_back(stage_info(id, trace_));
  }
  return out;
}

const StageInfo AppState::current_stage() const {
  std::vector<StageInfo> st = stages();
  return st.at(std::clamp(stage_, 0, static_cast<int>(st.size()) - 1));
}

bool AppState::set_stage(StageId id_in) {
  // A stage shown inside another (q, k, v and x in the inputs, head_contrib with projected)
  // opens the one that shows it.
  const StageId id = stage_info(id_in).shown_as;
  std::vector<StageInfo> st = stages();
  for (size_t i = 0; i < st.size(); ++i)
    if (st[i].id == id) {
      stage_ = static_cast<int>(i);
      stage_id_ = id;
      play_clock_ = 0;
      succeeded();
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

void AppState::set_head(int h) {
  head_ = std::clamp(h, 0, std::max(0, trace_.num_heads - 1));
  succeeded();
}

void AppState::select_cell(int query, int key) {
  if (query < 0 || query >= trace_.n_q) return;
  selection_ = {query, key >= 0 && key < trace_.n_k ? key : -1};
  succeeded();
}

void AppState::select_row(int query) { select_cell(query, -1); }

std::optional<ExplainRequest> AppState::narration_request() const {
  if (!selection_.active() || !has_trace()) return std::nullopt;
  ExplainRequest r;
  r.query = selection_.query;
  r.head = head_;
  if (selection_.key >= 0) r.key = selection_.key;
  const StageId id = current_stage().id;
  if (id != StageId::kInputs) r.step = id;
  r.precision = precision;
  return r;
}

std::string AppState::narration(std::string& error) const {
  std::optional<ExplainRequest> r = narration_request();
  if (!r) return "";
  return explain(trace_, *r, error);
}

}  // namespace attn
