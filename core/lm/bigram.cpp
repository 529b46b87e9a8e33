// The bigram baseline (see bigram.h).
#include "lm/bigram.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace attn::lm {

BigramModel::BigramModel(const std::vector<int>& train, int vocab)
    : unigram_(static_cast<size_t>(vocab), 0.0),
      count_(static_cast<size_t>(vocab), 0.0),
      successors_(static_cast<size_t>(vocab)),
      by_unigram_(static_cast<size_t>(vocab)) {
  for (int t : train) unigram_[static_cast<size_t>(t)] += 1;
  total_ = static_cast<double>(train.size());
  for (double& u : unigram_) u = (u + 1) / (total_ + vocab);
  for (size_t i = 1; i < train.size(); ++i) {
    const auto a = static_cast<size_t>(train[i - 1]);
    count_[a] += 1;
    successors_[a][train[i]] += 1;
  }
  std::iota(by_unigram_.begin(), by_unigram_.end(), 0);
  std::stable_sort(by_unigram_.begin(), by_unigram_.end(), [this](int x, int y) {
    return unigram_[static_cast<size_t>(x)] > unigram_[static_cast<size_t>(y)];
  });
}

double BigramModel::score(int a, int b) const {
  const auto& s = successors_[static_cast<size_t>(a)];
  const auto it = s.find(b);
  return (it == s.end() ? 0.0 : it->second) + kAlpha * unigram_[static_cast<size_t>(b)];
}

double BigramModel::probability(int a, int b) const {
  return score(a, b) / (count_[static_cast<size_t>(a)] + kAlpha);
}

int BigramModel::above(int a, double target) const {
  const auto& s = successors_[static_cast<size_t>(a)];
  int n = 0;
  for (const auto& [b, c] : s)
    if (c + kAlpha * unigram_[static_cast<size_t>(b)] > target && ++n >= 5) return n;
  // Tokens never seen after `a` score by their frequency alone: the most frequent first.
  for (int b : by_unigram_) {
    if (kAlpha * unigram_[static_cast<size_t>(b)] <= target) break;
    if (s.count(b)) continue;
    if (++n >= 5) return n;
  }
  return n;
}

CorpusFigures BigramModel::evaluate(const std::vector<int>& ids) const {
  assert(ids.size() >= 2);
  CorpusFigures f;
  double loss = 0;
  long right1 = 0, right5 = 0;
  for (size_t i = 1; i < ids.size(); ++i) {
    const int a = ids[i - 1], b = ids[i];
    loss -= std::log(probability(a, b));
    const int n = above(a, score(a, b));
    right1 += n == 0;
    right5 += n < 5;
  }
  f.tokens = static_cast<long>(ids.size()) - 1;
  f.loss = loss / static_cast<double>(f.tokens);
  f.top1 = static_cast<double>(right1) / static_cast<double>(f.tokens);
  f.top5 = static_cast<double>(right5) / static_cast<double>(f.tokens);
  return f;
}

}  // namespace attn::lm
