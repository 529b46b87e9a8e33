// The bigram baseline a language model is measured against (lm eval --bigram): the next token
// predicted from the one before it alone, by counts over a training text in the model's own
// tokens, smoothed toward the tokens' overall frequencies so no token has probability 0:
//   p(b | a) = (c(a, b) + α·u(b)) / (c(a) + α),   u(b) = (c(b) + 1) / (N + V),
// with c the counts over the training tokens, N their number, V the vocabulary and α = kAlpha.
// Figured over the same tokens corpus_eval predicts (every one after the first), with the same
// rules for top-1 and top-5 (a tie counts for the token).
#pragma once

#include <unordered_map>
#include <vector>

#include "lm/corpus_eval.h"

namespace attn::lm {

class BigramModel {
 public:
  static constexpr double kAlpha = 1.0;

  // Counts `train` (token ids below `vocab`).
  BigramModel(const std::vector<int>& train, int vocab);
  double probability(int a, int b) const;
  // The figures on `ids` (at least 2 tokens below the vocabulary).
  CorpusFigures evaluate(const std::vector<int>& ids) const;

 private:
  // Tokens scoring above `score` after `a`, counted up to 5.
  int above(int a, double score) const;
  double score(int a, int b) const;  // the numerator of p(b | a)

  double total_ = 0;
  std::vector<double> unigram_;                              // u(b)
  std::vector<double> count_;                                // c(a)
  std::vector<std::unordered_map<int, double>> successors_;  // c(a, b) > 0
  std::vector<int> by_unigram_;                              // every token, most frequent first
};

}  // namespace attn::lm
