// Undo and redo kept as differences (gui/scenario_history.h): every state comes back bit for bit
// against whole copies the test keeps itself, through value edits, shape changes, projections
// and gestures; a one-value edit of a long scenario keeps one matrix; old steps go past the
// budget.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "attention/scenario.h"
#include "gui/model/scenario_history.h"
#include "io/examples.h"
#include "io/scenario_json.h"

namespace attn {
namespace {

Scenario example(const char* name) {
  std::string error;
  auto s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  return s ? *s : Scenario{};
}

bool same_bits(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(float) * a.size()) == 0);
}

bool same_stack(const HeadStack& a, const HeadStack& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

// Everything the JSON says, and every matrix bit for bit (the JSON's decimals would not tell
// −0 from 0).
void expect_identical(const Scenario& a, const Scenario& b, const std::string& where) {
  EXPECT_EQ(scenario_to_json(a), scenario_to_json(b)) << where;
  EXPECT_TRUE(same_stack(a.qkv.q, b.qkv.q) && same_stack(a.qkv.k, b.qkv.k) &&
              same_stack(a.qkv.v, b.qkv.v))
      << where;
  const ProjectionSpec &p = a.projection, &r = b.projection;
  EXPECT_TRUE(same_bits(p.x, r.x) && same_bits(p.x_kv, r.x_kv) && same_stack(p.w_q, r.w_q) &&
              same_stack(p.w_k, r.w_k) && same_stack(p.w_v, r.w_v) && same_bits(p.w_o, r.w_o))
      << where;
}

// The saved state as a position in the history: undo and redo count towards and away from it;
// an edit after undoing past it, or its step trimmed past kMaxSteps, leaves it unreachable.
TEST(ScenarioHistory, KnowsWhenUndoAndRedoReturnToTheSavedState) {
  ScenarioHistory h;
  Scenario cur = example("fear-is-the");
  EXPECT_TRUE(h.at_saved());  // a fresh history starts at what was opened
  auto edit = [&](float v) {
    Scenario before = cur;
    cur.qkv.q[0](0, 0) = v;
    h.record(std::move(before), cur);
  };
  edit(0.1f);
  edit(0.2f);
  EXPECT_FALSE(h.at_saved());
  h.mark_saved();  // saved at 0.2
  edit(0.3f);
  EXPECT_FALSE(h.at_saved());
  ASSERT_TRUE(h.undo(cur));
  EXPECT_TRUE(h.at_saved());
  ASSERT_TRUE(h.undo(cur));
  EXPECT_FALSE(h.at_saved());
  ASSERT_TRUE(h.redo(cur));
  EXPECT_TRUE(h.at_saved());
  EXPECT_FLOAT_EQ(cur.qkv.q[0](0, 0), 0.2f);
  ASSERT_TRUE(h.undo(cur));
  edit(0.25f);  // the redo steps, the saved state among them, are gone
  ASSERT_TRUE(h.undo(cur));
  EXPECT_FALSE(h.at_saved());
  while (h.redo(cur)) EXPECT_FALSE(h.at_saved());

  // A gesture extending the saved state's step changes what that state was.
  h.clear();
  h.mark_saved();
  Scenario before = cur;
  cur.qkv.q[0](0, 0) = 0.5f;
  h.extend(before, cur);  // the first change of a drag records a step
  EXPECT_FALSE(h.at_saved());
  ASSERT_TRUE(h.undo(cur));
  EXPECT_TRUE(h.at_saved());

  // Trimmed: the saved state was before the oldest step kept.
  h.clear();
  h.mark_saved();
  for (size_t i = 0; i < ScenarioHistory::kMaxSteps + 1; ++i) edit(static_cast<float>(i));
  while (h.undo(cur)) {
  }
  EXPECT_FALSE(h.at_saved());
  h.forget_saved();
  EXPECT_FALSE(h.at_saved());
  h.mark_saved();
  EXPECT_TRUE(h.at_saved());
}

TEST(ScenarioHistory, EveryStateComesBackThroughUndoAndRedo) {
  std::vector<Scenario> states{example("gqa")};
  ScenarioHistory h;
  Scenario current = states[0];
  auto edit = [&](Scenario next) {
    Scenario before = current;
    h.record(std::move(before), next);
    current = next;
    states.push_back(std::move(next));
  };
  Scenario s = current;
  s.qkv.q[1](2, 0) = 0.75f;  // one value of one head
  edit(s);
  s.qkv.v[0](0, 1) = -0.0f;  // a sign only the bits show
  edit(s);
  s.options.temperature = 2.0f;  // an option, no matrix
  edit(s);
  s = example("multi-head");  // projections: X and W instead of Q, K and V
  edit(s);
  s.projection.w_q[1](0, 0) = 0.5f;
  edit(s);
  s = example("fear-is-the");  // fewer heads, fewer tokens
  edit(s);
  s.query_tokens.push_back("again");  // a token more: Q, K and V grow a row
  s.qkv.q[0].conservativeResize(4, Eigen::NoChange);
  s.qkv.q[0].row(3).setConstant(0.5f);
  for (HeadStack* st : {&s.qkv.k, &s.qkv.v}) {
    (*st)[0].conservativeResize(4, Eigen::NoChange);
    (*st)[0].row(3).setConstant(0.25f);
  }
  ASSERT_EQ(validate_scenario(s), "");
  edit(s);
  ASSERT_EQ(h.undo_depth(), states.size() - 1);

  for (size_t i = states.size() - 1; i > 0; --i) {
    ASSERT_TRUE(h.undo(current));
    expect_identical(current, states[i - 1], "undo to state " + std::to_string(i - 1));
  }
  EXPECT_FALSE(h.undo(current));
  for (size_t i = 1; i < states.size(); ++i) {
    ASSERT_TRUE(h.redo(current));
    expect_identical(current, states[i], "redo to state " + std::to_string(i));
  }
  EXPECT_FALSE(h.redo(current));
  // Half way back, then a new edit: the redo steps are gone.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h.undo(current));
  Scenario next = current;
  next.options.temperature = 0.5f;
  Scenario before = current;
  h.record(std::move(before), next);
  EXPECT_FALSE(h.can_redo());
  current = next;
  ASSERT_TRUE(h.undo(current));
  expect_identical(current, states[states.size() - 4], "undo after a new edit");
}

TEST(ScenarioHistory, AGestureUndoesToWhereItStarted) {
  const Scenario start = example("gqa");
  ScenarioHistory h;
  Scenario current = start;
  // A drag that moves through two matrices (Q of head 0, then K of head 1) and an option.
  for (int step = 0; step < 4; ++step) {
    Scenario next = current;
    next.qkv.q[0](0, 0) += 0.1f;
    if (step >= 2) next.qkv.k[1](1, 1) -= 0.2f;
    if (step == 3) next.options.temperature = 3.0f;
    if (step == 0) {
      Scenario before = current;
      h.record(std::move(before), next);
    } else {
      h.extend(current, next);
    }
    current = next;
  }
  const Scenario end = current;
  EXPECT_EQ(h.undo_depth(), 1u);
  ASSERT_TRUE(h.undo(current));
  expect_identical(current, start, "undo of the gesture");
  ASSERT_TRUE(h.redo(current));
  expect_identical(current, end, "redo of the gesture");
}

TEST(ScenarioHistory, AnEditOfALongScenarioKeepsOnlyWhatChanged) {
  // 4 heads × 4096 tokens × d 16: 3 MB of Q, K and V; one value changes one 256 KB matrix.
  Scenario s = example("gqa");
  const int n = 4096, d = 16, H = 4;
  s.query_tokens.clear();
  for (int i = 0; i < n; ++i) s.query_tokens.push_back("t" + std::to_string(i));
  s.key_tokens.clear();
  for (HeadStack* st : {&s.qkv.q, &s.qkv.k, &s.qkv.v}) {
    st->assign(H, Matrix::Constant(n, d, 0.5f));
  }
  ASSERT_EQ(validate_scenario(s), "");
  ScenarioHistory h;
  Scenario current = s;
  for (int e = 0; e < 20; ++e) {
    Scenario next = current;
    next.qkv.k[e % H](e, 3) = 1.0f + 0.125f * e;  // never the 0.5 it was
    Scenario before = current;
    h.record(std::move(before), next);
    current = std::move(next);
  }
  const size_t one = sizeof(float) * n * d;
  EXPECT_EQ(h.bytes(), 20 * one);
  for (int e = 0; e < 20; ++e) ASSERT_TRUE(h.undo(current));
  expect_identical(current, s, "twenty undos");
  EXPECT_EQ(h.bytes(), 20 * one);  // the redo steps, as small

  // Edits that change everything (new random inputs) keep the whole: past the budget the
  // oldest go, the newest stays.
  ScenarioHistory big;
  for (int e = 0; e < 40; ++e) {
    Scenario next = current;
    for (HeadStack* st : {&next.qkv.q, &next.qkv.k, &next.qkv.v})
      for (Matrix& m : *st) m.array() += 0.001f;
    Scenario before = current;
    big.record(std::move(before), next);
    current = std::move(next);
  }
  const size_t whole = 3 * H * one;
  EXPECT_LE(big.bytes(), ScenarioHistory::kMaxBytes);
  EXPECT_EQ(big.undo_depth(), ScenarioHistory::kMaxBytes / whole);
}

}  // namespace
}  // namespace attn
