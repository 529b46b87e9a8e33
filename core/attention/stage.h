// The stages of attention as one table: each stage's id, the name traces, lessons and the command
// line use for it, its kind, title, the pipeline strip's label, why the stage exists and the
// caption an exported page prints under it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace attn {

struct AttentionTrace;

// In pipeline order. kInputs is the strip's first stage (Q, K and V together); it is never a step
// of a trace. The others are the steps a trace can hold.
enum class StageId : uint8_t {
  kInputs,
  kX,
  kXKv,
  kQ,
  kK,
  kV,
  kRope,
  kKProj,
  kVProj,
  kScores,
  kScaled,
  kPreConv,
  kMasked,
  kPreMix,
  kWeights,
  kOutput,
  kConcat,
  kProjected,
  kHeadContrib,
  kCount
};
constexpr int kStageCount = static_cast<int>(StageId::kCount);

// What a stage's matrix is about: the inputs (rows are tokens), the key side (rows are keys),
// query × key (rows are queries, columns keys: the heatmap's cells are attention), or the output
// (rows are queries, columns features).
enum class StageKind : uint8_t { kInput, kKeySide, kQueryKey, kOutput };

struct StageInfo {
  StageId id;
  const char* name;  // in trace JSON, lesson files and --step: "scores"
  StageKind kind;
  const char* title;    // "Scores"
  const char* label;    // the pipeline strip's short label: "QKᵀ"
  const char* why;      // one or two sentences: why the stage exists
  const char* caption;  // what the stage computes, under its picture on an exported page ("" none)
  // The stage of the pipeline strip that shows this one (q, k, v and x show as the inputs,
  // v_proj with k_proj, head_contrib with projected); itself for a stage of the strip.
  StageId shown_as;
};

const StageInfo& stage_info(StageId id);
// The row as the trace `t` shows it: Bahdanau's additive score, Multi-Token Attention's convolved
// scores and mixed weights have titles, labels and reasons of their own.
StageInfo stage_info(StageId id, const AttentionTrace& t);

const char* stage_name(StageId id);
// The stage a name (trace JSON, lesson, --step) stands for; nullopt for an unknown name.
std::optional<StageId> stage_from_name(std::string_view name);

// The stages of plain attention, every one in every trace: Q, K, V, scores … output.
constexpr StageId kPlainStages[] = {StageId::kQ,       StageId::kK,      StageId::kV,
                                    StageId::kScores,  StageId::kScaled, StageId::kMasked,
                                    StageId::kWeights, StageId::kOutput};

inline StageKind stage_kind(StageId id) { return stage_info(id).kind; }
inline bool is_query_key(StageId id) { return stage_kind(id) == StageKind::kQueryKey; }
inline bool is_input(StageId id) { return stage_kind(id) == StageKind::kInput; }
// A stage of the pipeline strip (not one shown inside another).
inline bool in_strip(StageId id) { return stage_info(id).shown_as == id; }
// The masked scores and the weights: the stages that show the mask.
inline bool shows_mask(StageId id) { return id == StageId::kMasked || id == StageId::kWeights; }
// The stages where the mask has hidden keys: −∞ before the softmax, 0 after (the masked scores,
// the weights, and the convolution's and head mixing's inputs, which come after the mask).
inline bool hides_keys(StageId id) {
  return id == StageId::kPreConv || id == StageId::kMasked || id == StageId::kPreMix ||
         id == StageId::kWeights;
}

// Every name of the stages `t` holds, or with `strip`, of the strip stages (the inputs first),
// comma-separated: for error messages that list what would have been accepted.
std::string stage_names(const AttentionTrace& t, bool strip);

// Writes the stage's name (test failures, logs).
std::ostream& operator<<(std::ostream& out, StageId id);

}  // namespace attn
