// The trained models in assets/models/ still load and still do what docs/seq2seq.md says:
// every attention model gets at least 95% of held-out dates exactly right, and the
// bottleneck pair shows the fixed-context model falling behind on inputs longer than its training.
#include <gtest/gtest.h>

#include "seq2seq/trainer.h"

namespace attn::s2s {
namespace {

Model shipped(const std::string& name) {
  Model m;
  std::string error;
  EXPECT_TRUE(load_model(std::string(ATTN_SOURCE_DIR) + "/assets/models/" + name, m, error))
      << error;
  return m;
}

// Unoptimised builds (the sanitizer run) take minutes to evaluate real models; the release
// build of scripts/test.sh runs these.
#ifndef NDEBUG
#define SKIP_UNLESS_OPTIMISED() GTEST_SKIP() << "needs an optimised build (see scripts/test.sh)"
#else
#define SKIP_UNLESS_OPTIMISED() (void)0
#endif

// Every shipped model loads as the score its file is named after, with finite weights.
TEST(Seq2SeqShipped, EveryModelLoads) {
  for (const std::string name : {"bahdanau", "dot", "general", "concat", "local-p", "local-m",
                                 "none", "bottleneck/none-max40", "bottleneck/bahdanau-max40",
                                 "bottleneck/dot-max40", "bottleneck/concat-max40"}) {
    const Model m = shipped(name + ".s2s");
    const size_t slash = name.find('/');
    const std::string stem =
        name.substr(slash == std::string::npos ? 0 : slash + 1,
                    name.find("-max") == std::string::npos ? std::string::npos
                                                           : name.find("-max") - (slash + 1));
    EXPECT_EQ(score_name(m.config.score), stem) << name;
    EXPECT_GT(m.params.w_s.size(), 0) << name;
    EXPECT_TRUE(m.params.w_s.allFinite()) << name;
  }
}

TEST(Seq2SeqShipped, AttentionModelsReachNinetyFivePercent) {
  SKIP_UNLESS_OPTIMISED();
  const auto data = heldout_dates(300);
  for (const char* name : {"bahdanau", "dot", "general", "concat", "local-p", "local-m"}) {
    const Model m = shipped(std::string(name) + ".s2s");
    EXPECT_EQ(score_name(m.config.score), name);
    EXPECT_GE(accuracy_by_length(m, data, 2).back().accuracy(), 0.95) << name;
  }
  // The baseline (see docs/seq2seq.md) loads and translates, with lower accuracy.
  EXPECT_GE(accuracy_by_length(shipped("none.s2s"), data, 2).back().accuracy(), 0.9);
}

TEST(Seq2SeqShipped, BottleneckOnInputsLongerThanTraining) {
  SKIP_UNLESS_OPTIMISED();
  const auto long_inputs = heldout_dates(150, 55, 200);
  const double none =
      accuracy_by_length(shipped("bottleneck/none-max40.s2s"), long_inputs, 2).back().accuracy();
  const double bahdanau =
      accuracy_by_length(shipped("bottleneck/bahdanau-max40.s2s"), long_inputs, 2)
          .back()
          .accuracy();
  const double dot =
      accuracy_by_length(shipped("bottleneck/dot-max40.s2s"), long_inputs, 2).back().accuracy();
  EXPECT_LT(none, 0.7);
  EXPECT_GT(bahdanau, none + 0.1);
  EXPECT_GT(dot, 0.9);
}

}  // namespace
}  // namespace attn::s2s
