// What the language-model window's tabs derive from a run (see lm_views.h).
#include "gui/model/lm_views.h"

#include "gui/model/lm_session.h"
#include "lm/head_trace.h"

namespace attn {

CircuitView circuit_view(const LmRun& r, int query, int prev, int ind) {
  const lm::Config& c = r.model->config;
  const int l = ind / c.n_head, h = ind % c.n_head;
  CircuitView k;
  k.query = query;
  k.prev = prev;
  k.ind = ind;
  const float* w = r.acts.att_at(c, l, 0, h) + static_cast<size_t>(query) * r.acts.T;
  for (int j = 0; j <= query; ++j) {
    if (k.winner < 0 || w[j] > w[k.winner]) {
      k.runner_up = k.winner;
      k.winner = j;
    } else if (k.runner_up < 0 || w[j] > w[k.runner_up]) {
      k.runner_up = j;
    }
  }
  k.winner_parts = lm::key_score_parts(*r.model, r.acts, l, h, query, k.winner);
  if (k.runner_up >= 0)
    k.runner_parts = lm::key_score_parts(*r.model, r.acts, l, h, query, k.runner_up);
  k.next = lm::top_tokens_at(*r.model, r.acts, query, 3);
  return k;
}

lm::BlockPath block_view(const LmRun& r, int layer, int head, int position, double temperature) {
  lm::BlockPathOptions o;
  o.values = 6;
  o.top_keys = 5;
  o.top_tokens = 5;
  o.temperature = temperature;
  return lm::block_path(*r.model, r.acts, layer, head, position, o);
}

}  // namespace attn
