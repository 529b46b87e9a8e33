// The attention problem (inputs, masks, scale, temperature) and the trace every stage is recorded
// in.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attention/matrix.h"
#include "attention/stage.h"
#include "attention/variants.h"

namespace attn {

// Where query i sits among the keys for causal and window masks (cli.md, "Attention semantics").
enum class CausalAlign { kNone, kTopLeft, kLowerRight };

// Everything that hides keys from queries. All conditions combine with AND.
struct MaskSpec {
  CausalAlign causal = CausalAlign::kNone;
  std::optional<int> window;      // |p_i - j| <= W (with causal: p_i - W <= j <= p_i)
  std::vector<int> global;        // Longformer-style global positions; relax the window only
  std::optional<int> key_length;  // keys j >= L are padding
  HeadStack custom;               // empty, 1 (shared) or H matrices (n_q, n_k); nonzero = visible
  HeadStack bias;                 // empty, 1 (shared) or H matrices (n_q, n_k); added to scaled
  bool empty() const {
    return causal == CausalAlign::kNone && !window && global.empty() && !key_length &&
           custom.empty() && bias.empty();
  }
};

// Bahdanau's additive score in place of the dot product (attention/additive.h):
// scores_ij = vᵀ tanh(W_q q_i + W_k k_j), with W_q and W_k of shape (d_a, d_k) and v of d_a
// entries, shared by every head.
struct AdditiveScore {
  Matrix w_q, w_k;
  RowVector v;
};

struct AttentionOptions {
  MaskSpec mask;
  std::optional<float> scale;  // default 1/sqrt(d_k); 1 with the additive score
  float temperature = 1.0f;
  VariantSpec variants;  // Linformer, key–query convolution, head mixing (attention/variants.h)
  std::optional<AdditiveScore> additive;  // none: the scaled dot product
};

// Q: H matrices (n_q, d_k); K: H_kv matrices (n_k, d_k); V: H_kv matrices (n_k, d_v); H % H_kv ==
// 0.
struct AttentionInput {
  HeadStack q, k, v;
  int num_heads() const { return static_cast<int>(q.size()); }
  int num_kv_heads() const { return static_cast<int>(k.size()); }
  int n_q() const { return q.empty() ? 0 : static_cast<int>(q[0].rows()); }
  int n_k() const { return k.empty() ? 0 : static_cast<int>(k[0].rows()); }
  int d_k() const { return q.empty() ? 0 : static_cast<int>(q[0].cols()); }
  int d_v() const { return v.empty() ? 0 : static_cast<int>(v[0].cols()); }
  // The key/value head query head h reads: h / (H / H_kv).
  int kv_head_of(int h) const { return h / (num_heads() / num_kv_heads()); }
};

struct AttentionProblem {
  AttentionInput input;
  AttentionOptions options;
  // A problem can be query rows [first_query_row, first_query_row + n_q) of a larger one with
  // total_query_rows rows (attention/row_slice.h): masks then place each query where it sits in
  // the larger problem. Both 0 (the default): the problem is whole.
  int first_query_row = 0;
  int total_query_rows = 0;

  float effective_scale() const;  // options.scale, else 1/sqrt(d_k) (1 for the additive score)
  // The query count of the whole problem, the n_q of cli.md's position formulas.
  int full_n_q() const { return total_query_rows > 0 ? total_query_rows : input.n_q(); }
};

// Why a cell is hidden: a bit set of these reasons (0 = visible).
enum MaskReason : uint8_t {
  kVisible = 0,
  kHiddenCausal = 1,
  kHiddenWindow = 2,
  kHiddenPadding = 4,
  kHiddenCustom = 8,
  kHiddenBias = 16,  // the additive bias is -inf there
};
using ReasonMatrix = Eigen::Matrix<uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// How a stage that is a cheap function of a stored one follows from it (AttentionTrace::head).
enum class DerivedStage : uint8_t {
  kStored,  // the matrices are in `heads`
  kScores,  // Q·Kᵀ, multiplied again in the engine's blocks of query rows
  kScaled,  // scale · scores
  kMasked,  // scaled + bias, −∞ where a mask hides the cell
};

// One stage of the computation: a named matrix per head with its formula.
struct TraceStep {
  StageId id;           // which stage (attention/stage.h)
  std::string title;    // human title, e.g. "Scores"
  std::string formula;  // e.g. "scores = Q·Kᵀ"
  // One matrix per head (per key/value head for k and v); empty for a derived stage, whose
  // heads AttentionTrace::head computes when asked.
  HeadStack heads;
  std::vector<int> kv_head;  // for each head of the stage: the key/value head it uses or is
  DerivedStage derived = DerivedStage::kStored;
  int num_heads() const {
    return static_cast<int>(derived == DerivedStage::kStored ? heads.size() : kv_head.size());
  }
};

// The derived heads an AttentionTrace computed last (see AttentionTrace::head). A copy starts
// empty: the cache belongs to one trace's memory and refills on demand.
class DerivedCache {
 public:
  DerivedCache() = default;
  DerivedCache(const DerivedCache&) {}
  DerivedCache& operator=(const DerivedCache&) {
    clear();
    return *this;
  }
  void clear();

 private:
  friend struct AttentionTrace;
  struct Slot {
    int head = -1;
    Matrix m;
  };
  std::mutex mutex_;
  Slot scores_, scaled_, masked_;
  std::vector<std::unique_ptr<ReasonMatrix>> hidden_;  // per head, built when first asked for
};

// RoPE (rotary position embeddings) as a trace shows it, for Q and K that came out of a RoPE
// model: the q and k steps hold them after the rotation; these, before it. Query row r stands at
// position q_position0 + r, key row j at k_position0 + j; pair i (dimensions i and i + d_k/2)
// turns by position × inv_freq[i].
struct RopeInputs {
  HeadStack q_before, k_before;  // per query head, per key/value head
  std::vector<double> inv_freq;  // d_k / 2 frequencies
  int q_position0 = 0, k_position0 = 0;
  bool enabled() const { return !inv_freq.empty(); }
};

// The result of an attention computation with every intermediate kept; the UI and CLI only read it.
struct AttentionTrace {
  std::string name;
  std::string backend;
  std::vector<std::string> query_tokens, key_tokens;
  int num_heads = 0, num_kv_heads = 0;
  int n_q = 0, n_k = 0, d_k = 0, d_v = 0;
  float scale = 1.0f, temperature = 1.0f;
  bool scale_overridden = false;  // --scale given (else 1/√d_k)
  MaskSpec mask;                  // the masks the trace was computed with
  VariantSpec variants;           // the variants it was computed with (attention/variants.h)
  // With Linformer, key_tokens name the k virtual keys ("k̃0", …) that scores … weights have as
  // columns (n_k = k), and these name the n_k rows of the k and v steps; else empty.
  std::vector<std::string> input_key_tokens;
  // The additive score's weights when the scores are Bahdanau's (their stage is then stored,
  // never derived from Q·Kᵀ).
  std::optional<AdditiveScore> additive;
  std::vector<int> kv_head_of;  // size H
  // Per head (n_q, n_k): MaskReason bits, when the backend stored them; else hidden_of builds
  // them from `mask` on demand.
  std::vector<ReasonMatrix> hidden;
  std::vector<std::vector<bool>> empty_row;  // per head, per query: every key hidden
  std::vector<TraceStep> steps;              // in pipeline order; ids are unique
  RopeInputs rope;  // Q and K before RoPE, when the scenario's came out of a RoPE model
  // The stages (scores … output, and concat, projected, head_contrib) hold every query row, or,
  // for a trace of a few rows (compute_trace_rows), rows [first_row, first_row + their rows) of
  // the n_q: n_q, the tokens, the input steps and the masks are always whole.
  int first_row = 0;
  // With an output projection: max |concat·W_O + b_O − (Σ_h O_h·W_O^(h) + b_O)|, the check that
  // the two formulations agree.
  std::optional<float> projection_form_gap;

  const TraceStep* find(StageId id) const;
  TraceStep* find(StageId id);
  const TraceStep& step(StageId id) const;  // asserts it exists

  // Head h of stage `s` (a step of this trace): the stored matrix, or, for a derived stage,
  // computed from scores with the float operations the engine used (so the same numbers) and
  // kept until another head of the same stage is asked for; the reference stays valid until
  // then. Safe to call from several threads.
  const Matrix& head(const TraceStep& s, int h) const;
  const Matrix& head(StageId id, int h) const { return head(step(id), h); }
  // The reasons of head h's hidden cells (rows as the stages hold them): `hidden[h]` when
  // stored, else built from `mask` once and kept.
  const ReasonMatrix& hidden_of(int h) const;
  // Whether head h's reasons are known: stored by the backend, or derivable because the masked
  // stage is derived from the masks. When not, −∞ in the masked stage is what marks a hidden cell.
  bool has_reasons(int h) const;

  mutable DerivedCache derived_cache;

 private:
  const ReasonMatrix& hidden_locked(int h) const;  // hidden_of with the cache's mutex held
};

}  // namespace attn
