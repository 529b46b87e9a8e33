// Held-out figures of a model on a text (see corpus_eval.h).
#include "lm/corpus_eval.h"

#include <algorithm>
#include <cassert>

#include "lm/forward.h"

namespace attn::lm {
namespace {

// The activations of a batch of windows stay small beside the model: 256 MB.
constexpr double kBatchBytes = 268435456.0;

struct Sums {
  double loss = 0;
  long right1 = 0, right5 = 0, count = 0;
};

// Adds the predictions of one forward pass: row b's position t predicts targets[b·T + t].
void add_predictions(const Activations& a, const std::vector<int>& targets, int V, Sums& s) {
  for (size_t i = 0; i < targets.size(); ++i) {
    const float* z = a.logits.data() + i * static_cast<size_t>(V);
    const int target = targets[i];
    double top = z[0];
    for (int j = 1; j < V; ++j) top = std::max(top, static_cast<double>(z[j]));
    double sum = 0;
    int above = 0;
    for (int j = 0; j < V; ++j) {
      sum += std::exp(static_cast<double>(z[j]) - top);
      above += z[j] > z[target] ? 1 : 0;
    }
    s.loss += top + std::log(sum) - static_cast<double>(z[target]);
    s.right1 += above == 0 ? 1 : 0;
    s.right5 += above < 5 ? 1 : 0;
    ++s.count;
  }
}

}  // namespace

CorpusFigures corpus_eval(const Model& m, const std::vector<int>& ids, int threads) {
  assert(ids.size() >= 2);
  const int T = m.config.n_positions, V = m.config.vocab_size;
  ForwardOptions fo;
  fo.threads = threads;
  fo.mlp = m.mlp;
  const long n = static_cast<long>(ids.size()) - 1;  // tokens predicted
  const long full = n / T;                           // windows of T predictions
  int per_pass = 1;
  while (per_pass < 64 && forward_bytes(m.config, 2 * per_pass, T, fo) <= kBatchBytes)
    per_pass *= 2;
  Sums s;
  Activations a;
  std::vector<int> tokens, targets;
  auto run = [&](long first, int B, int len) {  // B windows of len predictions from window first
    tokens.clear();
    targets.clear();
    for (int b = 0; b < B; ++b) {
      const auto at = ids.begin() + (first + b) * T;
      tokens.insert(tokens.end(), at, at + len);
      targets.insert(targets.end(), at + 1, at + len + 1);
    }
    gpt_forward(m, tokens, B, len, a, fo);
    add_predictions(a, targets, V, s);
  };
  for (long k = 0; k < full; k += per_pass)
    run(k, static_cast<int>(std::min<long>(per_pass, full - k)), T);
  if (n % T != 0) run(full, 1, static_cast<int>(n % T));
  CorpusFigures f;
  f.tokens = s.count;
  f.loss = s.loss / static_cast<double>(s.count);
  f.top1 = static_cast<double>(s.right1) / static_cast<double>(s.count);
  f.top5 = static_cast<double>(s.right5) / static_cast<double>(s.count);
  return f;
}

}  // namespace attn::lm
