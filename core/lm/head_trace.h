// What the app and the command line show of a model's run: one head as an attention scenario
// (its real Q, K and V, GPT-2's causal mask) for the stepper, narration and export; scores that
// name what each head does; the next-token distribution; the size of the KV cache.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attention/scenario.h"
#include "lm/forward.h"

namespace attn::lm {

// The people-readable text of each token (Tokenizer::display).
std::vector<std::string> display_tokens(const Tokenizer& tok, const std::vector<int>& ids);

// The other query heads that read the same K/V head as query head `head` (grouped-query and
// multi-query attention), e.g. "4, 6, 7", runs of three or more as "0–2"; "" when none does.
std::string kv_sharers(const Config& c, int head);
// The K/V head query head `head` reads, for its name and inputs: "K/V head 1 of 2, shared with
// query heads 4, 6, 7" ("… of 4, read by this query head only" when none shares it).
std::string kv_head_text(const Config& c, int head);

// Head h of layer l on sequence 0 as a scenario: Q, K and V are (T, hs), the head's columns of
// c_attn's output; the mask is causal (top-left), the scale GPT-2's 1/√hs. Its trace computes
// the same weights as the forward pass (tests check they agree).
Scenario head_scenario(const Model& m, const Activations& a, int layer, int head,
                       const std::vector<std::string>& tokens, const std::string& text);

// How much of a head's attention goes where, averaged over query rows (sequence 0). Each is a
// number in [0, 1]; rows that cannot show the pattern are left out of its average.
struct HeadScores {
  // Previous token: mean over queries t ≥ 1 of the weight on key t − 1.
  double previous = 0;
  // First token ("attention sink"): mean over queries t ≥ 1 of the weight on key 0.
  double first = 0;
  // Self (diagonal): mean over queries t ≥ 1 of the weight on key t.
  double self = 0;
  // Induction: over queries t whose token occurred before, at s (the latest s < t) with
  // s + 1 < t, the mean weight on key s + 1 — the token that followed the earlier occurrence
  // (what an induction head copies: "A B … A → B"). -1 when no query qualifies (no repeats).
  double induction = -1;
  int induction_queries = 0;
};

// Scores of every head on sequence b, indexed [l · NH + h].
std::vector<HeadScores> head_scores(const Config& c, const Activations& a, int b = 0);

// The queries t the induction score averages over, and for each its target key s + 1.
std::vector<std::pair<int, int>> induction_targets(const std::vector<int>& tokens);

// How often the model copies: over the positions t of sequence b whose token occurred before (at
// s, the latest, with s + 1 < t) and whose next token is the one that followed it then
// (tokens[t+1] = tokens[s+1]), how many times the most likely next token (the logits of
// position t, so all logits must have been computed) is that token.
struct CopyAccuracy {
  int correct = 0, total = 0;
  double fraction() const { return total ? static_cast<double>(correct) / total : 0.0; }
};
CopyAccuracy copy_accuracy(const Config& c, const Activations& a, int b = 0);

// The K most likely next tokens after the last position (sequence 0) at `temperature`:
// (id, probability), most likely first; ties go to the lower id.
std::vector<std::pair<int, double>> top_next_tokens(const Config& c, const Activations& a, int k,
                                                    double temperature = 1.0);

// The K most likely tokens after position t of sequence 0 (any position: computed from the final
// layer norm's output, which the forward pass keeps for every position).
std::vector<std::pair<int, double>> top_tokens_at(const Model& m, const Activations& a, int t,
                                                  int k, double temperature = 1.0);

// Bytes the KV cache needs per token: K and V (2) for every layer and every K/V head's values
// (L·NKV·hs: L·C for GPT-2; grouped-query attention caches its K/V heads only), at
// `bytes_per_value` (4 for float32, 2 for float16/bfloat16).
inline size_t kv_cache_bytes_per_token(const Config& c, int bytes_per_value) {
  return 2ull * static_cast<size_t>(c.n_layer) * static_cast<size_t>(c.kv_dim()) *
         static_cast<size_t>(bytes_per_value);
}

}  // namespace attn::lm
