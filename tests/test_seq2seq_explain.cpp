// The written-out attention step: its numbers are the trace's, and the trace's scores match a
// plain-loop recomputation from the parameters (for every score function).
#include <gtest/gtest.h>

#include <cmath>

#include "seq2seq/explain_step.h"
#include "seq2seq/trainer.h"

namespace attn::s2s {
namespace {

// The number after the last " = " of a line.
double last_number(const std::string& line) {
  return std::stod(line.substr(line.rfind(" = ") + 3));
}

// e_tj from the parameters with plain loops, given the query and annotation the trace holds.
double loop_score(const Model& m, const Mat<float>& q, const Mat<float>& h) {
  const int H = m.config.hidden;
  const Params<float>& p = m.params;
  double e = 0;
  switch (m.config.score) {
    case Score::kDot:
      for (int k = 0; k < H; ++k) e += double(q(0, k)) * h(0, k);
      return e;
    case Score::kGeneral:
    case Score::kLocalP:
    case Score::kLocalM:
      for (int a = 0; a < H; ++a)
        for (int b = 0; b < H; ++b) e += double(q(0, a)) * p.att_g(a, b) * h(0, b);
      return e;
    default:
      for (int k = 0; k < H; ++k) {
        double pre = 0;
        for (int a = 0; a < H; ++a)
          pre += double(q(0, a)) * p.att_w(a, k) + double(h(0, a)) * p.att_u(a, k);
        e += p.att_v(0, k) * std::tanh(pre);
      }
      return e;
  }
}

TEST(Seq2SeqExplain, NumbersAgreeWithTheTraceAndTheLoops) {
  for (Score s : {Score::kBahdanau, Score::kDot, Score::kGeneral, Score::kConcat, Score::kLocalP,
                  Score::kLocalM}) {
    const Model m = new_date_model(s, 6, 4, 2, 11);
    ForwardCache<float> fc;
    std::string out, error;
    const std::string input = "tuesday 3 may 1977";
    ASSERT_TRUE(translate(m, input, fc, out, error)) << error;
    for (int t : {0, 3}) {
      const auto& st = fc.steps[static_cast<size_t>(t)];
      for (int j = 0; j < fc.src_len; ++j) {
        EXPECT_NEAR(loop_score(m, st.query, fc.hs[static_cast<size_t>(j)]), st.e(0, j), 1e-4)
            << score_name(s) << " t=" << t << " j=" << j;
        const auto lines = explain_attention_step(m, fc, t, j, 3, 6);
        ASSERT_GE(lines.size(), 4u);
        if (st.valid(0, j) == 0.0f) {
          EXPECT_NE(lines.back().find("outside the window"), std::string::npos) << lines.back();
          continue;
        }
        bool found_e = false;
        for (const auto& line : lines)
          if (line.rfind("e_tj = ", 0) == 0) {
            EXPECT_NEAR(last_number(line), st.e(0, j), 1e-4) << line;
            found_e = true;
          }
        EXPECT_TRUE(found_e) << score_name(s);
        const std::string& weight = lines[lines.size() - 2];
        EXPECT_NEAR(last_number(weight), st.alpha(0, j), 1e-5) << weight;
      }
    }
  }
}

TEST(Seq2SeqExplain, NoAttentionSaysSo) {
  const Model m = new_date_model(Score::kNone, 6, 4, 2, 11);
  ForwardCache<float> fc;
  std::string out, error;
  ASSERT_TRUE(translate(m, "1.2.99", fc, out, error));
  const auto lines = explain_attention_step(m, fc, 0, 2);
  EXPECT_NE(lines.back().find("no attention"), std::string::npos);
}

}  // namespace
}  // namespace attn::s2s
