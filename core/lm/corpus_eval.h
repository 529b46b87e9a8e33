// How well a model predicts a text it reads (lm eval, lm train --eval-corpus): the text's tokens
// in consecutive windows of the model's context, each token after a window's first predicted from
// the tokens before it in its window; mean loss, perplexity, top-1 and top-5 accuracy.
#pragma once

#include <cmath>
#include <vector>

#include "lm/model.h"

namespace attn::lm {

struct CorpusFigures {
  long tokens = 0;  // the tokens predicted: every token but the first of each window
  double loss = 0;  // mean −ln p(token) in nats
  double top1 = 0;  // the fraction whose token has the highest logit
  double top5 = 0;  // … is among the five highest (a tie counts for the token)
  double perplexity() const { return std::exp(loss); }
};

// The windows: tokens [k·T, (k+1)·T] for k = 0, 1, … with T = n_positions, the last one shorter
// (at least 2 tokens); a window's tokens but its last are read and each next one predicted, so
// consecutive windows share one token and every token after the first is predicted once.
// `ids` must hold at least 2 tokens, each below the vocabulary size. Several windows go through
// the forward pass at a time, on `threads` cores (0: every core).
CorpusFigures corpus_eval(const Model& m, const std::vector<int>& ids, int threads);

}  // namespace attn::lm
