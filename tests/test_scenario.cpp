// Scenario JSON: every built-in example loads; malformed files give errors naming the field and
// index; saving round-trips and is atomic; the trace CLI works end to end and never crashes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "reference.h"

namespace attn {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = test::temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Scenario, EveryExampleLoadsAndComputes) {
  auto examples = list_examples();
  ASSERT_GE(examples.size(), 8u);
  EXPECT_EQ(examples[0].name, "fear-is-the");
  std::set<std::string> names;
  for (const auto& e : examples) {
    names.insert(e.name);
    std::string error;
    auto s = load_example(e.name, error);
    ASSERT_TRUE(s) << e.name << ": " << error;
    EXPECT_FALSE(e.description.empty());
    auto cpu = make_cpu_backend();
    AttentionTrace t = compute_scenario_trace(*s, *cpu);
    for (const auto& step : t.steps)
      for (const auto& m : step.heads)
        for (Eigen::Index i = 0; i < m.rows(); ++i)
          for (Eigen::Index j = 0; j < m.cols(); ++j)
            EXPECT_FALSE(std::isnan(m(i, j))) << e.name << " " << step.id;
  }
  for (const char* n : {"fear-is", "fear-is-the", "cross-attention", "multi-head", "gqa", "mqa",
                        "sliding-window", "padding"})
    EXPECT_TRUE(names.count(n)) << n;
}

// Issue 28: a scenario the engine cannot run (here a query overflowed to inf, as a model's forward
// pass could make one) is an error naming the problem, never an assertion or NaN in the trace.
TEST(Scenario, ANonFiniteScenarioIsAnErrorNotAnAbort) {
  std::string error;
  auto s = load_example("fear-is-the", error);
  ASSERT_TRUE(s) << error;
  ASSERT_FALSE(s->use_projection);
  ASSERT_EQ(validate_scenario(*s), "");
  s->qkv.q[0](0, 0) = std::numeric_limits<float>::infinity();
  const std::string why = validate_scenario(*s);
  ASSERT_NE(why, "");
  auto cpu = make_cpu_backend();
  for (bool rows : {false, true}) {
    try {
      if (rows)
        compute_scenario_trace_rows(*s, *cpu, 0, 1);
      else
        compute_scenario_trace(*s, *cpu);
      ADD_FAILURE() << "computed a trace of a non-finite scenario";
    } catch (const InvalidScenario& e) {
      EXPECT_EQ(std::string(e.what()), why);
    }
  }
}

TEST(Scenario, SeedTablesAreExact) {
  std::string error;
  auto s = load_example("fear-is-the", error);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->options.mask.causal, CausalAlign::kTopLeft);
  EXPECT_FLOAT_EQ(s->qkv.q[0](2, 1), 0.6f);
  EXPECT_FLOAT_EQ(s->qkv.k[0](2, 2), 0.5f);
  EXPECT_FLOAT_EQ(s->qkv.v[0](1, 0), 0.8f);
  auto g = load_example("gqa", error);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->qkv.q.size(), 4u);
  EXPECT_EQ(g->qkv.k.size(), 2u);
}

struct BadCase {
  const char* name;
  const char* json;
  const char* expect;  // a fragment the error must contain
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class ScenarioErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ScenarioErrors, NamesTheProblem) {
  const BadCase& c = GetParam();
  std::string error;
  auto s = parse_scenario_json(c.json, "bad.json", error);
  EXPECT_FALSE(s);
  EXPECT_NE(error.find("bad.json"), std::string::npos) << error;
  EXPECT_NE(error.find(c.expect), std::string::npos) << "got: " << error;
}

#define QKV_OK "\"q\": [[1, 2]], \"k\": [[1, 0], [0, 1]], \"v\": [[1], [2]]"
INSTANTIATE_TEST_SUITE_P(
    Malformed, ScenarioErrors,
    ::testing::Values(
        BadCase{"not_json", "{ \"q\": [1, 2", "invalid JSON"},
        BadCase{"not_object", "[1, 2]", "expected a JSON object"},
        BadCase{"missing_all", "{}", "missing field"},
        BadCase{"missing_v", "{\"q\": [[1]], \"k\": [[1]]}", "v: missing field"},
        BadCase{"ragged", "{\"q\": [[1, 2], [3]], \"k\": [[1, 2]], \"v\": [[1]]}",
                "q[1]: has 1 values but row 0 has 2"},
        BadCase{"string_cell", "{\"q\": [[1, \"x\"]], \"k\": [[1, 2]], \"v\": [[1]]}",
                "q[0][1]: expected a number"},
        BadCase{"nan_string", "{\"q\": [[1, 2]], \"k\": [[1, \"NaN\"]], \"v\": [[1]]}",
                "k[0][1]: expected a number"},
        BadCase{"huge", "{\"q\": [[1, 1e300]], \"k\": [[1, 2]], \"v\": [[1]]}",
                "q[0][1]: value 1e+300 is not a finite float"},
        BadCase{"dk_mismatch", "{\"q\": [[1, 2]], \"k\": [[1, 2, 3]], \"v\": [[1]]}",
                "k: has d_k = 3"},
        BadCase{"v_rows", "{\"q\": [[1, 2]], \"k\": [[1, 2]], \"v\": [[1], [2]]}",
                "v: has 2 rows but k has 1"},
        BadCase{"heads_not_divisible",
                "{\"q\": [[[1]], [[1]], [[1]]], \"k\": [[[1]], [[1]]], \"v\": [[[1]], [[1]]]}",
                "not a multiple of the key/value heads"},
        BadCase{"head_shape", "{\"q\": [[[1, 2]], [[1]]], \"k\": [[1, 2]], \"v\": [[1]]}",
                "q[1]: has shape (1, 1) but head 0 has (1, 2)"},
        BadCase{"unknown_mask_kind", "{" QKV_OK ", \"mask\": {\"causal\": \"diagonal\"}}",
                "mask.causal: unknown mask kind"},
        BadCase{"unknown_mask_field", "{" QKV_OK ", \"mask\": {\"sliding\": 2}}",
                "mask.sliding: unknown field"},
        BadCase{"unknown_field", "{" QKV_OK ", \"qq\": 1}", "qq: unknown field"},
        BadCase{"negative_window", "{" QKV_OK ", \"mask\": {\"window\": -1}}",
                "mask.window: expected an integer >= 0"},
        BadCase{"key_length_big", "{" QKV_OK ", \"mask\": {\"key_length\": 5}}",
                "key length 5 is outside 0..2"},
        BadCase{"global_range", "{" QKV_OK ", \"mask\": {\"global\": [7]}}", "global position 7"},
        BadCase{"custom_shape", "{" QKV_OK ", \"mask\": {\"custom\": [[1, 0, 1]]}}",
                "mask head 0 has shape (1, 3)"},
        BadCase{"bias_string", "{" QKV_OK ", \"mask\": {\"bias\": [[0, \"x\"]]}}",
                "mask.bias[0][1]: expected a number"},
        BadCase{"temperature_zero", "{" QKV_OK ", \"temperature\": 0}", "temperature must be"},
        BadCase{"tokens_count", "{" QKV_OK ", \"query_tokens\": [\"a\", \"b\"]}",
                "query_tokens: has 2 tokens but there are 1 queries"},
        BadCase{"tokens_type", "{" QKV_OK ", \"query_tokens\": [3]}",
                "query_tokens[0]: expected a string"},
        BadCase{"cross_needs_keys", "{" QKV_OK ", \"query_tokens\": [\"a\"]}",
                "key_tokens: missing"},
        BadCase{"both_forms", "{" QKV_OK ", \"projection\": {}}", "either q/k/v or projection"},
        BadCase{"proj_missing", "{\"projection\": {\"x\": [[1]]}}",
                "projection.w_q: missing field"},
        BadCase{"proj_dmodel",
                "{\"projection\": {\"x\": [[1, 2]], \"w_q\": [[[1]]], \"w_k\": [[[1], [1]]], "
                "\"w_v\": [[[1], [1]]]}}",
                "projection.w_q[0]: has 1 rows; expected d_model = 2"},
        BadCase{"proj_wo",
                "{\"projection\": {\"x\": [[1]], \"w_q\": [[[1]]], \"w_k\": [[[1]]], \"w_v\": "
                "[[[1]]], \"w_o\": [[1], [2]]}}",
                "projection.w_o: has shape (2, 1); expected 1 rows"},
        BadCase{"version", "{\"version\": 9, " QKV_OK "}", "unsupported scenario version 9"},
        BadCase{"empty_matrix", "{\"q\": [], \"k\": [[1]], \"v\": [[1]]}",
                "q: expected a non-empty 2-D or 3-D array of numbers, got an empty array"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(Scenario, SaveRoundTripsEveryExample) {
  for (const auto& e : list_examples()) {
    std::string error;
    auto s = load_example(e.name, error);
    ASSERT_TRUE(s);
    std::string path = test::temp_path(e.name + ".json");
    ASSERT_TRUE(save_scenario_file(*s, path, error)) << error;
    auto back = load_scenario_file(path, error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(scenario_to_json(*back), scenario_to_json(*s)) << e.name;
    auto cpu = make_cpu_backend();
    EXPECT_EQ(compute_scenario_trace(*back, *cpu).step(StageId::kOutput).heads[0],
              compute_scenario_trace(*s, *cpu).step(StageId::kOutput).heads[0]);
  }
}

TEST(Scenario, BiasNegativeInfinityRoundTrips) {
  std::string error;
  auto s = parse_scenario_json("{" QKV_OK ", \"mask\": {\"bias\": [[0, null]]}}", "b.json", error);
  ASSERT_TRUE(s) << error;
  EXPECT_TRUE(std::isinf(s->options.mask.bias[0](0, 1)));
  auto again = parse_scenario_json(scenario_to_json(*s), "b2.json", error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(std::isinf(again->options.mask.bias[0](0, 1)));
}

TEST(Scenario, FailedSaveLeavesNothingBehind) {
  std::string error;
  auto s = load_example("fear-is", error);
  std::string path = test::temp_path("no-such-dir") + "/x.json";
  EXPECT_FALSE(save_scenario_file(*s, path, error));
  EXPECT_NE(error.find("x.json"), std::string::npos);
  // Overwriting keeps the old file whole until the new one is complete.
  std::string good = test::temp_path("keep.json");
  ASSERT_TRUE(save_scenario_file(*s, good, error));
  std::string before;
  ASSERT_TRUE(read_text_file(good, before, error));
  ASSERT_TRUE(save_scenario_file(*s, good, error));
  std::string after;
  ASSERT_TRUE(read_text_file(good, after, error));
  EXPECT_EQ(before, after);
}

TEST(Scenario, UnreadableFile) {
  std::string error;
  EXPECT_FALSE(load_scenario_file(test::temp_path("missing.json"), error));
  EXPECT_NE(error.find("cannot read"), std::string::npos);
  EXPECT_FALSE(load_scenario_file(ATTN_TEST_TMP, error));
  EXPECT_NE(error.find("directory"), std::string::npos);
}

TEST(TraceCli, FearIsJson) {
  test::CliResult r = test::run_cli("trace --example fear-is");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["name"], "fear-is");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["query_tokens"], nlohmann::json({"Fear", "is"}));
  std::vector<std::string> ids;
  for (auto& s : j["steps"]) ids.push_back(s["id"]);
  auto pos = [&](const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) - ids.begin();
  };
  EXPECT_LT(pos("scores"), pos("scaled"));
  EXPECT_LT(pos("scaled"), pos("masked"));
  EXPECT_LT(pos("masked"), pos("weights"));
  EXPECT_LT(pos("weights"), pos("output"));
  EXPECT_LT(pos("output"), static_cast<long>(ids.size()));
  auto& scores = j["steps"][pos("scores")]["heads"][0]["data"];
  EXPECT_NEAR(scores[0][1].get<double>(), 0.54, 1e-6);
  auto& weights = j["steps"][pos("weights")]["heads"][0];
  EXPECT_EQ(weights["rows"], 2);
  EXPECT_EQ(weights["cols"], 2);
  const double w01 = 1.0 / (1.0 + std::exp(-0.27 / std::sqrt(3.0)));
  EXPECT_NEAR(weights["data"][0][1].get<double>(), w01, 1e-6);
}

TEST(TraceCli, MaskedIsNullAndFileOutput) {
  std::string out = test::temp_path("trace.json");
  test::CliResult r = test::run_cli("trace --example fear-is-the -o '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::string text, error;
  ASSERT_TRUE(read_text_file(out, text, error));
  auto j = nlohmann::json::parse(text);
  for (auto& s : j["steps"])
    if (s["id"] == "masked") {
      EXPECT_TRUE(s["heads"][0]["data"][0][2].is_null());
    }
}

TEST(TraceCli, BadInputsExitTwoWithAMessage) {
  std::string bad = write_temp("bad.json", "{\"q\": [[1, \"x\"]], \"k\": [[1, 2]], \"v\": [[1]]}");
  struct {
    std::string args, fragment;
  } cases[] = {
      {"trace --example nope", "unknown example 'nope'"},
      {"trace", "--example"},
      {"trace --scenario '" + bad + "'", "q[0][1]: expected a number"},
      {"trace --scenario /nonexistent/x.json", "cannot read"},
      {"trace --example fear-is --backend gpu", "--backend"},
      {"trace --example fear-is --bogus", "bogus"},
      {"trace --example fear-is --scenario x.json", "excludes"},
      {"nosuchcommand", "nosuchcommand"},
  };
  for (const auto& c : cases) {
    test::CliResult r = test::run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.args << "\n" << r.err;
  }
}

TEST(TraceCli, GarbageFilesNeverCrash) {
  // Bytes that are not a scenario in many ways: each must be a clean exit 2.
  const std::string inputs[] = {"",
                                "\xff\xfe\x00\x01",
                                "null",
                                "1e999",
                                "{\"q\": {}}",
                                "{\"q\": [[[[1]]]], \"k\": [[1]], \"v\": [[1]]}",
                                std::string(100000, '['),
                                "{\"q\": [[1e38, 1e38]], \"k\": [[1e38, 1e38]], \"v\": [[1]]}"};
  int n = 0;
  for (const auto& in : inputs) {
    std::string path = write_temp("garbage" + std::to_string(n++) + ".json", in);
    test::CliResult r = test::run_cli("trace --scenario '" + path + "'");
    EXPECT_TRUE(r.status == 2 || r.status == 0) << "input " << n << " status " << r.status << "\n"
                                                << r.err;
    if (r.status == 2) {
      EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    }
    EXPECT_EQ(r.out.find("nan"), std::string::npos);
  }
}

TEST(TraceCli, ExamplesListing) {
  test::CliResult r = test::run_cli("examples");
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("fear-is-the\t", 0), 0u);
  EXPECT_NE(r.out.find("\nfear-is\t"), std::string::npos);
}

}  // namespace
}  // namespace attn
