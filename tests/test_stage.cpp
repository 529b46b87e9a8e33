// The stage table (core/attention/stage.h): every id has its row and its name, names read back
// to the same id, the kinds and the pipeline strip are what the engine's traces hold, and each
// variant shows its own row.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "attention/stage.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/examples.h"

namespace attn {
namespace {

AttentionTrace trace_of(const std::string& example) {
  std::string error;
  std::optional<Scenario> s = load_example(example, error);
  if (!s) {
    ADD_FAILURE() << error;
    return {};
  }
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  return compute_scenario_trace(*s, *cpu);
}

TEST(StageTable, EveryIdHasItsRowAndANameThatReadsBack) {
  std::set<std::string> names;
  for (int i = 0; i < kStageCount; ++i) {
    const StageId id = static_cast<StageId>(i);
    const StageInfo& s = stage_info(id);
    EXPECT_EQ(s.id, id);
    ASSERT_NE(s.name, nullptr);
    EXPECT_TRUE(names.insert(s.name).second) << "two stages named " << s.name;
    EXPECT_EQ(stage_from_name(s.name), id);
    EXPECT_NE(std::string(s.title), "") << s.name;
    EXPECT_NE(std::string(s.label), "") << s.name;
    EXPECT_NE(std::string(s.why), "") << s.name;
    // The strip stage that shows a stage is itself a strip stage.
    EXPECT_TRUE(in_strip(s.shown_as)) << s.name;
  }
  EXPECT_FALSE(stage_from_name("softmax"));
  EXPECT_FALSE(stage_from_name(""));
  EXPECT_FALSE(stage_from_name("Weights"));  // names are exact
}

// The trace JSON's ids (docs/cli.md) and the attention stages, written out by hand.
TEST(StageTable, NamesAndKindsAreTheDocumentedOnes) {
  const std::vector<std::pair<std::string, StageKind>> expected = {
      {"qkv", StageKind::kInput},
      {"x", StageKind::kInput},
      {"x_kv", StageKind::kInput},
      {"q", StageKind::kInput},
      {"k", StageKind::kInput},
      {"v", StageKind::kInput},
      {"rope", StageKind::kInput},
      {"k_proj", StageKind::kKeySide},
      {"v_proj", StageKind::kKeySide},
      {"scores", StageKind::kQueryKey},
      {"scaled", StageKind::kQueryKey},
      {"pre_conv", StageKind::kQueryKey},
      {"masked", StageKind::kQueryKey},
      {"pre_mix", StageKind::kQueryKey},
      {"weights", StageKind::kQueryKey},
      {"output", StageKind::kOutput},
      {"concat", StageKind::kOutput},
      {"projected", StageKind::kOutput},
      {"head_contrib", StageKind::kOutput}};
  ASSERT_EQ(static_cast<int>(expected.size()), kStageCount);
  for (const auto& [name, kind] : expected) {
    const std::optional<StageId> id = stage_from_name(name);
    ASSERT_TRUE(id) << name;
    EXPECT_EQ(stage_kind(*id), kind) << name;
  }
}

TEST(StageTable, TracesHoldTheirStagesInTableOrder) {
  for (const ExampleInfo& e : list_examples()) {
    const AttentionTrace t = trace_of(e.name);
    for (size_t i = 1; i < t.steps.size(); ++i)
      EXPECT_LT(t.steps[i - 1].id, t.steps[i].id) << e.name << ": " << t.steps[i].id;
    for (const TraceStep& s : t.steps) EXPECT_NE(s.id, StageId::kInputs) << e.name;
  }
}

// hides_keys names exactly the stages whose hidden cells read −∞ or 0 in every example's trace.
TEST(StageTable, HidesKeysWhereTheTraceHasHiddenCells) {
  int checked = 0;
  for (const ExampleInfo& e : list_examples()) {
    const AttentionTrace t = trace_of(e.name);
    for (int h = 0; h < t.num_heads; ++h) {
      if (!t.has_reasons(h)) continue;
      const ReasonMatrix& hidden = t.hidden_of(h);
      for (const TraceStep& s : t.steps) {
        if (!is_query_key(s.id)) continue;
        const Matrix& m = t.head(s, h);
        if (m.rows() != hidden.rows() || m.cols() != hidden.cols()) continue;
        bool all_hidden = true, any = false;
        for (Eigen::Index i = 0; i < m.rows(); ++i)
          for (Eigen::Index j = 0; j < m.cols(); ++j)
            if (hidden(i, j)) {
              any = true;
              const float v = m(i, j);
              all_hidden &= v == 0.0f || (std::isinf(v) && v < 0);
            }
        if (!any) continue;
        ++checked;
        EXPECT_EQ(hides_keys(s.id), all_hidden) << e.name << " " << s.id << " head " << h;
      }
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(StageTable, TheStripAndTheVariantsRows) {
  const AttentionTrace plain = trace_of("fear-is-the");
  EXPECT_EQ(stage_names(plain, true), "qkv, scores, scaled, masked, weights, output");
  EXPECT_EQ(stage_names(plain, false), "q, k, v, scores, scaled, masked, weights, output");
  EXPECT_EQ(std::string(stage_info(StageId::kScores, plain).title), "Scores");

  const AttentionTrace additive = trace_of("additive");
  EXPECT_EQ(std::string(stage_info(StageId::kScores, additive).label), "vᵀtanh");
  EXPECT_EQ(std::string(stage_info(StageId::kScaled, additive).label), "×1");

  const AttentionTrace conv = trace_of("multi-token");
  ASSERT_TRUE(conv.find(StageId::kPreConv));
  EXPECT_EQ(std::string(stage_info(StageId::kMasked, conv).title), "Convolved scores");
  EXPECT_EQ(conv.step(StageId::kMasked).title, "Convolved scores");

  const AttentionTrace mix = trace_of("head-mixing");
  ASSERT_TRUE(mix.find(StageId::kPreMix));
  EXPECT_EQ(std::string(stage_info(StageId::kWeights, mix).title), "Mixed weights");
  EXPECT_EQ(mix.step(StageId::kWeights).title, "Mixed weights");

  const AttentionTrace linformer = trace_of("linformer");
  ASSERT_TRUE(linformer.find(StageId::kVProj));
  EXPECT_NE(stage_names(linformer, true).find("k_proj"), std::string::npos);
  EXPECT_EQ(stage_names(linformer, true).find("v_proj"), std::string::npos);  // shown with k_proj
}

}  // namespace
}  // namespace attn
