// The stage table (attention/stage.h): one row per stage, in pipeline order, and the rows that
// Bahdanau's additive score and Multi-Token Attention show in place of the plain ones.
#include "attention/stage.h"

#include <ostream>

#include "attention/attention.h"

namespace attn {
namespace {

using K = StageKind;
using S = StageId;

constexpr StageInfo kStages[] = {
    {S::kInputs, "qkv", K::kInput, "Queries, keys and values", "Q, K, V",
     "Each token asks with its query, advertises with its key and carries content in its value; "
     "attention compares every query with every key to decide how much of each value to take.",
     "", S::kInputs},
    {S::kX, "x", K::kInput, "Token embeddings", "X",
     "Each token as a vector of d_model numbers; W_Q, W_K and W_V turn it into the token's query, "
     "key and value.",
     "The token embeddings: one row per token, the input of the projections.", S::kInputs},
    {S::kXKv, "x_kv", K::kInput, "Key/value token embeddings", "X_kv",
     "Cross-attention: the keys and values come from another sequence (the encoder's), so they "
     "have embeddings of their own.",
     "The embeddings of the tokens the queries attend to.", S::kInputs},
    {S::kQ, "q", K::kInput, "Queries", "Q",
     "A query says what a token is looking for; it is compared with every key.",
     "The queries: one row per token, what that token is looking for.", S::kInputs},
    {S::kK, "k", K::kInput, "Keys", "K",
     "A key says what a token offers to the queries that look at it.",
     "The keys: one row per token, what that token offers to be found by.", S::kInputs},
    {S::kV, "v", K::kInput, "Values", "V",
     "A value is what a token hands over to a query that attends to it.",
     "The values: one row per token, what that token passes on when attended to.", S::kInputs},
    {S::kRope, "rope", K::kInput, "Rotary positions (RoPE)", "RoPE",
     "RoPE turns each pair of a query's and a key's dimensions by an angle that grows with the "
     "token's position, so the score q·k depends on how far apart the two tokens are, not on "
     "where they stand.",
     "The angle (radians) each pair of dimensions is turned by at each position: the position "
     "times the pair's frequency. Early pairs turn fast, late pairs slowly.",
     S::kRope},
    {S::kKProj, "k_proj", K::kKeySide, "Projected keys", "E·K",
     "Linformer: E (k × n_k) mixes the n_k keys into k virtual keys (and F the values), so each "
     "query compares itself with k rows instead of n: O(n·k) work instead of O(n²).",
     "", S::kKProj},
    {S::kVProj, "v_proj", K::kKeySide, "Projected values", "F·V",
     "Linformer: F (k × n_k) mixes the n_k values into k virtual values, one for each virtual key.",
     "", S::kKProj},
    {S::kScores, "scores", K::kQueryKey, "Scores", "QKᵀ",
     "A dot product measures how well a query matches a key: large and positive when they point "
     "the same way, negative when they point apart.",
     "Each query's dot product with every key: large when the two vectors point the same way.",
     S::kScores},
    {S::kScaled, "scaled", K::kQueryKey, "Scaled scores", "÷√dₖ",
     "Dot products of random d_k-dimensional vectors have a variance that grows with d_k; dividing "
     "by √d_k keeps scores near unit size so the softmax does not saturate into a one-hot choice.",
     "The scores divided by √d_k, so their spread does not grow with the dimension and the softmax "
     "stays soft.",
     S::kScaled},
    {S::kPreConv, "pre_conv", K::kQueryKey, "Scores before the convolution", "mask",
     "The masked scores as plain attention would use them; Multi-Token Attention convolves this "
     "map next.",
     "", S::kPreConv},
    {S::kMasked, "masked", K::kQueryKey, "Masked scores", "mask",
     "Some keys must not be seen (future tokens, padding, keys outside a window); a score of −∞ "
     "gives them a weight of exactly 0 after the softmax.",
     "Keys a query may not see are set to −∞ (hatched); the others keep their scaled score.",
     S::kMasked},
    {S::kPreMix, "pre_mix", K::kQueryKey, "Weights before head mixing", "softmax",
     "Each head's own softmax weights; Multi-Token Attention then blends the weights of groups of "
     "heads.",
     "", S::kPreMix},
    {S::kWeights, "weights", K::kQueryKey, "Attention weights", "softmax",
     "Softmax turns each row of scores into positive weights that sum to 1, so the output is an "
     "average of the values; the temperature sharpens (T < 1) or flattens (T > 1) it.",
     "Softmax along each row: every weight is positive and each row sums to 1. A weight says how "
     "much of that key's value the query takes.",
     S::kWeights},
    {S::kOutput, "output", K::kOutput, "Output", "·V",
     "Each output row is the weighted average of the value vectors: what the query gathers from "
     "the keys it attends to.",
     "Each query's output: the rows of V added up, each times that query's weight for it.",
     S::kOutput},
    {S::kConcat, "concat", K::kOutput, "Heads concatenated", "concat",
     "Each head attends in its own subspace; their outputs are placed side by side so the next "
     "layer sees all of them.",
     "Every head's output side by side, one block of columns per head.", S::kConcat},
    {S::kProjected, "projected", K::kOutput, "Output projection", "·W_O",
     "W_O mixes the heads' outputs back into the model dimension; it equals summing each head "
     "through its own slice of W_O.",
     "The concatenated heads times W_O (plus b_O): the layer's output.", S::kProjected},
    {S::kHeadContrib, "head_contrib", K::kOutput, "Each head through its slice of W_O", "contrib",
     "Each head's output through its own rows of W_O: these contributions plus the bias sum to the "
     "projected output.",
     "What one head adds to the output: its O_h times its rows of W_O. The heads' contributions "
     "sum (with b_O) to the projected output.",
     S::kProjected},
};
static_assert(sizeof kStages / sizeof kStages[0] == kStageCount, "one row per StageId");

constexpr bool rows_in_enum_order() {
  for (int i = 0; i < kStageCount; ++i)
    if (static_cast<int>(kStages[i].id) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kStages is indexed by StageId");

// What a variant changes in a row: Bahdanau's additive score, the key–query convolution and head
// mixing.
struct StageVariantText {
  const char* title;
  const char* label;
  const char* why;
};

constexpr StageVariantText kAdditiveScores = {
    "Additive scores", "vᵀtanh",
    "Bahdanau's additive score runs each query–key pair through a small network, vᵀ tanh(W_q q + "
    "W_k k): W_q q and W_k k are added, squashed by tanh and weighed by v."};
constexpr StageVariantText kAdditiveScaled = {
    "Scaled scores", "×1",
    "The additive score needs no √d_k: each tanh term lies in [−1, 1], so the score is bounded by "
    "Σ|v| whatever d_k is. The scale is 1 unless one is chosen."};
constexpr StageVariantText kConvolved = {
    "Convolved scores", "θ∗S",
    "Multi-Token Attention: each score becomes a weighted sum of its neighbours (queries above, "
    "keys around), so a key can win because of the words next to it."};
constexpr StageVariantText kMixed = {
    "Mixed weights", "mix",
    "Multi-Token Attention: each head's weights become a blend of the weights of its group of "
    "heads, so one head can use what another found."};

}  // namespace

const StageInfo& stage_info(StageId id) { return kStages[static_cast<int>(id)]; }

StageInfo stage_info(StageId id, const AttentionTrace& t) {
  StageInfo s = stage_info(id);
  const StageVariantText* v = nullptr;
  if (t.additive && id == S::kScores) v = &kAdditiveScores;
  if (t.additive && id == S::kScaled) v = &kAdditiveScaled;
  if (id == S::kMasked && t.find(S::kPreConv)) v = &kConvolved;
  if (id == S::kWeights && t.find(S::kPreMix)) v = &kMixed;
  if (v) {
    s.title = v->title;
    s.label = v->label;
    s.why = v->why;
  }
  return s;
}

const char* stage_name(StageId id) { return stage_info(id).name; }

std::optional<StageId> stage_from_name(std::string_view name) {
  for (const StageInfo& s : kStages)
    if (name == s.name) return s.id;
  return std::nullopt;
}

std::string stage_names(const AttentionTrace& t, bool strip) {
  std::string list;
  for (const StageInfo& s : kStages) {
    const bool held = s.id == S::kInputs ? strip : t.find(s.id) != nullptr;
    if (held && (!strip || in_strip(s.id)))
      list += (list.empty() ? "" : ", ") + std::string(s.name);
  }
  return list;
}

std::ostream& operator<<(std::ostream& out, StageId id) { return out << stage_name(id); }

}  // namespace attn
