// Tests for the narration (core/explain.cpp) and `attention-lab explain`: the numbers it prints are
// checked against a plain double loop over the Q/K/V tables written out here, and against values
// derived by hand; masks, temperature, heads, projection, ASCII, precision and errors are covered.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <vector>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "reference.h"

namespace attn {
namespace {

using Table = std::vector<std::vector<double>>;

// The tables of 001_b72ce92fe1a182bd.txt, typed in again here (not read from the assets).
const Table kQ = {{0.2, 0.1, 0.8}, {0.5, 0.2, 0.3}, {0.1, 0.6, 0.3}};
const Table kK = {{0.3, 0.5, 0.2}, {0.1, 0.4, 0.6}, {0.4, 0.2, 0.5}};
const Table kV = {{0.1, 0.7, 0.4}, {0.8, 0.1, 0.2}, {0.2, 0.9, 0.1}};

// The way a hand calculation writes a number: P decimals, trailing zeros dropped, a Unicode minus.
std::string fmt(double x, int precision = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, x);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  if (s[0] == '-') s = "−" + s.substr(1);
  return s;
}

// One query row of single-head attention in double, as plain loops over the first n rows.
struct RowRef {
  std::vector<double> scores, scaled, exps, weights, output;
  double max = -INFINITY, sum = 0.0;
};
RowRef reference_row(int i, int n, const std::vector<bool>& visible, double temperature = 1.0) {
  RowRef r;
  const size_t d_k = kQ[0].size(), d_v = kV[0].size();
  for (int j = 0; j < n; ++j) {
    double s = 0.0;
    for (size_t c = 0; c < d_k; ++c) s += kQ[i][c] * kK[j][c];
    r.scores.push_back(s);
    r.scaled.push_back(s / std::sqrt(static_cast<double>(d_k)));
    if (visible[j]) r.max = std::max(r.max, r.scaled.back() / temperature);
  }
  for (int j = 0; j < n; ++j) {
    r.exps.push_back(visible[j] ? std::exp(r.scaled[j] / temperature - r.max) : 0.0);
    r.sum += r.exps.back();
  }
  r.output.assign(d_v, 0.0);
  for (int j = 0; j < n; ++j) {
    r.weights.push_back(r.exps[j] / r.sum);
    for (size_t c = 0; c < d_v; ++c) r.output[c] += r.weights[j] * kV[j][c];
  }
  return r;
}

AttentionTrace trace_of(const Scenario& s) {
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  return compute_scenario_trace(s, *cpu);
}

AttentionTrace example_trace(const std::string& name) {
  std::string error;
  std::optional<Scenario> s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  return trace_of(*s);
}

AttentionTrace json_trace(const std::string& json) {
  std::string error;
  std::optional<Scenario> s = parse_scenario_json(json, "test.json", error);
  EXPECT_TRUE(s) << error;
  return trace_of(*s);
}

std::string narrate(const AttentionTrace& t, ExplainRequest r) {
  std::string error;
  std::string text = explain(t, r, error);
  EXPECT_EQ(error, "");
  return text;
}

std::string narrate(const AttentionTrace& t, int query, int head = 0) {
  ExplainRequest r;
  r.query = query;
  r.head = head;
  return narrate(t, r);
}

size_t columns(const std::string& line) {
  size_t w = 0;
  for (unsigned char c : line) w += (c & 0xC0) != 0x80;
  return w;
}

void expect_lines_fit(const std::string& text, size_t width = 100) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(columns(line), width) << line;
}

#define EXPECT_HAS(text, needle) \
  EXPECT_NE((text).find(needle), std::string::npos) << "missing: " << (needle) << "\n" << (text)
#define EXPECT_LACKS(text, needle) \
  EXPECT_EQ((text).find(needle), std::string::npos) << "unexpected: " << (needle) << "\n" << (text)

TEST(Explain, FearIsQueryZeroByHand) {
  // By hand, q_Fear = [0.2, 0.1, 0.8]:
  //   q_Fear·k_Fear = 0.2×0.3 + 0.1×0.5 + 0.8×0.2 = 0.06 + 0.05 + 0.16 = 0.27
  //   q_Fear·k_is   = 0.2×0.1 + 0.1×0.4 + 0.8×0.6 = 0.02 + 0.04 + 0.48 = 0.54
  // (checked twice: 0.06+0.05 = 0.11, +0.16 = 0.27; 0.02+0.04 = 0.06, +0.48 = 0.54). Scaled by
  // 1/√3: 0.27/1.7321 = 0.1559 and 0.54/1.7321 = 0.3118. exp(0.1559 − 0.3118) = 0.8557, so
  // Σ = 1.8557, w = 0.4611 and 0.5389; out[0] = 0.4611×0.1 + 0.5389×0.8 = 0.4772.
  const std::string text = narrate(example_trace("fear-is"), 0);
  EXPECT_HAS(text, "q_Fear · k_Fear = 0.2×0.3 + 0.1×0.5 + 0.8×0.2 = 0.06 + 0.05 + 0.16 = 0.27");
  EXPECT_HAS(text, "q_Fear · k_is   = 0.2×0.1 + 0.1×0.4 + 0.8×0.6 = 0.02 + 0.04 + 0.48 = 0.54");
  EXPECT_HAS(text, "√3 = 1.7321");
  EXPECT_HAS(text, "0.27 ÷ 1.7321 = 0.1559");
  EXPECT_HAS(text, "0.54 ÷ 1.7321 = 0.3118");
  EXPECT_HAS(text, "= exp(−0.1559) = 0.8557");
  EXPECT_HAS(text, "= 0.8557 + 1 = 1.8557");
  EXPECT_HAS(text, "w_Fear = 0.8557 / 1.8557 = 0.4611");
  EXPECT_HAS(text, "w_is   = 1 / 1.8557 = 0.5389");
  EXPECT_HAS(text, "out[0] = 0.4611×0.1 + 0.5389×0.8 = 0.0461 + 0.4311 = 0.4772");
  EXPECT_HAS(text, "output_Fear = [0.4772, 0.3767, 0.2922]");
  EXPECT_HAS(text, "Mask: none");
  expect_lines_fit(text);
}

// Every number the double loop gives appears, formatted to the precision.
void expect_row_numbers(const std::string& text, const RowRef& r, const std::vector<bool>& visible,
                        int precision = 4) {
  for (size_t j = 0; j < r.scores.size(); ++j) {
    EXPECT_HAS(text, "= " + fmt(r.scores[j], precision) + "\n");
    EXPECT_HAS(text, "= " + fmt(r.scaled[j], precision) + "\n");
    if (!visible[j]) continue;
    EXPECT_HAS(text, ") = " + fmt(r.exps[j], precision) + "\n");
    EXPECT_HAS(text, "= " + fmt(r.weights[j], precision) + "\n");
  }
  EXPECT_HAS(text, "= " + fmt(r.sum, precision) + "\n");
  for (size_t c = 0; c < r.output.size(); ++c)
    EXPECT_HAS(text, "out[" + std::to_string(c) + "] = ");
  std::string out = "[";
  for (size_t c = 0; c < r.output.size(); ++c) out += (c ? ", " : "") + fmt(r.output[c], precision);
  EXPECT_HAS(text, "output_");
  EXPECT_HAS(text, out + "]");
}

TEST(Explain, FearIsBothQueriesMatchDoubleLoop) {
  const AttentionTrace t = example_trace("fear-is");
  const std::vector<bool> all{true, true};
  expect_row_numbers(narrate(t, 0), reference_row(0, 2, all), all);
  // q_is = [0.5, 0.2, 0.3]: q_is·k_Fear = 0.15 + 0.10 + 0.06 = 0.31, q_is·k_is = 0.05 + 0.08 +
  // 0.18 = 0.31 — equal scores, so both weights are 0.5.
  const std::string text = narrate(t, 1);
  expect_row_numbers(text, reference_row(1, 2, all), all);
  EXPECT_HAS(text, "q_is · k_Fear = 0.5×0.3 + 0.2×0.5 + 0.3×0.2 = 0.15 + 0.1 + 0.06 = 0.31");
  EXPECT_HAS(text, "w_is   = 1 / 2 = 0.5");
}

TEST(Explain, FearIsTheCausalQueryOne) {
  // q_is·k_the = 0.5×0.4 + 0.2×0.2 + 0.3×0.5 = 0.2 + 0.04 + 0.15 = 0.39, computed but hidden by
  // the causal mask; Fear and is both score 0.31, so w = 0.5, 0.5, 0 and the output is
  // ([0.1,0.7,0.4] + [0.8,0.1,0.2]) / 2 = [0.45, 0.4, 0.3].
  const std::string text = narrate(example_trace("fear-is-the"), 1);
  const std::vector<bool> vis{true, true, false};
  expect_row_numbers(text, reference_row(1, 3, vis), vis);
  EXPECT_HAS(text, "q_is · k_the  = 0.5×0.4 + 0.2×0.2 + 0.3×0.5 = 0.2 + 0.04 + 0.15 = 0.39");
  EXPECT_HAS(text, "causal: key 2 comes after query position 1");
  EXPECT_HAS(text, "e_the  = exp(−∞) = 0");
  EXPECT_HAS(text, "output_is = [0.45, 0.4, 0.3]");
  EXPECT_HAS(text, "Causal (top-left");
  expect_lines_fit(text);
}

TEST(Explain, PrecisionControlsDecimals) {
  const AttentionTrace t = example_trace("fear-is");
  const RowRef r = reference_row(0, 2, {true, true});
  for (int p : {1, 2, 6}) {
    ExplainRequest req;
    req.precision = p;
    const std::string text = narrate(t, req);
    EXPECT_HAS(text, "w_Fear = " + fmt(r.exps[0], p) + " / " + fmt(r.sum, p) + " = " +
                         fmt(r.weights[0], p) + "\n");
  }
  // Precision 0 would round these weights (0.46, 0.54) to 0 and 1, so "1 / 2 = 1"; values below 1
  // keep their first digit: e_Fear = exp(−0.155) = 0.856, Σ = 1.856, w = 0.461 and 0.539.
  ExplainRequest zero;
  zero.precision = 0;
  const std::string z = narrate(t, zero);
  EXPECT_HAS(z, "w_Fear = 0.9 / 2 = 0.5\n");
  EXPECT_HAS(z, "w_is   = 1 / 2 = 0.5\n");
  EXPECT_LACKS(z, "≈0");
  EXPECT_HAS(z, "values below 1 keep their first digit");
  ExplainRequest two;
  two.precision = 2;
  const std::string text = narrate(t, two);
  EXPECT_HAS(text, "= 0.46\n");
  EXPECT_LACKS(text, "0.4611");
  EXPECT_HAS(text, "rounded to 2 decimals");
}

TEST(Explain, AsciiModeHasOnlyAscii) {
  // A non-ASCII token must not leak either.
  const AttentionTrace t = json_trace(R"({"query_tokens": ["café", "thé"],
      "q": [[1, -0.5], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 2], [3, 4]],
      "mask": {"causal": true}})");
  for (int q : {0, 1}) {
    ExplainRequest r;
    r.query = q;
    r.unicode = false;
    const std::string text = narrate(t, r);
    for (unsigned char c : text) ASSERT_LT(c, 0x80) << text;
    EXPECT_HAS(text, "sqrt");
    EXPECT_HAS(text, "1x1");
  }
  ExplainRequest r;
  r.unicode = false;
  EXPECT_HAS(narrate(t, r), "-inf");
}

TEST(Explain, MaskReasonsWindowPaddingCustomBias) {
  // Query 4 with window 1 sees keys 3..5; key 0 is global, key 5 is padding (L = 5), the custom
  // mask hides key 3 and the bias adds 0.5 to key 4 and −∞ (null) to key 5.
  const AttentionTrace t = json_trace(R"({"query_tokens": ["t0","t1","t2","t3","t4","t5"],
      "q": [[1,0],[0,1],[1,1],[0.5,0.2],[0.1,0.9],[0.3,0.3]],
      "k": [[1,0],[0,1],[1,1],[0.5,0.2],[0.1,0.9],[0.3,0.3]],
      "v": [[1,0],[0,1],[1,1],[0.5,0.2],[0.1,0.9],[0.3,0.3]],
      "mask": {"window": 1, "global": [0], "key_length": 5,
               "custom": [[1,1,1,1,1,1],[1,1,1,1,1,1],[1,1,1,1,1,1],[1,1,1,1,1,1],
                          [1,1,1,0,1,1],[1,1,1,1,1,1]],
               "bias": [[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],[0,0,0,0,0,0],
                        [0,-1,0,0,0.5,null],[0,0,0,0,0,0]]},
      "scale": 0.5})");
  const std::string text = narrate(t, 4);
  EXPECT_HAS(text, "window: |4 − 1| = 3 > W = 1");
  EXPECT_HAS(text, "custom mask is 0 here");
  EXPECT_HAS(text, "padding: key 5 ≥ key length 5");
  EXPECT_HAS(text, "bias is −∞ here");
  EXPECT_HAS(text, "key 0 is global");
  // Scale override: q_t4·k_t4 = 0.1×0.1 + 0.9×0.9 = 0.82, × 0.5 = 0.41, + bias 0.5 = 0.91.
  EXPECT_HAS(text, "0.82×0.5 = 0.41");
  EXPECT_HAS(text, "0.41 + 0.5 = 0.91");
  EXPECT_HAS(text, "chosen scale s = 0.5");
  // Visible: key 0 (0.1×0.5 = 0.05) and key 4 (0.91): w_t4 = 1 / (1 + e^(0.05 − 0.91)).
  const double w4 = 1.0 / (1.0 + std::exp(0.05 - 0.91));
  EXPECT_HAS(text, "= " + fmt(w4) + "\n");
  expect_lines_fit(text);
}

TEST(Explain, EmptyRowSaysZeroWeightsAndNoNan) {
  const AttentionTrace t = json_trace(R"({"query_tokens": ["a", "b"],
      "q": [[1, 0], [0, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 2], [3, 4]],
      "mask": {"custom": [[0, 0], [1, 1]]}})");
  const std::string text = narrate(t, 0);
  EXPECT_HAS(text, "Every key is hidden");
  EXPECT_HAS(text, "weights are all 0");
  EXPECT_HAS(text, "no NaN");
  EXPECT_HAS(text, "output_a = [0, 0]");
  EXPECT_LACKS(text, "nan");
  EXPECT_LACKS(text, "inf\n");
}

const char* kGqa =
    R"({"name": "gqa", "query_tokens": ["a","b","c"], "key_tokens": ["w","x","y","z"],
  "q": [[[1,0],[0,1],[1,1]], [[0.5,0.5],[1,-1],[0,2]], [[1,2],[0,0],[-1,1]],
        [[0.1,0.2],[0.3,0.4],[0.5,0.6]]],
  "k": [[[1,0],[0,1],[1,1],[-1,0]], [[0.2,0.1],[0.3,-0.4],[1,0],[0,1]]],
  "v": [[[1,0,0],[0,1,0],[0,0,1],[1,1,1]], [[2,0,1],[0,2,1],[1,1,0],[0,0,0]]],
  "mask": {"causal": "lower-right"}, "temperature": 0.5})";

TEST(Explain, GqaHeadMappingTemperatureAndLowerRight) {
  const AttentionTrace t = json_trace(kGqa);
  const std::string text = narrate(t, 0, 3);
  EXPECT_HAS(text,
             "Head 3 of 4 reads key/value head 1 "
             "(GQA: 2 query heads share each K/V head)");
  EXPECT_HAS(text, "K (H_kv=2, n_k=4, d_k=2)");
  // Lower-right: p = 0 + 4 − 3 = 1, so keys 0 and 1 are visible.
  EXPECT_HAS(text, "p = i + n_k − n_q = 0 + 4 − 3 = 1");
  EXPECT_HAS(text, "causal: key 2 comes after query position 1");
  // Head 3 uses q = [0.1, 0.2] with K/V head 1: scores 0.1×0.2 + 0.2×0.1 = 0.04 and
  // 0.1×0.3 + 0.2×(−0.4) = 0.03 − 0.08 = −0.05.
  EXPECT_HAS(text, "q_a · k_w = 0.1×0.2 + 0.2×0.1 = 0.02 + 0.02 = 0.04");
  EXPECT_HAS(text, "q_a · k_x = 0.1×0.3 + 0.2×(−0.4) = 0.03 − 0.08 = −0.05");
  EXPECT_HAS(text, "Temperature T = 0.5");
  const double s0 = 0.04 / std::sqrt(2.0), s1 = -0.05 / std::sqrt(2.0);
  EXPECT_HAS(text, "x_w = " + fmt(s0) + " ÷ 0.5 = " + fmt(s0 / 0.5));
  const double w0 = 1.0 / (1.0 + std::exp((s1 - s0) / 0.5));
  EXPECT_HAS(text, "w_w = ");
  EXPECT_HAS(text, "= " + fmt(w0) + "\n");
  // out[0] = w0×2 + w1×0 with V head 1.
  EXPECT_HAS(text, "out[0] = " + fmt(w0) + "×2 + " + fmt(1 - w0) + "×0");
  expect_lines_fit(text);
}

TEST(Explain, MhaAndMqaHeadTexts) {
  const AttentionTrace mqa = json_trace(R"({"q": [[[1,0]], [[0,1]], [[1,1]]], "k": [[[1,0],[0,1]]],
      "v": [[[1],[2]]], "key_tokens": ["p", "q"]})");
  EXPECT_HAS(narrate(mqa, 0, 2),
             "Head 2 of 3 reads key/value head 0 "
             "(MQA: all 3 query heads share the one K/V head)");
  const AttentionTrace mha = json_trace(R"({"q": [[[1,0]], [[0,1]]], "k": [[[1,0]], [[0,1]]],
      "v": [[[1]], [[2]]]})");
  EXPECT_HAS(narrate(mha, 0, 1), "reads key/value head 1 (multi-head");
  EXPECT_HAS(narrate(example_trace("fear-is"), 0), "One attention head.");
}

TEST(Explain, ProjectionShowsEmbeddingConcatAndWo) {
  // Two heads, d_model = 3, d_k = d_v = 1, cross-attention with 2 key tokens.
  const AttentionTrace t = json_trace(R"({"query_tokens": ["je"], "key_tokens": ["I", "am"],
      "projection": {"x": [[1, 2, 0]], "x_kv": [[1, 0, 0], [0, 1, 0]],
        "w_q": [[[1],[0],[0]], [[0],[1],[0]]], "w_k": [[[1],[1],[0]], [[0],[0.5],[1]]],
        "w_v": [[[2],[0],[0]], [[0],[3],[0]]], "w_o": [[1, 0], [0, 1]], "b_o": [0.5, -0.5]}})");
  const std::string text = narrate(t, 0, 1);
  // Head 1: q = x·W_Q = [2]; k_I = [0], k_am = [0.5]; v_I = [0], v_am = [3].
  EXPECT_HAS(text, "x_je = [1, 2, 0]");
  EXPECT_HAS(text, "q_je = x_je · W_Q^(1) = [2]");
  EXPECT_HAS(text, "cross-attention");
  // Scores 0 and 1, scaled by 1/√1; w_am = e/(1+e).
  const double w_am = std::exp(1.0) / (1.0 + std::exp(1.0));
  EXPECT_HAS(text, "= " + fmt(w_am) + "\n");
  // Head 0: q = [1]; k_I = [1], k_am = [1]: equal scores, w = 0.5 each; v = [2], [0] → O_0 = 1.
  // Head 1: O_1 = 3·w_am. concat = [1 | 3·w_am]; projected = concat·I + b_O.
  EXPECT_HAS(text, "concat_je = [O_0 | O_1] = [1 | " + fmt(3 * w_am) + "]");
  EXPECT_HAS(text, "projected_je = concat_je · W_O + b_O = [1.5, " + fmt(3 * w_am - 0.5) + "]");
  EXPECT_HAS(text, "b_O = [0.5, −0.5]");
  EXPECT_HAS(text, "this head");
}

TEST(Explain, LongRowsAndWideVectorsAreSummarisedTruthfully) {
  // 20 keys of width 10: key j has k_j = v_j = [j/20, 0.1, ..., 0.1]; q = [1, ..., 1].
  const int n = 20, d = 10;
  std::ostringstream js;
  auto row = [&](double first) {
    std::ostringstream r;
    r << "[" << first;
    for (int c = 1; c < d; ++c) r << ", 0.1";
    return r.str() + "]";
  };
  js << R"({"key_tokens": [)";
  for (int j = 0; j < n; ++j) js << (j ? "," : "") << '"' << j << '"';
  js << R"(], "q": [)"
     << "[1,1,1,1,1,1,1,1,1,1]"
     << R"(], "k": [)";
  for (int j = 0; j < n; ++j) js << (j ? "," : "") << row(j / 20.0);
  js << R"(], "v": [)";
  for (int j = 0; j < n; ++j) js << (j ? "," : "") << row(j / 20.0);
  js << R"(], "mask": {"key_length": 18}})";
  const AttentionTrace t = json_trace(js.str());
  const std::string text = narrate(t, 0);
  // score_j = j/20 + 9×0.1; the middle 5 terms of each dot product sum to 0.5.
  EXPECT_HAS(text, "[5 more: 0.5]");
  EXPECT_HAS(text, "q_0 · k_17 = ");
  EXPECT_HAS(text, "= " + fmt(17 / 20.0 + 0.9) + "\n");
  // The 12 heaviest visible keys are 6..17; 6 more visible keys (0..5) are summarised.
  EXPECT_HAS(text, "[6 more keys: ");
  EXPECT_HAS(text, "keys 18..19");
  EXPECT_LACKS(text, "q_0 · k_5 ");
  // Σ over all 18 visible keys.
  double sum = 0, m = (17 / 20.0 + 0.9) / std::sqrt(10.0);
  for (int j = 0; j < 18; ++j) sum += std::exp((j / 20.0 + 0.9) / std::sqrt(10.0) - m);
  EXPECT_HAS(text, "= " + fmt(sum) + "\n");
  EXPECT_HAS(text, "components 4..7");
  expect_lines_fit(text);
}

TEST(Explain, KeyAndStepNarrowTheText) {
  const AttentionTrace t = example_trace("fear-is-the");
  ExplainRequest cell;
  cell.query = 1;
  cell.key = 2;
  const std::string c = narrate(t, cell);
  EXPECT_HAS(c, "q_is · k_the = 0.5×0.4 + 0.2×0.2 + 0.3×0.5 = 0.2 + 0.04 + 0.15 = 0.39");
  EXPECT_LACKS(c, "k_Fear");
  EXPECT_HAS(c, "causal: key 2 comes after query position 1");
  EXPECT_HAS(c, "w_the = 0");

  ExplainRequest step;
  step.query = 0;
  step.step = StageId::kWeights;
  const std::string s = narrate(t, step);
  EXPECT_HAS(s, "4. Softmax");
  EXPECT_LACKS(s, "1. Scores");
  EXPECT_LACKS(s, "5. Weighted");
}

// The engine names the request's field; the command line says it as a flag (ExplainCli below).
TEST(Explain, OutOfRangeErrorsNameTheField) {
  const AttentionTrace t = example_trace("fear-is");
  struct Case {
    ExplainRequest r;
    std::string field, range;
  };
  std::vector<Case> cases(4);
  cases[0].r.query = 2, cases[0].field = "query: ", cases[0].range = "0..1";
  cases[1].r.query = -1, cases[1].field = "query: ", cases[1].range = "0..1";
  cases[2].r.head = 1, cases[2].field = "head: ", cases[2].range = "0..0";
  cases[3].r.key = 5, cases[3].field = "key: ", cases[3].range = "0..1";
  for (const Case& c : cases) {
    std::string error;
    EXPECT_EQ(explain(t, c.r, error), "");
    EXPECT_EQ(error.rfind(c.field, 0), 0u) << error;
    EXPECT_HAS(error, c.range);
  }
  ExplainRequest bad;
  bad.step = StageId::kConcat;  // a one-head scenario has no concatenated heads
  std::string error;
  EXPECT_EQ(explain(t, bad, error), "");
  EXPECT_EQ(error.rfind("step: ", 0), 0u) << error;
}

TEST(ExplainCli, FearIsEndToEnd) {
  test::CliResult r = test::run_cli("explain --example fear-is --query 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_HAS(r.out, "q_Fear · k_is   = 0.2×0.1 + 0.1×0.4 + 0.8×0.6 = 0.02 + 0.04 + 0.48 = 0.54");
  EXPECT_HAS(r.out, "output_Fear = [0.4772, 0.3767, 0.2922]");

  r = test::run_cli("explain --example fear-is-the --query 1 --precision 2 --ascii");
  ASSERT_EQ(r.status, 0) << r.err;
  for (unsigned char c : r.out) ASSERT_LT(c, 0x80);
  EXPECT_HAS(r.out, "-inf");

  // A scenario file works the same way.
  const std::string path = test::temp_path("explain_gqa.json");
  std::ofstream(path) << kGqa;
  r = test::run_cli("explain --scenario '" + path + "' --query 2 --head 1 --key 3 --step masked");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_HAS(r.out, "3. Mask");
  std::remove(path.c_str());
}

TEST(ExplainCli, BadArgumentsExitTwo) {
  const struct {
    const char* args;
    const char* needle;
  } cases[] = {
      {"explain --example fear-is --query 2", "--query"},
      {"explain --example fear-is --query 0 --head 1", "--head"},
      {"explain --example fear-is --query 0 --key 9", "--key"},
      {"explain --example fear-is --query 0 --precision 11", "--precision"},
      {"explain --example fear-is --query x", "--query"},
      {"explain --example fear-is", "--query"},
      {"explain --query 0", "--example"},
      {"explain --example no-such-example --query 0", "no-such-example"},
      {"explain --example fear-is --query 0 --step bogus", "--step"},
  };
  for (const auto& c : cases) {
    test::CliResult r = test::run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.args << "\n" << r.err;
    EXPECT_HAS(r.err, c.needle);
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// Every reason the narration gives for a hidden key, and every key range it names, is a true
// statement: the numbers are parsed back out of the text and the inequality checked, for every
// combination of causal alignment, window, global position and padding, on square, wide and tall
// score matrices, for every query row.
struct ReasonCheck {
  int checked = 0;
  // Compiled once: std::regex is slow to build.
  const std::regex causal{"causal: key (\\d+) comes after query position (-?\\d+)"};
  const std::regex window_abs{"window: \\|(-?\\d+) − (\\d+)\\| = (\\d+) > W = (\\d+)"};
  const std::regex window_diff{"window: (-?\\d+) − (\\d+) = (-?\\d+) > W = (\\d+)"};
  const std::regex window_later{"window: key (\\d+) > p = (-?\\d+)"};
  const std::regex padding{"padding: key (\\d+) ≥ key length (\\d+)"};
  const std::regex range{"keys (-?\\d+)\\.\\.(-?\\d+)"};
  const std::regex only{"key (-?\\d+) only"};
  const std::regex any_window{"window: [^;\\n(]*"};

  void text(const std::string& t, const std::string& where) {
    auto each = [&](const std::regex& re, auto&& check) {
      for (std::sregex_iterator it(t.begin(), t.end(), re), end; it != end; ++it) {
        check(*it);
        ++checked;
      }
    };
    auto num = [](const std::ssub_match& m) { return std::stoi(m.str()); };
    each(causal, [&](const std::smatch& m) {
      EXPECT_GT(num(m[1]), num(m[2])) << m.str() << "\n" << where;
    });
    each(window_abs, [&](const std::smatch& m) {
      EXPECT_EQ(std::abs(num(m[1]) - num(m[2])), num(m[3])) << m.str() << "\n" << where;
      EXPECT_GT(num(m[3]), num(m[4])) << m.str() << "\n" << where;
    });
    each(window_diff, [&](const std::smatch& m) {
      EXPECT_EQ(num(m[1]) - num(m[2]), num(m[3])) << m.str() << "\n" << where;
      EXPECT_GT(num(m[3]), num(m[4])) << m.str() << "\n" << where;
    });
    each(window_later, [&](const std::smatch& m) {
      EXPECT_GT(num(m[1]), num(m[2])) << m.str() << "\n" << where;
    });
    each(padding, [&](const std::smatch& m) {
      EXPECT_GE(num(m[1]), num(m[2])) << m.str() << "\n" << where;
    });
    // A range names at least two keys in order, and no negative key ("keys 0..-2").
    each(range, [&](const std::smatch& m) {
      EXPECT_GE(num(m[1]), 0) << m.str() << "\n" << where;
      EXPECT_LT(num(m[1]), num(m[2])) << m.str() << "\n" << where;
    });
    each(only, [&](const std::smatch& m) { EXPECT_GE(num(m[1]), 0) << m.str() << "\n" << where; });
    // Every window clause is one of the forms above (nothing unchecked slips through).
    each(any_window, [&](const std::smatch& m) {
      const std::string s = m.str();
      const bool known = std::regex_search(s, window_abs) || std::regex_search(s, window_diff) ||
                         std::regex_search(s, window_later);
      EXPECT_TRUE(known) << s << "\n" << where;
    });
  }
};

TEST(Explain, EveryMaskReasonIsATrueInequality) {
  std::mt19937 rng(3);
  ReasonCheck check;
  for (auto [n_q, n_k] : {std::pair{4, 4}, {3, 6}, {6, 3}})
    for (CausalAlign causal : {CausalAlign::kNone, CausalAlign::kTopLeft, CausalAlign::kLowerRight})
      for (int window : {-1, 0, 1, 2})
        for (bool global : {false, true})
          for (int key_length : {-1, 0, 2}) {
            Scenario s;
            s.name = "reasons";
            s.qkv.q = {test::random_matrix(n_q, 2, rng)};
            s.qkv.k = {test::random_matrix(n_k, 2, rng)};
            s.qkv.v = {test::random_matrix(n_k, 2, rng)};
            for (int i = 0; i < n_q; ++i) s.query_tokens.push_back("q" + std::to_string(i));
            if (n_q != n_k)
              for (int j = 0; j < n_k; ++j) s.key_tokens.push_back("k" + std::to_string(j));
            MaskSpec& m = s.options.mask;
            m.causal = causal;
            if (window >= 0) m.window = window;
            if (global) m.global = {0};
            if (key_length >= 0) m.key_length = key_length;
            ASSERT_EQ(validate_scenario(s), "");
            const AttentionTrace t = trace_of(s);
            for (int i = 0; i < n_q; ++i) {
              ExplainRequest r;
              r.query = i;
              std::string error;
              const std::string text = explain(t, r, error);
              ASSERT_EQ(error, "");
              const std::string where = std::to_string(n_q) + "×" + std::to_string(n_k) +
                                        " causal " + std::to_string(static_cast<int>(causal)) +
                                        " window " + std::to_string(window) + " global " +
                                        std::to_string(global) + " L " +
                                        std::to_string(key_length) + " query " + std::to_string(i);
              check.text(text, where);
              // One cell at a time (the mask stage) says the same things.
              r.step = StageId::kMasked;
              for (int j = 0; j < n_k; ++j) {
                r.key = j;
                check.text(explain(t, r, error), where + " key " + std::to_string(j));
              }
            }
          }
  EXPECT_GT(check.checked, 1000);  // the patterns matched the text: the test checked something
}

// The issue's cases by hand: a causal window W = 1 hides key 1 from query 0 because it comes
// later (|0 − 1| = 1 is not > 1); a query whose window holds no key says so.
TEST(Explain, CausalWindowReasonsByHand) {
  const AttentionTrace t = json_trace(R"({"query_tokens": ["a", "b", "c"],
      "q": [[1, 0], [0, 1], [1, 1]], "k": [[1, 0], [0, 1], [1, 1]], "v": [[1, 0], [0, 1], [1, 1]],
      "mask": {"causal": true, "window": 1}})");
  const std::string text = narrate(t, 0);
  EXPECT_LACKS(text, "|0 − 1| = 1 > W = 1");
  EXPECT_HAS(text, "window: key 1 > p = 0, and a causal window only looks back");
  EXPECT_HAS(text, "(the causal window keeps key 0 only)");
  EXPECT_HAS(narrate(t, 2), "window: 2 − 0 = 2 > W = 1 (the causal window keeps keys 1..2)");
  // Lower-right with more queries than keys: query 0 sits at position 0 + 2 − 3 = −1.
  const AttentionTrace lr =
      json_trace(R"({"query_tokens": ["a", "b", "c"], "key_tokens": ["x", "y"],
      "q": [[1, 0], [0, 1], [1, 1]], "k": [[1, 0], [0, 1]], "v": [[1, 0], [0, 1]],
      "mask": {"causal": "lower-right", "window": 0}})");
  const std::string empty = narrate(lr, 0);
  EXPECT_LACKS(empty, "..-");
  EXPECT_HAS(empty, "i.e. no key");
}

}  // namespace
}  // namespace attn
