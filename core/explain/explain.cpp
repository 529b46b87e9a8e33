// The narration of one query row (or one cell): every stage of attention written out with the
// trace's own numbers, the way a student works it by hand. It never recomputes attention; the
// only arithmetic here spells out terms (products, exponentials, sums) for the reader.
// This file checks the request and runs the stages in order; each stage's narration lives in its
// own narrate_*.cpp file, and the Narrator they share in narrator.h.
#include "explain/explain.h"

#include <string>
#include <vector>

#include "explain/narrator.h"

namespace attn {
namespace narration {

std::string Narrator::run(const std::vector<Stage>& stages) {
  header(stages.size() > 2);
  for (Stage st : stages) {
    switch (st) {
      case kInputs:
        inputs();
        break;
      case kProjection:
        projection();
        break;
      case kScores:
        scores();
        break;
      case kScaled:
        scaling();
        break;
      case kMasked:
        mask();
        break;
      case kWeights:
        softmax();
        break;
      case kOutput:
        weighted_sum();
        break;
      case kOutProjection:
        output_projection();
        break;
      case kLinformer:
        linformer();
        break;
      case kConvolution:
        convolution();
        break;
      case kHeadMix:
        head_mixing();
        break;
      case kRope:
        rope();
        break;
    }
  }
  return out_.str();
}

}  // namespace narration

namespace {

using namespace narration;

// The stages a --step id asks for, or an empty list and an error.
std::vector<Stage> stages_for(const AttentionTrace& t, std::optional<StageId> step,
                              std::string& error) {
  const bool projection = t.find(StageId::kX) != nullptr;
  std::vector<Stage> all;
  const bool linformer = t.find(StageId::kKProj) != nullptr,
             conv = t.find(StageId::kPreConv) != nullptr, mix = t.find(StageId::kPreMix) != nullptr;
  all.push_back(projection ? kProjection : kInputs);
  if (t.find(StageId::kRope)) all.push_back(kRope);
  if (linformer) all.push_back(kLinformer);
  for (Stage s : {kScores, kScaled, kMasked, kWeights, kOutput}) {
    all.push_back(s);
    if (s == kMasked && conv) all.push_back(kConvolution);
    if (s == kWeights && mix) all.push_back(kHeadMix);
  }
  if (t.find(StageId::kConcat)) all.push_back(kOutProjection);
  if (!step) return all;
  if (!t.find(*step)) {
    error = "step: no stage '" + std::string(stage_name(*step)) +
            "' in this trace; expected one of " + stage_names(t, false);
    return {};
  }
  if (*step == StageId::kRope) return {kInputs, kRope};
  switch (stage_kind(*step)) {
    case StageKind::kInput:
      return {projection ? kProjection : kInputs};
    case StageKind::kKeySide:
      return {kLinformer};
    default:
      break;
  }
  switch (*step) {
    case StageId::kScores:
      return {kScores};
    case StageId::kScaled:
      return {kScaled};
    case StageId::kPreConv:  // the scores plain attention would mask
      return {kMasked};
    case StageId::kMasked:
      return {conv ? kConvolution : kMasked};
    case StageId::kPreMix:  // each head's own weights
      return {kWeights};
    case StageId::kWeights:
      return {mix ? kHeadMix : kWeights};
    case StageId::kOutput:
      return {kOutput};
    default:
      return {kOutProjection};
  }
}

std::string range_error(const char* field, int value, int count, const std::string& what) {
  return std::string(field) + ": " + std::to_string(value) +
         " is out of range; this scenario has " + std::to_string(count) + " " + what +
         " (valid: 0.." + std::to_string(count - 1) + ")";
}

// The checks every narration makes of its request; "" when it can be narrated.
std::string check_request(const AttentionTrace& trace, const ExplainRequest& request) {
  if (request.query < 0 || request.query >= trace.n_q)
    return range_error("query", request.query, trace.n_q, "query rows");
  if (request.head < 0 || request.head >= trace.num_heads)
    return range_error("head", request.head, trace.num_heads, "heads");
  if (request.key && (*request.key < 0 || *request.key >= trace.n_k))
    return range_error("key", *request.key, trace.n_k, "keys");
  for (StageId id : kPlainStages)
    if (!trace.find(id))
      return std::string("the trace has no '") + stage_name(id) + "' step to explain";
  // A trace of a few rows (compute_trace_rows) narrates only those.
  const Eigen::Index rows = trace.step(StageId::kWeights).heads.empty()
                                ? 0
                                : trace.step(StageId::kWeights).heads[0].rows();
  if (request.query < trace.first_row || request.query >= trace.first_row + rows)
    return "query: " + std::to_string(request.query) + " is not among the rows this trace holds (" +
           range_text(trace.first_row, trace.first_row + static_cast<int>(rows) - 1) + ")";
  return "";
}

}  // namespace

std::string explain(const AttentionTrace& trace, const ExplainRequest& request,
                    std::string& error) {
  error = check_request(trace, request);
  if (!error.empty()) return "";
  std::vector<Stage> stages = stages_for(trace, request.step, error);
  if (stages.empty()) return "";
  return Narrator(trace, request).run(stages);
}

std::string explain_online_softmax(const AttentionTrace& trace, const ExplainRequest& request,
                                   int block, std::string& error) {
  error = check_request(trace, request);
  if (!error.empty()) return "";
  if (block < 1) {
    error =
        "online_softmax: the block size must be at least 1 key (got " + std::to_string(block) + ")";
    return "";
  }
  if (trace.variants.any()) {
    error =
        "online_softmax: narrates plain attention's softmax; this scenario uses Linformer or "
        "Multi-Token Attention, whose stages it does not follow (drop the linformer / "
        "multi_token fields, or explain without online_softmax)";
    return "";
  }
  if (request.key || request.step) {
    error =
        "online_softmax: narrates a whole row's softmax and weighted sum; it cannot be "
        "combined with one key or one stage";
    return "";
  }
  return Narrator(trace, request).run_online(block);
}

}  // namespace attn
