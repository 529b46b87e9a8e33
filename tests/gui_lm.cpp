// The language-model window headless: the state model (loading, the sentence, errors, the next
// tokens at a temperature, a head as a scenario), every tab drawn for many frames at two font
// sizes, a click on a thumbnail opening that head in the stepper with its real Q, K and V, and an
// edit there recomputing that head only.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <stdexcept>

#include "gui/gui_setup.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "lm/generate.h"
#include "lm/rollout.h"
#include "lm_fixture.h"
#include "reference.h"
#include "small_llama.h"

namespace attn {
namespace {

const char* kText = "the teacher shows the heads. the teacher shows the heads.";

class LmGui : public test::HeadlessApp {
 protected:
  static void SetUpTestSuite() {
    test::TestModelSpec spec;
    spec.n_layer = 3;
    spec.n_head = 4;
    spec.n_embd = 16;
    folder = new std::string(test::temp_path("gui-lm-model"));
    test::write_test_model(test::make_test_model(spec), *folder);
  }
  static void TearDownTestSuite() { delete folder; }

  void open_model() { open_lm(*folder, kText); }

  static std::string* folder;
};
std::string* LmGui::folder;

TEST_F(LmGui, SessionRunsTheSentenceAndReportsBadInput) {
  LmSession s;
  EXPECT_FALSE(s.open(test::temp_path("no-such-model")));
  EXPECT_NE(s.error().find("neither a folder nor the name of a shipped language model"),
            std::string::npos)
      << s.error();
  ASSERT_TRUE(s.open(*folder));
  s.set_text(kText);
  s.wait();
  ASSERT_TRUE(s.run()) << s.error();
  const LmRun& r = *s.run();
  EXPECT_EQ(r.tokens.size(), r.ids.size());
  EXPECT_EQ(r.scores.size(), 12u);
  EXPECT_GE(r.scores[0].induction_queries, 1);  // the sentence repeats
  const uint64_t serial = s.serial();

  s.temperature = 0.5;
  s.top_k = 4;
  const auto top = s.next_tokens();
  ASSERT_EQ(top.size(), 4u);
  EXPECT_GE(top[0].second, top[3].second);

  s.set_text("");  // refused, the last run stays
  EXPECT_NE(s.error().find("at least one character"), std::string::npos);
  s.set_text("ok \xff");
  EXPECT_NE(s.error().find("not valid UTF-8"), std::string::npos);
  s.set_text(std::string(300, 'z'));
  EXPECT_NE(s.error().find("reads at most 48"), std::string::npos) << s.error();
  s.wait();
  EXPECT_EQ(s.serial(), serial);
  s.set_text("the heads");
  s.wait();
  EXPECT_EQ(s.error(), "");
  EXPECT_GT(s.serial(), serial);

  int l = -1, h = -1;
  EXPECT_TRUE(LmSession::parse_origin(s.origin_tag(2, 3), l, h));
  EXPECT_EQ(l, 2);
  EXPECT_EQ(h, 3);
  EXPECT_FALSE(LmSession::parse_origin("fear-is-the", l, h));
  const Scenario sc = s.head_scenario(2, 3);
  EXPECT_EQ(validate_scenario(sc), "");
  EXPECT_EQ(sc.qkv.q[0].rows(), static_cast<Eigen::Index>(s.run()->ids.size()));
  EXPECT_EQ(sc.qkv.q[0].cols(), 4);  // d_k = 16 / 4
}

// Issue 28: a forward pass that overflows float32 is an error naming where, and a run beyond the
// forward pass's memory limit is refused before a worker starts; neither shows a number.
// The tabs' views (rollout, block path, score parts) are computed on the session's workers: null
// until the run's first value is in, then the value asked for — equal to computing it directly —
// with the last one of the same run shown while another is computed; a new run starts afresh.
TEST_F(LmGui, TheTabsViewsAreComputedOffTheUiThread) {
  LmSession s;
  ASSERT_TRUE(s.open(*folder));
  s.set_text(kText);
  s.wait();
  ASSERT_TRUE(s.run()) << s.error();
  const LmRun& r = *s.run();
  const int T = static_cast<int>(r.ids.size());
  EXPECT_EQ(s.rollout(T - 1), nullptr);  // nothing of this run yet: it computes
  EXPECT_TRUE(s.deriving() || s.poll());
  s.wait();
  EXPECT_FALSE(s.deriving());
  const std::vector<std::vector<double>>* rows = s.rollout(T - 1);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(*rows, lm::rollout_of_token(r.model->config, r.acts, T - 1));
  // Another token: the last rows stay meanwhile, then the new ones.
  EXPECT_EQ(s.rollout(2), rows);
  s.wait();
  rows = s.rollout(2);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(*rows, lm::rollout_of_token(r.model->config, r.acts, 2));
  // The Block tab's path and the Circuit tab's parts likewise.
  EXPECT_EQ(s.block_path(1, 2, 3, 1.0), nullptr);
  s.wait();
  const lm::BlockPath* path = s.block_path(1, 2, 3, 1.0);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->layer, 1);
  EXPECT_EQ(path->head, 2);
  EXPECT_EQ(path->position, 3);
  EXPECT_EQ(s.circuit(T - 1, 1, 6), nullptr);
  s.wait();
  const CircuitView* k = s.circuit(T - 1, 1, 6);
  ASSERT_NE(k, nullptr);
  const std::vector<lm::ScorePart> parts =
      lm::key_score_parts(*r.model, r.acts, 1, 2, T - 1, k->winner);
  ASSERT_EQ(k->winner_parts.size(), parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    EXPECT_EQ(k->winner_parts[i].value, parts[i].value) << parts[i].name;
  // A new run: nothing of it until computed (the old run's rows would point at other tokens).
  s.set_text("the heads");
  s.wait();
  EXPECT_EQ(s.rollout(0), nullptr);
  s.wait();
  ASSERT_NE(s.rollout(0), nullptr);
  EXPECT_EQ(s.rollout(0)->size(), 3u);
}

// A view whose computation throws is an error once, not a computation started every frame; the
// next question computes.
TEST(RunDerived, AFailedQuestionIsNotAskedAgain) {
  RunDerived<int, int> d;
  std::string failure;
  int calls = 0;
  auto throwing = [&calls]() -> int {
    ++calls;
    throw std::runtime_error("out of memory");
  };
  EXPECT_EQ(d.get(1, 7, throwing), nullptr);
  d.wait();
  EXPECT_TRUE(d.poll(failure));
  EXPECT_EQ(failure, "out of memory");
  EXPECT_EQ(d.get(1, 7, throwing), nullptr);
  EXPECT_FALSE(d.busy());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(d.get(1, 8, [] { return 64; }), nullptr);
  d.wait();
  failure.clear();
  EXPECT_TRUE(d.poll(failure));
  EXPECT_EQ(failure, "");
  ASSERT_NE(d.get(1, 8, [] { return 0; }), nullptr);
  EXPECT_EQ(*d.get(1, 8, [] { return 0; }), 64);
  // Another run: the old value is not shown for it.
  EXPECT_EQ(d.get(2, 8, [] { return 65; }), nullptr);
}

TEST_F(LmGui, OverflowingAndTooLargeRunsAreErrorsNotNumbers) {
  test::TestModelSpec spec;
  test::TestModel m = test::make_test_model(spec);
  float biggest = 0;
  for (float w : m.w("h.0.attn.c_attn.weight")) biggest = std::max(biggest, std::fabs(w));
  for (float& w : m.tensors.at("h.0.attn.c_attn.weight").second)
    w = static_cast<float>(w * (0.999 * FLT_MAX / biggest));
  const std::string huge = test::temp_path("gui-lm-huge-weights");
  test::write_test_model(m, huge);
  LmSession s;
  ASSERT_TRUE(s.open(huge));
  s.set_text("the teacher");
  s.wait();
  EXPECT_FALSE(s.run());
  EXPECT_NE(s.error().find("layer 0, attention c_attn output"), std::string::npos) << s.error();
  EXPECT_NE(s.error().find("overflows float32"), std::string::npos) << s.error();
  EXPECT_NE(s.take_failure(), "");

  spec.n_layer = 2;
  spec.n_head = 2;
  spec.n_embd = 4;
  spec.n_positions = 1 << 20;
  spec.n_merges = 0;
  spec.dtype = "F16";
  const std::string long_context = test::temp_path("gui-lm-long-context");
  test::write_test_model(test::make_test_model(spec), long_context);
  LmSession t;
  ASSERT_TRUE(t.open(long_context));
  t.wait();
  t.set_text(std::string(30000, 'a'));
  EXPECT_FALSE(t.busy());  // refused before a worker starts
  EXPECT_NE(t.error().find("too large"), std::string::npos) << t.error();
  EXPECT_NE(t.error().find("1610612736 bytes"), std::string::npos) << t.error();
  t.wait();
  EXPECT_FALSE(t.run() && t.run()->ids.size() > 100);
}

// A tab asked for (it shows on the tab bar's next frame), and a tab that asks for its view as it
// is drawn (the Block tab's path), make the window busy from that frame on: the app draws the
// frames that bring the view, and a screenshot or a test that waits for the window's work does
// not stop before it arrives (the lesson-step audit and the layout test saw the Block tab's path
// arrive on the frame they checked, in parallel test runs).
TEST_F(LmGui, ATabAskingForItsViewIsWorkFromTheFrameItAsks) {
  open_model();
  LmPanel& p = *ui.lm.state;
  frames(2);
  ASSERT_EQ(p.shown_tab, "heads");
  EXPECT_FALSE(ui.working());
  p.select_tab = "block";
  frames(1);  // the tab bar shows it on its next frame: until then the window has work to draw
  EXPECT_TRUE(ui.working());
  frames(1);
  ASSERT_EQ(p.shown_tab, "block");
  p.session.wait();
  frames(2);
  EXPECT_FALSE(ui.working());
  for (int layer : {1, 2, 0}) {  // each a path the tab asks for as it is drawn
    p.session.select(layer, 1);
    frames(1);
    EXPECT_TRUE(!p.session.deriving() || ui.working()) << "layer " << layer;
    p.session.wait();
    frames(2);
    EXPECT_FALSE(ui.working());
  }
}

TEST_F(LmGui, EveryTabDrawsAtTwoFontSizes) {
  open_model();
  LmPanel& p = *ui.lm.state;
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    load_fonts(ui, px);
    for (const char* tab : {"heads", "next", "roles", "kv", "rollout"}) {
      p.select_tab = tab;
      frames(3);
      EXPECT_EQ(p.shown_tab, tab);
    }
    p.select_tab = "heads";
    p.all_heads = true;
    p.pinned_token = 3;
    frames(2);
    p.pinned_is_key = true;
    frames(2);
    p.all_heads = false;
    p.pinned_token = -1;
    p.select_tab = "roles";
    for (int role = 0; role < 4; ++role) {
      p.role = role;
      frames(2);
    }
  }
  // Every thumbnail was drawn as a heatmap.
  EXPECT_TRUE(ui.views["lm-thumb-2-3"].drawn);
  // The rollout tab follows the last token, then any token chosen; one row per layer, each a
  // distribution over the tokens up to it.
  p.select_tab = "rollout";
  frames(2);
  const int T = static_cast<int>(p.session.run()->ids.size());
  EXPECT_EQ(p.rollout_token, T - 1);
  // The rows are computed off the UI thread: the session has them once its work is done.
  p.session.wait();
  const std::vector<std::vector<double>>* rows = p.session.rollout(p.rollout_token);
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(static_cast<int>(rows->size()), p.session.model()->config.n_layer);
  p.rollout_token = 1;
  frames(2);
  p.session.wait();
  rows = p.session.rollout(1);
  ASSERT_NE(rows, nullptr);
  for (const std::vector<double>& row : *rows) {
    double sum = 0;
    for (double w : row) sum += w;
    EXPECT_NEAR(sum, 1.0, 1e-9);
    EXPECT_EQ(row[2], 0.0);  // causal: nothing from after token 1
  }
}

// A Llama-family folder (grouped-query, a sliding window): every tab draws, the circuit tab with
// its two heads' maps (the score split of a RoPE model), the stepper opens a head with its rope
// step.
TEST_F(LmGui, ATodaysModelDrawsEveryTabAndOpensARopeHead) {
  open_lm(test::write_small_llama("gui-lm-mistral", kText, LmArch::kMistral, 5, 6), kText);
  LmPanel& p = *ui.lm.state;
  frames(3);
  ASSERT_NE(p.session.run(), nullptr);
  EXPECT_EQ(p.session.model()->config.kv_heads(), 2);
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    load_fonts(ui, px);
    for (const char* tab : {"heads", "next", "roles", "circuit", "kv", "rollout"}) {
      p.select_tab = tab;
      frames(3);
      EXPECT_EQ(p.shown_tab, tab);
    }
  }
  EXPECT_TRUE(ui.views["lm-thumb-1-5"].drawn);
  p.select_tab = "circuit";
  frames(2);
  p.session.wait();
  frames(3);
  EXPECT_TRUE(ui.views["lm-circuit-ind"].drawn);
  EXPECT_TRUE(ui.views["lm-circuit-prev"].drawn);
  open_lm_head_in_stepper(ui, 1, 5);
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kRope), nullptr);
  EXPECT_NE(state.trace().name.find("K/V head 1 of 2"), std::string::npos) << state.trace().name;
  // Editing a query: Q is no longer the rotation of the model's, and the rope step goes.
  ASSERT_TRUE(state.set_value(Tensor::kQ, 0, 2, 3, 7.5f, false));
  frames(2);
  EXPECT_EQ(state.trace().find(StageId::kRope), nullptr);
  ASSERT_NE(state.trace().find(StageId::kWeights), nullptr);
}

// Live generation: tokens added one at a time, each the greedy choice of a whole forward pass on
// the sentence so far — the same tokens the KV-cache generator gives — and each run so its row
// is in the views; Stop ends it, typing clears it.
TEST_F(LmGui, GenerateAddsTheGreedyTokensOneAtATime) {
  open_model();
  LmPanel& p = *ui.lm.state;
  LmSession& s = p.session;
  s.wait();
  const std::vector<int> prompt = s.run()->ids;
  ASSERT_TRUE(s.start_generating(6, false));
  EXPECT_TRUE(s.generating());
  frames(2);  // the row draws while generating
  s.wait();
  EXPECT_FALSE(s.generating());
  const std::vector<int>& made = s.generated_ids();
  ASSERT_FALSE(made.empty());
  // The run on screen is the prompt and every generated token.
  std::vector<int> all = prompt;
  all.insert(all.end(), made.begin(), made.end());
  EXPECT_EQ(s.run()->ids, all);
  // The KV-cache generator, fed the prompt, chooses the same tokens.
  lm::Generator g(*s.model());
  ASSERT_EQ(g.feed(prompt), "");
  std::mt19937_64 rng(0);
  for (size_t i = 0; i < made.size(); ++i) {
    const int next = lm::choose_next_token(g.logits(), 0, 0, rng);
    ASSERT_EQ(next, made[i]) << "token " << i;
    ASSERT_EQ(g.feed({next}), "");
  }
  // Continue adds more; Stop ends a generation at once; typing clears what was generated.
  const size_t before = made.size();
  ASSERT_TRUE(s.start_generating(3, true));
  s.stop_generating();
  s.wait();
  EXPECT_FALSE(s.generating());
  EXPECT_LE(s.generated_ids().size(), before + 1);
  p.select_tab = "kv";
  frames(2);
  s.set_text(kText);
  EXPECT_TRUE(s.generated_ids().empty());
  s.wait();
  EXPECT_EQ(s.run()->ids.size(), prompt.size());
}

TEST_F(LmGui, ClickingAThumbnailOpensThatHeadInTheStepper) {
  open_model();
  frames(3);
  const HeatmapViewport& v = ui.views["lm-thumb-1-2"];
  ASSERT_TRUE(v.drawn);
  const ImVec2 c{v.origin.x + v.cell_w * v.cols / 2, v.origin.y + v.cell_h * v.rows / 2};
  click(c);
  state.wait_for_trace();
  frames(2);
  int l = -1, h = -1;
  ASSERT_TRUE(LmSession::parse_origin(state.origin(), l, h)) << state.origin();
  EXPECT_EQ(l, 1);
  EXPECT_EQ(h, 2);
  EXPECT_FALSE(ui.lm.open);
  EXPECT_EQ(state.current_stage().id, StageId::kWeights);
  // The stepper's weights are the model's own for that head.
  const LmRun& r = *ui.lm.state->session.run();
  const int T = r.acts.T;
  const Matrix& w = state.trace().head(StageId::kWeights, 0);
  ASSERT_EQ(w.rows(), T);
  const float* att = r.acts.att_at(r.model->config, 1, 0, 2);
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) ASSERT_NEAR(w(i, j), att[i * T + j], 1e-5) << i << "," << j;

  // An edit recomputes this head only; the model's run is untouched.
  const float before = att[3 * T + 1];
  const Matrix old_weights = w;
  ASSERT_TRUE(state.set_value(Tensor::kQ, 0, 3, 0, 5.0f));
  state.wait_for_trace();
  frames(2);
  EXPECT_GT(
      (state.trace().head(StageId::kWeights, 0).row(3) - old_weights.row(3)).cwiseAbs().maxCoeff(),
      1e-4);
  EXPECT_EQ(ui.lm.state->session.run()->acts.att_at(r.model->config, 1, 0, 2)[3 * T + 1], before);

  // "Back to the model" from the stepper's note.
  ui.lm.open = true;
  frames(2);
  EXPECT_EQ(ui.lm.state->session.layer, 1);
  EXPECT_EQ(ui.lm.state->session.head, 2);
}

TEST_F(LmGui, BadOptionsNameTheFlagOrFile) {
  std::string error;
  GuiOptions o;
  o.model = test::temp_path("missing");
  EXPECT_FALSE(setup_lm_from_options(ui, o, error));
  EXPECT_EQ(error.rfind("--model: ", 0), 0u) << error;
  o.model = *folder;
  o.layer = 3;
  EXPECT_FALSE(setup_lm_from_options(ui, o, error));
  EXPECT_NE(error.find("--layer: 3"), std::string::npos) << error;
  o.layer = 0;
  o.model_head = 4;
  EXPECT_FALSE(setup_lm_from_options(ui, o, error));
  EXPECT_NE(error.find("--head: 4"), std::string::npos) << error;
  const std::string broken = test::temp_path("broken-model");
  test::write_test_model(test::make_test_model({}), broken);
  std::remove((broken + "/merges.txt").c_str());
  o.model = broken;
  o.model_head = 0;
  EXPECT_FALSE(setup_lm_from_options(ui, o, error));
  EXPECT_NE(error.find("merges.txt"), std::string::npos) << error;
}

// BertViz's hover: with the pointer on a query token only that token's lines are drawn, to the
// keys it gives at least 2% (its 12 strongest), and the tokens they do not reach are faded; on
// a key token, only the lines into it. Moving away brings every line back.
TEST_F(LmGui, HoveringATokenIsolatesItsLines) {
  open_model();
  LmPanel& p = *ui.lm.state;
  p.select_tab = "heads";
  frames(4);
  ASSERT_EQ(p.shown_tab, "heads");
  const LmRun& r = *p.session.run();
  const int T = static_cast<int>(r.ids.size());
  const lm::Config& c = r.model->config;
  const int layer = p.session.layer, head = p.session.head;
  const float* w = r.acts.att_at(c, layer, 0, head);
  ASSERT_GT(T, 6);
  const size_t all_lines = p.head_view.lines.size();
  EXPECT_TRUE(p.head_view.faded_queries.empty());
  EXPECT_TRUE(p.head_view.faded_keys.empty());

  // The keys query t's lines go to: weights of at least 2%, the 12 largest.
  auto expected_keys = [&](int t) {
    std::vector<std::pair<float, int>> row;
    for (int u = 0; u <= t; ++u)
      if (w[static_cast<size_t>(t) * T + u] >= 0.02f)
        row.push_back({w[static_cast<size_t>(t) * T + u], u});
    std::sort(row.rbegin(), row.rend());
    if (row.size() > 12) row.resize(12);
    std::vector<int> keys;
    for (auto& [a, u] : row) keys.push_back(u);
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  ImGuiIO& io = ImGui::GetIO();
  const int t = 5;
  const auto& v = p.head_view;
  io.MousePos = {v.queries_x1 - 4, v.origin.y + (t + 0.5f) * v.row_h};
  frames(3);
  EXPECT_EQ(p.hover_token, t);
  EXPECT_FALSE(p.hover_is_key);
  std::vector<int> keys;
  for (const auto& l : p.head_view.lines) {
    EXPECT_EQ(l[0], head);
    EXPECT_EQ(l[1], t);
    keys.push_back(l[2]);
  }
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, expected_keys(t));
  EXPECT_LT(p.head_view.lines.size(), all_lines);
  // Every other query is faded; of the keys, those no line reaches (the query itself stays).
  EXPECT_EQ(static_cast<int>(p.head_view.faded_queries.size()), T - 1);
  for (int q : p.head_view.faded_queries) EXPECT_NE(q, t);
  for (int u = 0; u < T; ++u) {
    const bool reached = std::find(keys.begin(), keys.end(), u) != keys.end();
    const bool faded = std::find(p.head_view.faded_keys.begin(), p.head_view.faded_keys.end(), u) !=
                       p.head_view.faded_keys.end();
    EXPECT_EQ(faded, !reached) << "key " << u;
  }

  // A key token: only the lines into it, from the queries that give it 2% or more.
  const int u = 2;
  io.MousePos = {v.keys_x0 + 4, v.origin.y + (u + 0.5f) * v.row_h};
  frames(3);
  EXPECT_EQ(p.hover_token, u);
  EXPECT_TRUE(p.hover_is_key);
  ASSERT_FALSE(p.head_view.lines.empty());
  for (const auto& l : p.head_view.lines) {
    EXPECT_EQ(l[2], u);
    EXPECT_GE(w[static_cast<size_t>(l[1]) * T + u], 0.02f);
  }

  io.MousePos = {-FLT_MAX, -FLT_MAX};
  frames(3);
  EXPECT_EQ(p.hover_token, -1);
  EXPECT_EQ(p.head_view.lines.size(), all_lines);
  EXPECT_TRUE(p.head_view.faded_keys.empty());
}

// The shipped induction model opens on what it learned from — random letters in which a segment
// comes twice — not an English sentence it has no tokens for; a model of text opens on English,
// and a sentence the user typed stays when another model opens.
TEST_F(LmGui, TheInductionModelStartsOnRepeatedRandomLetters) {
  open_lm("induction");
  LmPanel& p = *ui.lm.state;
  LmSession& s = p.session;
  EXPECT_TRUE(s.text_is_default());
  const std::string text = s.text();
  // Letters a–z, one per word, as the training sequences.
  std::vector<char> letters;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ') continue;
    ASSERT_TRUE(text[i] >= 'a' && text[i] <= 'z') << text;
    ASSERT_TRUE(i + 1 == text.size() || text[i + 1] == ' ') << text;
    letters.push_back(text[i]);
  }
  EXPECT_GE(letters.size(), 20u) << text;
  EXPECT_LE(static_cast<int>(letters.size()), s.model()->config.n_positions);
  // The longest run of letters that occurs twice.
  size_t longest = 0;
  for (size_t a = 0; a < letters.size(); ++a)
    for (size_t b = a + 1; b < letters.size(); ++b) {
      size_t n = 0;
      while (b + n < letters.size() && letters[a + n] == letters[b + n]) ++n;
      longest = std::max(longest, std::min(n, b - a));
    }
  EXPECT_GE(longest, 6u) << text;
  // One token per letter, and the run is of this text.
  ASSERT_TRUE(s.run());
  EXPECT_EQ(s.run()->ids.size(), letters.size());
  EXPECT_EQ(s.run()->text, text);
  // The window's sentence field shows it.
  frames(2);
  EXPECT_EQ(p.text_buffer, text);

  // A model of text: English, until the user types.
  ASSERT_TRUE(s.open(*folder));
  s.wait();
  EXPECT_EQ(s.text(), kDefaultLmText);
  frames(2);
  EXPECT_EQ(p.text_buffer, kDefaultLmText);
  s.set_text("a b c a b c");
  ASSERT_TRUE(s.open("induction"));
  s.wait();
  EXPECT_EQ(s.text(), "a b c a b c");
  EXPECT_FALSE(s.text_is_default());
}

// Opened with nothing chosen, the window opens the shipped English model on its first sentence.
TEST_F(LmGui, TheWindowWithNoModelOpensTheEnglishModel) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  ui.lm.open = true;
  frames(3);
  ASSERT_TRUE(ui.lm.state);
  LmSession& session = ui.lm.state->session;
  session.wait();
  frames(2);
  ASSERT_TRUE(session.has_model());
  EXPECT_EQ(session.model()->name, "austen");
  EXPECT_EQ(ui.state.message().rfind("Opened austen: 6 layers", 0), 0u) << ui.state.message();
  EXPECT_EQ(session.text(), kAustenLmText);
  ASSERT_TRUE(session.run());
  EXPECT_EQ(session.run()->ids, session.model()->tokenizer.encode(kAustenLmText));
}

// A lesson step chooses a head of the model it opens (austen's head 5) while the last model's run
// (4 heads) is still on screen: the head view draws the last run's head within its range until
// the new one is in (it read past its heads: lesson 14 after 13 crashed).
TEST_F(LmGui, AHeadOfTheModelOnItsWayIsNotLookedUpInTheLastOne) {
  open_model();
  LmPanel& p = *ui.lm.state;
  LmSession& s = p.session;
  ui.lm.open = true;
  p.select_tab = "heads";
  p.all_heads = false;
  frames(3);
  ASSERT_EQ(s.model()->config.n_head, 4);
  ASSERT_TRUE(s.open("austen"));
  s.select(5, 5);
  for (int i = 0; i < 3 && s.busy(); ++i) frame();
  s.wait();
  frames(3);
  EXPECT_EQ(s.model()->name, "austen");
  EXPECT_EQ(s.layer, 5);
  EXPECT_EQ(s.head, 5);
}

TEST_F(LmGui, FileOpenModelFolderLoadsIt) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  frames(2);
  ui.dialogs.path = PathDialog::kOpenModel;
  ui.dialogs.buffer = *folder;
  frames(3);
  ImGuiIO& io = ImGui::GetIO();  // Enter confirms the path field, as the dialog's OK does
  io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Enter)] = true;
  frame();
  io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Enter)] = false;
  frame();
  ASSERT_TRUE(ui.lm.state);
  ui.lm.state->session.wait();
  frames(3);
  EXPECT_TRUE(ui.lm.open);
  ASSERT_TRUE(ui.lm.state->session.has_model());
  EXPECT_TRUE(ui.lm.state->session.run());
  EXPECT_EQ(ui.dialogs.path, PathDialog::kNone);
  // A folder that is not a model: the dialog stays with the reason.
  ui.dialogs.path = PathDialog::kOpenModel;
  ui.dialogs.buffer = test::temp_path("nothing-here");
  frames(3);
  io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Enter)] = true;
  frame();
  io.KeysDown[ImGui::GetKeyIndex(ImGuiKey_Enter)] = false;
  frames(2);
  EXPECT_EQ(ui.dialogs.path, PathDialog::kOpenModel);
  EXPECT_NE(ui.dialogs.error.find("neither a folder nor the name of a shipped language model"),
            std::string::npos)
      << ui.dialogs.error;
}

// The Shipped models list says what each model is — its model card's first paragraph under its
// name, so a teacher can tell English from letters and story grammar — and a click anywhere on a
// model's block opens it.
TEST_F(LmGui, TheShippedModelsListSaysWhatEachModelIsAndOpensTheOneClicked) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  ui.lm.open = true;
  frames(3);
  ASSERT_TRUE(ui.lm.state);
  LmPanel& p = *ui.lm.state;
  p.session.wait();
  frames(2);
  ASSERT_EQ(p.session.model()->name, "austen");
  ImGuiIO& io = ImGui::GetIO();
  auto click = [&](ImVec2 at) {
    io.MousePos = at;
    frame();
    io.MouseDown[0] = true;
    frame();
    io.MouseDown[0] = false;
    frames(2);
  };
  auto centre = [](ImVec2 a, ImVec2 b) { return ImVec2((a.x + b.x) / 2, (a.y + b.y) / 2); };
  ASSERT_GT(p.shipped_button_max.x, p.shipped_button_min.x);
  click(centre(p.shipped_button_min, p.shipped_button_max));
  const std::vector<std::string> shipped = lm::shipped_models();
  ASSERT_EQ(p.shipped_drawn.size(), shipped.size());
  // What each card says first (assets/models/lm/NAME/README.md).
  const std::map<std::string, std::string> says = {{"austen", "English from Jane Austen"},
                                                   {"induction", "Random letters, not English"},
                                                   {"induction-llama", "Random letters, not"},
                                                   {"stories", "story grammar, not open English"},
                                                   {"stories-llama", "not open English"}};
  for (size_t i = 0; i < shipped.size(); ++i) {
    const auto& d = p.shipped_drawn[i];
    EXPECT_EQ(d.name, shipped[i]);
    const auto it = says.find(d.name);
    ASSERT_NE(it, says.end()) << d.name << " is shipped but has no expected description here";
    EXPECT_NE(d.summary.find(it->second), std::string::npos) << d.name << ": " << d.summary;
    EXPECT_EQ(d.summary.find('#'), std::string::npos) << d.summary;
    // Each block holds its name and its summary (more than two lines) and comes after the last.
    EXPECT_GT(d.max.y - d.min.y, 2 * ImGui::GetTextLineHeight()) << d.name;
    if (i > 0) {
      EXPECT_GE(d.min.y, p.shipped_drawn[i - 1].max.y) << d.name;
    }
  }
  // A click on the summary's last line, not the name, opens the model.
  const auto stories = std::find_if(p.shipped_drawn.begin(), p.shipped_drawn.end(),
                                    [](const auto& d) { return d.name == "stories"; });
  ASSERT_NE(stories, p.shipped_drawn.end());
  const ImVec2 where(stories->min.x + 40, stories->max.y - ImGui::GetTextLineHeight() / 2);
  ASSERT_LT(where.y, io.DisplaySize.y) << "the item is below the screen";
  click(where);
  p.session.wait();
  frames(2);
  EXPECT_EQ(p.session.model()->name, "stories");
  EXPECT_TRUE(p.shipped_drawn.empty()) << "the list closed";
}

}  // namespace
}  // namespace attn
