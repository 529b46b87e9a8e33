// The strongest attention sink of a run, and its explanation in its own numbers.
#include "lm/sinks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace attn::lm {
namespace {

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * x);
  return buf;
}

}  // namespace

SinkExample strongest_sink(const Config& c, const Activations& a,
                           const std::vector<HeadScores>& scores) {
  SinkExample s;
  const int T = a.T;
  if (T < 2 || scores.empty()) return s;
  const auto best =
      std::max_element(scores.begin(), scores.end(),
                       [](const HeadScores& x, const HeadScores& y) { return x.first < y.first; });
  const int index = static_cast<int>(best - scores.begin());
  s.layer = index / c.n_head;
  s.head = index % c.n_head;
  s.first = best->first;
  s.induction = best->induction;
  s.best_induction = s.induction >= 0;
  for (const HeadScores& h : scores)
    s.best_induction = s.best_induction && h.induction <= s.induction;
  const std::vector<int> seq(a.tokens.begin(), a.tokens.begin() + T);
  std::set<int> copying;  // queries whose token occurred before: something to copy
  for (auto [t, key] : induction_targets(seq)) copying.insert(t);
  const int W = c.window(s.layer);  // a sliding window hides token 0 from queries t ≥ W
  const float* w = a.att_at(c, s.layer, 0, s.head);
  double nothing = 0, something = 0;
  for (int t = 1; t < T; ++t) {
    const int visible = W > 0 ? std::min(t + 1, W) : t + 1;
    s.uniform += W > 0 && t >= W ? 0.0 : 1.0 / visible;
    const double on_first = w[static_cast<size_t>(t) * T];
    if (copying.count(t)) {
      something += on_first;
      ++s.something_queries;
    } else {
      nothing += on_first;
      ++s.nothing_queries;
    }
    if (s.peak_query < 0 || on_first > s.peak) {
      s.peak_query = t;
      s.peak = on_first;
    }
  }
  s.uniform /= T - 1;
  if (s.nothing_queries) s.nothing_to_copy = nothing / s.nothing_queries;
  if (s.something_queries) s.something_to_copy = something / s.something_queries;
  return s;
}

std::string sink_explanation(const SinkExample& s, const std::vector<std::string>& tokens) {
  if (s.layer < 0) return "A sink needs at least two tokens: type a longer sentence.";
  auto tok = [&](int t) {
    return t >= 0 && t < static_cast<int>(tokens.size())
               ? "\"" + tokens[static_cast<size_t>(t)] + "\""
               : "token " + std::to_string(t);
  };
  const std::string head = "Layer " + std::to_string(s.layer) + ", head " + std::to_string(s.head);
  std::string out;
  // A head whose sink score is no more than an even spread would give is not parking anything.
  if (s.first < 1.5 * s.uniform) {
    out = "No head parks much weight on the first token here. The most, " + head + ", puts " +
          percent(s.first) + " of each query's weight on " + tok(0) +
          " on average — an even spread over the keys would put " + percent(s.uniform) + " there.";
    return out;
  }
  out = head + " puts " + percent(s.first) + " of each query's weight on the first token, " +
        tok(0) + ", on average";
  out += s.uniform > 0
             ? " — about " + std::to_string(std::lround(s.first / s.uniform)) + " times the " +
                   percent(s.uniform) + " an even spread over the keys would give."
             : ".";
  if (s.nothing_queries > 0 && s.something_queries > 0)
    out += " On the " + std::to_string(s.nothing_queries) +
           " queries whose token has not appeared before (nothing to copy yet) it puts " +
           percent(s.nothing_to_copy) + " there; on the " + std::to_string(s.something_queries) +
           " whose token has (something to copy), " + percent(s.something_to_copy) + ".";
  out += " The most: " + tok(s.peak_query) + " (query " + std::to_string(s.peak_query) + ") puts " +
         percent(s.peak) + " on it.";
  if (s.best_induction) {
    char score[32];
    std::snprintf(score, sizeof score, "%.2f", s.induction);
    out += " It is also the strongest induction head here (induction score " + std::string(score) +
           "): where a token has appeared before, it looks at the token that followed it; where "
           "nothing has, it parks its weight on the first token.";
  }
  out +=
      "\n\nWhy: softmax weights are positive and sum to 1, so a head must put its weight "
      "somewhere, even when no key in the sentence is of use to it. The first token is the one "
      "key every query can see, so training teaches a head with nothing to do to park the spare "
      "weight there — its value adds little to the output. Such a key is an attention sink "
      "(Xiao et al. 2023): a model that drops its first token from the cache loses its sink and "
      "falls apart, which is why streaming models keep it.";
  return out;
}

}  // namespace attn::lm
