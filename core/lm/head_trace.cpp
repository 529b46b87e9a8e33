// One head as a scenario, head scores, next-token probabilities.
#include "lm/head_trace.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "lm/llama_forward.h"

namespace attn::lm {

std::vector<std::string> display_tokens(const Tokenizer& tok, const std::vector<int>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) out.push_back(tok.display(id));
  return out;
}

std::string kv_sharers(const Config& c, int head) {
  const int g = c.group(), first = head / g * g;
  std::vector<int> others;
  for (int h = first; h < first + g; ++h)
    if (h != head) others.push_back(h);
  std::string out;
  for (size_t i = 0; i < others.size();) {
    size_t j = i;  // others[i..j] is a run of consecutive heads
    while (j + 1 < others.size() && others[j + 1] == others[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    if (j - i >= 2) {
      out += std::to_string(others[i]) + "–" + std::to_string(others[j]);
    } else {
      for (size_t k = i; k <= j; ++k) out += (k > i ? ", " : "") + std::to_string(others[k]);
    }
    i = j + 1;
  }
  return out;
}

std::string kv_head_text(const Config& c, int head) {
  const std::string sharers = kv_sharers(c, head);
  return "K/V head " + std::to_string(head / c.group()) + " of " + std::to_string(c.kv_heads()) +
         (sharers.empty()
              ? ", read by this query head only"
              : ", shared with query head" + std::string(c.group() > 2 ? "s " : " ") + sharers);
}

Scenario head_scenario(const Model& m, const Activations& a, int layer, int head,
                       const std::vector<std::string>& tokens, const std::string& text) {
  const Config& c = m.config;
  const int T = a.T, hs = c.head_size(), W = c.qkv_width();
  const int kv = head / c.group();  // the K/V head this query head reads
  const float* qkv = a.qkv_at(c, layer, 0);
  const size_t qcol = static_cast<size_t>(head) * hs,
               kcol = static_cast<size_t>(c.q_dim()) + static_cast<size_t>(kv) * hs,
               vcol = kcol + static_cast<size_t>(c.kv_dim());
  Matrix q(T, hs), k(T, hs), v(T, hs);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < hs; ++i) {
      const float* row = qkv + static_cast<size_t>(t) * W + i;
      q(t, i) = row[qcol];
      k(t, i) = row[kcol];
      v(t, i) = row[vcol];
    }
  Scenario s;
  s.name = m.name + " layer " + std::to_string(layer) + " head " + std::to_string(head);
  // The K/V head a query head reads is part of its name in today's models (grouped-query).
  if (c.llama_family()) s.name += " (" + kv_head_text(c, head) + ")";
  const std::string where = "Layer " + std::to_string(layer) + ", head " + std::to_string(head) +
                            " of " + m.name + " on \"" + text + "\": ";
  if (!c.llama_family()) {
    s.description = where + "Q, K and V are this head's " + std::to_string(hs) +
                    " columns of c_attn's output; GPT-2's causal mask and 1/√d_k scale.";
  } else {
    const std::string sharers = kv_sharers(c, head);
    const std::string sharing =
        sharers.empty()
            ? std::string()
            : "; shared with query head" + std::string(c.group() > 2 ? "s " : " ") + sharers;
    const char* kind = c.kv_heads() == 1          ? "multi-query attention"
                       : c.kv_heads() == c.n_head ? "multi-head attention"
                                                  : "grouped-query attention";
    s.description = where + "Q is this head's " + std::to_string(hs) +
                    " columns of q_proj's output; K and V are K/V head " + std::to_string(kv) +
                    " of " + std::to_string(c.kv_heads()) + " (" + kind + sharing +
                    "); Q and K after RoPE; causal mask" +
                    (c.window(layer) > 0
                         ? " with a sliding window of " + std::to_string(c.window(layer)) + " keys"
                         : std::string()) +
                    " and 1/√d_k scale.";
  }
  s.query_tokens = tokens;
  s.qkv.q = {std::move(q)};
  s.qkv.k = {std::move(k)};
  s.qkv.v = {std::move(v)};
  s.options.mask.causal = CausalAlign::kTopLeft;
  if (c.llama_family()) {  // Q and K before RoPE, for the trace's rope step
    const int QK = c.q_dim() + c.kv_dim();
    const float* raw = a.qk_unrotated.data() + static_cast<size_t>(layer) * a.B * T * QK;
    Matrix qb(T, hs), kb(T, hs);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < hs; ++i) {
        const float* row = raw + static_cast<size_t>(t) * QK + i;
        qb(t, i) = row[qcol];
        kb(t, i) = row[kcol];
      }
    s.rope.q_before = {std::move(qb)};
    s.rope.k_before = {std::move(kb)};
    s.rope.inv_freq = rope_inv_freq(c);
  }
  // Mistral's window i − W < j ≤ i is the engine's causal window p − (W − 1) ≤ j ≤ p.
  if (c.window(layer) > 0) s.options.mask.window = c.window(layer) - 1;
  return s;
}

std::vector<std::pair<int, int>> induction_targets(const std::vector<int>& tokens) {
  std::vector<std::pair<int, int>> out;
  std::unordered_map<int, int> last_seen;
  for (int t = 0; t < static_cast<int>(tokens.size()); ++t) {
    auto it = last_seen.find(tokens[static_cast<size_t>(t)]);
    if (it != last_seen.end() && it->second + 1 < t) out.emplace_back(t, it->second + 1);
    last_seen[tokens[static_cast<size_t>(t)]] = t;
  }
  return out;
}

std::vector<HeadScores> head_scores(const Config& c, const Activations& a, int b) {
  const int T = a.T;
  const std::vector<int> seq(a.tokens.begin() + static_cast<long>(b) * T,
                             a.tokens.begin() + static_cast<long>(b + 1) * T);
  const auto targets = induction_targets(seq);
  std::vector<HeadScores> out;
  for (int l = 0; l < c.n_layer; ++l)
    for (int h = 0; h < c.n_head; ++h) {
      const float* w = a.att_at(c, l, b, h);
      HeadScores s;
      if (T > 1) {
        for (int t = 1; t < T; ++t) {
          s.previous += w[static_cast<size_t>(t) * T + t - 1];
          s.first += w[static_cast<size_t>(t) * T];
          s.self += w[static_cast<size_t>(t) * T + t];
        }
        s.previous /= T - 1;
        s.first /= T - 1;
        s.self /= T - 1;
      }
      if (!targets.empty()) {
        double sum = 0;
        for (auto [t, key] : targets) sum += w[static_cast<size_t>(t) * T + key];
        s.induction = sum / static_cast<double>(targets.size());
      }
      s.induction_queries = static_cast<int>(targets.size());
      out.push_back(s);
    }
  return out;
}

CopyAccuracy copy_accuracy(const Config& c, const Activations& a, int b) {
  assert(a.logits_T == a.T);
  const int T = a.T, V = c.vocab_size;
  const int* tok = a.tokens.data() + static_cast<size_t>(b) * T;
  CopyAccuracy out;
  for (auto [t, key] : induction_targets(std::vector<int>(tok, tok + T))) {
    if (t + 1 >= T || tok[t + 1] != tok[key]) continue;
    const float* z = a.logits.data() + (static_cast<size_t>(b) * T + t) * V;
    out.correct += static_cast<int>(std::max_element(z, z + V) - z) == tok[key] ? 1 : 0;
    ++out.total;
  }
  return out;
}

namespace {

std::vector<std::pair<int, double>> top_of(const float* logits, int V, int k, double temperature) {
  const std::vector<double> p = softmax_probabilities(logits, V, temperature);
  std::vector<int> ids(static_cast<size_t>(V));
  for (int i = 0; i < V; ++i) ids[static_cast<size_t>(i)] = i;
  k = std::clamp(k, 0, V);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int x, int y) {
    return p[static_cast<size_t>(x)] != p[static_cast<size_t>(y)]
               ? p[static_cast<size_t>(x)] > p[static_cast<size_t>(y)]
               : x < y;
  });
  std::vector<std::pair<int, double>> out;
  for (int i = 0; i < k; ++i)
    out.emplace_back(ids[static_cast<size_t>(i)],
                     p[static_cast<size_t>(ids[static_cast<size_t>(i)])]);
  return out;
}

}  // namespace

std::vector<std::pair<int, double>> top_next_tokens(const Config& c, const Activations& a, int k,
                                                    double temperature) {
  const int V = c.vocab_size;
  return top_of(a.logits.data() + static_cast<size_t>(a.logits_T - 1) * V, V, k, temperature);
}

std::vector<std::pair<int, double>> top_tokens_at(const Model& m, const Activations& a, int t,
                                                  int k, double temperature) {
  const int V = m.config.vocab_size, C = m.config.n_embd;
  std::vector<float> logits(static_cast<size_t>(V));
  if (m.config.llama_family())
    linear_forward(a.lnf.data() + static_cast<size_t>(t) * C, 1, m.llama.output(), nullptr,
                   logits.data(), V, 1);
  else
    logits_forward(a.lnf.data() + static_cast<size_t>(t) * C, m.params.ptr(kWte), 1, C, V,
                   logits.data(), 1);
  return top_of(logits.data(), V, k, temperature);
}

}  // namespace attn::lm
