// Generation with a KV cache, for every architecture: the model runs on the prompt once, then on
// one new token at a time, each layer's keys and values appended to its cache (one row per token
// of K/V-heads × head size — a grouped-query model caches its K/V heads, not its query heads),
// a sliding-window model keeping only the last W rows. The command line's `lm generate` and the
// app's live generation use it; each step's attention rows are kept for showing.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lm/model.h"

namespace attn::lm {

class Generator {
 public:
  // `model` must outlive the generator. threads 0: every core.
  explicit Generator(const Model& model, int threads = 0);

  // Runs the model on `ids`, the next positions after those fed before, appending to the cache.
  // "" on success (logits() then holds the last position's logits); else the error — past
  // n_positions, too large for the forward-pass limit, or a value overflowing float32 (naming
  // the layer) — and the generator is not to be fed again.
  std::string feed(const std::vector<int>& ids);

  const std::vector<float>& logits() const { return logits_; }
  int length() const { return length_; }  // positions fed so far
  // The keys (rows) layer l holds now, and the position of its first.
  int cache_rows(int layer) const;
  int cache_first_position(int layer) const;
  // Bytes of every layer's K and V held now (float32).
  double cache_bytes() const;
  // The last fed token's attention weights in layer l: (n_head, cache rows when it was computed),
  // key positions from last_attention_first(l).
  const std::vector<float>& last_attention(int layer) const;
  int last_attention_first(int layer) const;

 private:
  struct LayerCache {
    std::vector<float> k, v;  // (rows, kv_dim) each
    int first = 0;            // position of row 0
    std::vector<float> last_att;
    int last_att_first = 0;
  };
  std::string step(const std::vector<int>& ids);
  const Model& m_;
  int threads_;
  int length_ = 0;
  std::vector<LayerCache> cache_;
  std::vector<float> logits_;
  std::vector<double> inv_freq_;
};

// The next token from the last position's logits: the most likely (ties to the lower id) when
// temperature ≤ 0; else sampled from softmax(logits / temperature) over the `top_k` most likely
// (all when top_k ≤ 0), with `rng`.
int choose_next_token(const std::vector<float>& logits, double temperature, int top_k,
                      std::mt19937_64& rng);

// The ids that end a text: config.json's eos_token_id (one or a list), else the tokenizer's own
// end-of-text token; empty when neither names one.
std::vector<int> end_of_text_ids(const Model& m);

}  // namespace attn::lm
