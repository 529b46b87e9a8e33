// The language-model window's Block tab headless, for a GPT-2 folder and a Llama-family one: it
// draws at two font sizes and in a narrow window, follows the token, layer and head the other
// views point at, shows the last block's next tokens, and a click on its attention box opens
// that head in the stepper with the token's query row selected — on a lesson's slide too, where the
// flow is a row of chips.
#include <gtest/gtest.h>
#include <imgui.h>

#include "gui/gui_setup.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "lm_fixture.h"
#include "reference.h"
#include "small_llama.h"

namespace attn {
namespace {

const char* kText = "the teacher shows the heads. the teacher shows the heads.";

class LmBlockGui : public test::HeadlessApp {
 protected:
  void open(const std::string& folder) { open_lm(folder, kText); }
  std::string gpt2_folder() {
    test::TestModelSpec spec;
    spec.n_layer = 3;
    spec.n_head = 4;
    spec.n_embd = 16;
    const std::string dir = test::temp_path("gui-lm-block-gpt2");
    test::write_test_model(test::make_test_model(spec), dir);
    return dir;
  }
  // Grouped-query attention (6 query heads over 2 K/V heads), a window, an untied head.
  std::string llama_folder() {
    return test::write_small_llama("gui-lm-block-mistral", kText, LmArch::kMistral, 5, 6, false);
  }
  // The path the Block tab shows once the session has computed it (off the UI thread): the
  // session's, for its token, layer, head and temperature.
  const lm::BlockPath& shown_path(LmPanel& p) {
    p.session.wait();
    frame();
    LmSession& s = p.session;
    const lm::BlockPath* path = s.block_path(s.layer, s.head, s.shown_position(), s.temperature);
    EXPECT_NE(path, nullptr) << "the path was not computed";
    static const lm::BlockPath none;
    return path ? *path : none;
  }
  // Draws the Block tab at both font sizes; the path is of the session's token, layer and head.
  void draw_block_tab(LmPanel& p) {
    for (float px : {20.0f, 32.0f}) {
      ui.settings.font_px = px;
      load_fonts(ui, px);
      p.select_tab = "block";
      frames(3);
      ASSERT_EQ(p.shown_tab, "block");
      const lm::BlockPath& path = shown_path(p);
      EXPECT_GT(p.block_compare_drawn, 0);
      EXPECT_EQ(path.layer, p.session.layer);
      EXPECT_EQ(path.head, p.session.head);
      EXPECT_EQ(path.position, p.session.shown_position());
      EXPECT_GT(p.block_attention_box.z, p.block_attention_box.x);
    }
    ui.settings.font_px = 20;
    load_fonts(ui, 20);
  }
  // After a click on the attention: the stepper shows head (l, h) at query row t.
  void expect_stepper_on(int l, int h, int t) {
    state.wait_for_trace();
    frames(2);
    int ol = -1, oh = -1;
    ASSERT_TRUE(LmSession::parse_origin(state.origin(), ol, oh)) << state.origin();
    EXPECT_EQ(ol, l);
    EXPECT_EQ(oh, h);
    EXPECT_FALSE(ui.lm.open);
    EXPECT_EQ(state.current_stage().id, StageId::kWeights);
    EXPECT_EQ(state.selection().query, t);
    EXPECT_EQ(state.selection().key, -1);
  }
  // Clicks the attention box (in view at this size) and checks the stepper opened on (l, h) at
  // the token's query row.
  void click_attention(LmPanel& p, int l, int h, int t) {
    // The path of the token, layer and head just chosen is computed off the UI thread: the box
    // to click is drawn once it is in (before, a loaded machine saw the box of no path).
    frames(2);
    p.session.wait();
    frames(2);
    // The flow scrolls: the wheel over it brings the attention box into view, as a user would.
    ImGuiIO& io = ImGui::GetIO();
    for (int i = 0; i < 60 && p.block_attention_box.y > io.DisplaySize.y * 0.6f; ++i) {
      io.MousePos = {(p.block_attention_box.x + p.block_attention_box.z) / 2,
                     io.DisplaySize.y * 0.5f};
      io.MouseWheel = -1;
      frame();
    }
    io.MouseWheel = 0;
    const ImVec4 box = p.block_attention_box;
    ASSERT_GT(box.w, box.y);
    ASSERT_LE(box.y, io.DisplaySize.y * 0.6f) << "the attention box is out of view";
    ASSERT_GT(box.y, io.DisplaySize.y * 0.2f) << "scrolled past the attention box";
    click({(box.x + box.z) / 2, box.y + 8});
    expect_stepper_on(l, h, t);
    EXPECT_EQ(p.opened_layer, l);
    EXPECT_EQ(p.opened_head, h);
    // The stepper's row is the block's attention row for that token.
    const LmRun& r = *p.session.run();
    const Matrix& w = state.trace().head(StageId::kWeights, 0);
    const float* att = r.acts.att_at(r.model->config, l, 0, h);
    const int T = r.acts.T;
    for (const auto& [j, weight] : shown_path(p).find(lm::BlockStageId::kAttention)->top) {
      EXPECT_NEAR(w(t, j), weight, 1e-5);
      EXPECT_NEAR(att[static_cast<size_t>(t) * T + j], weight, 1e-6);
    }
  }
};

TEST_F(LmBlockGui, Gpt2BlockDrawsFollowsTheSelectionAndOpensTheHead) {
  open(gpt2_folder());
  LmPanel& p = *ui.lm.state;
  LmSession& s = p.session;
  s.select(1, 2);
  s.position = 4;
  draw_block_tab(p);
  const lm::BlockPath& path = shown_path(p);
  EXPECT_EQ(path.position, 4);
  EXPECT_EQ(path.token, s.run()->ids[4]);
  ASSERT_NE(path.find(lm::BlockStageId::kEmbedding), nullptr);
  EXPECT_EQ(path.find(lm::BlockStageId::kEmbedding)->vectors.size(), 3u);  // wte, wpe, sum
  EXPECT_EQ(path.find(lm::BlockStageId::kNorm1)->title, "LayerNorm");
  EXPECT_EQ(path.find(lm::BlockStageId::kNextToken), nullptr);  // not the last block
  ASSERT_NE(path.find(lm::BlockStageId::kInput), nullptr);

  // Another layer, head and token: the path follows; the last block ends in the next tokens.
  s.select(2, 3);
  s.position = -1;
  frames(2);
  const lm::BlockPath& last = shown_path(p);
  EXPECT_EQ(last.layer, 2);
  EXPECT_EQ(last.head, 3);
  EXPECT_EQ(last.position, static_cast<int>(s.run()->ids.size()) - 1);
  const lm::BlockStage* next = last.find(lm::BlockStageId::kNextToken);
  ASSERT_NE(next, nullptr);
  // The same tokens as the Next tab's chart.
  s.top_k = 5;
  const auto chart = s.next_tokens();
  ASSERT_EQ(next->top.size(), chart.size());
  for (size_t i = 0; i < chart.size(); ++i) {
    EXPECT_EQ(next->top[i].first, chart[i].first);
    EXPECT_NEAR(next->top[i].second, chart[i].second, 1e-6);
  }

  // A wide window puts the comparison beside the flow, a narrow one below it.
  resize_to(3200, 1200);
  frames(3);
  EXPECT_EQ(p.block_compare_drawn, 2);
  resize_to(900, 720);
  frames(3);
  EXPECT_EQ(p.block_compare_drawn, 1);
  resize_to(1600, 1000);

  s.select(1, 2);
  s.position = 5;
  click_attention(p, 1, 2, 5);
}

TEST_F(LmBlockGui, LlamaBlockShowsGroupedQueryHeadsAndOpensTheHead) {
  open(llama_folder());
  LmPanel& p = *ui.lm.state;
  LmSession& s = p.session;
  s.select(1, 4);
  s.position = 9;
  draw_block_tab(p);
  const lm::BlockPath& path = shown_path(p);
  EXPECT_EQ(path.kv_head, 1);  // query heads 3–5 share K/V head 1
  EXPECT_EQ(path.find(lm::BlockStageId::kNorm1)->title, "RMSNorm");
  EXPECT_EQ(path.find(lm::BlockStageId::kMlp)->title, "SwiGLU");
  EXPECT_EQ(path.find(lm::BlockStageId::kEmbedding)->vectors.size(), 1u);  // no positions
  const lm::BlockStage* qkv = path.find(lm::BlockStageId::kQkv);
  EXPECT_EQ(qkv->shape, "(1, 24) → q (1, 48), k (1, 16), v (1, 16)");
  const lm::BlockStage* att = path.find(lm::BlockStageId::kAttention);
  EXPECT_NE(att->note.find("shares K/V head 1"), std::string::npos) << att->note;
  EXPECT_NE(att->note.find("sliding window of 6"), std::string::npos) << att->note;
  for (const auto& [j, w] : att->top) EXPECT_GE(j, 9 - 6 + 1);
  const lm::BlockStage* next = path.find(lm::BlockStageId::kNextToken);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->weights, "lm_head");
  click_attention(p, 1, 4, 9);
  // The stepper has the rope step of a RoPE model's head.
  EXPECT_NE(state.trace().find(StageId::kRope), nullptr);
}

// On a lesson's slide at 1280×720 in 32 px type the block is a row of chips, all on screen, and
// the comparison takes the flow's place when asked for; the attention chip opens the head in the
// stepper at the token's query row, as the box does.
TEST_F(LmBlockGui, OnASlideTheBlockIsChipsAndTheAttentionChipOpensTheHead) {
  std::string error;
  ui.presentation = true;
  ASSERT_TRUE(open_lesson(ui, "13-todays-llms", error)) << error;
  ASSERT_TRUE(ui.lesson->go_to(6));
  ASSERT_TRUE(apply_lesson_step(ui));
  resize_to(1280, 720);
  settle();
  frames(3);
  ASSERT_TRUE(ui.lm.state);
  LmPanel& p = *ui.lm.state;
  ASSERT_TRUE(ui.lesson_view.slide.on);
  ASSERT_EQ(p.shown_tab, "block");
  const ImVec4 box = p.block_attention_box;
  ASSERT_GT(box.z, box.x) << "no attention chip";
  EXPECT_LE(box.w, 720.0f) << "the attention chip is below the screen";
  EXPECT_EQ(p.block_compare_drawn, 0);
  // The comparison in the flow's place, and back.
  p.block_slide_compare = true;
  frames(2);
  EXPECT_GT(p.block_compare_drawn, 0);
  EXPECT_EQ(p.block_attention_box.z, 0.0f);
  p.block_slide_compare = false;
  frames(2);
  const LmSession& s = p.session;
  const int l = s.layer, h = s.head, t = s.shown_position();
  click({(box.x + box.z) / 2, (box.y + box.w) / 2});
  expect_stepper_on(l, h, t);
}

}  // namespace
}  // namespace attn
