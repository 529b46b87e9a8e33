// The variants beyond masks in the app, drawn headless: the Variants tab's Linformer, convolution
// and head-mixing controls change the scenario the engine computes, and the views window (the
// cost and error charts, the convolution before and after, the mixed heads) draws on the built-in
// examples and on edits, every stage stepping through.
#include <gtest/gtest.h>
#include <imgui.h>

#include "gui/model/app_state.h"
#include "gui/ui.h"
#include "gui_headless.h"

namespace attn {
namespace {

class VariantViews : public test::HeadlessApp {
 protected:
  void before_app() override {
    ImGui::SetNextWindowPos({2000, 0});  // off screen: drawn, not overlapping
    ImGui::Begin("variants-test");
    draw_variants_panel(ui);
    ImGui::End();
  }
  void every_stage() {
    for (const StageInfo& s : state.stages()) {
      ASSERT_TRUE(state.set_stage(s.id));
      frames(2);
    }
  }
};

TEST_F(VariantViews, TheExamplesOpenOnTheirStagesAndDraw) {
  ui.variant_views.open = true;
  ASSERT_TRUE(state.load_example("linformer"));
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kKProj), nullptr);
  EXPECT_EQ(state.trace().n_k, 6);
  every_stage();
  ASSERT_TRUE(state.load_example("multi-token"));
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kPreConv), nullptr);
  bool convolved = false;
  for (const StageInfo& s : state.stages())
    convolved |= s.id == StageId::kMasked && std::string(s.title) == "Convolved scores";
  EXPECT_TRUE(convolved);
  every_stage();
  ASSERT_TRUE(state.load_example("head-mixing"));
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kPreMix), nullptr);
  EXPECT_EQ(state.trace().num_heads, 2);
  every_stage();
  EXPECT_TRUE(ui.variant_views.open);
}

TEST_F(VariantViews, TheControlsTurnEachVariantOnAndOff) {
  ui.variant_views.open = true;
  ASSERT_TRUE(state.load_example("multi-head"));
  frames(2);
  ASSERT_TRUE(state.set_linformer(2));
  frames(3);
  EXPECT_EQ(state.trace().n_k, 2);
  EXPECT_EQ(state.trace().key_tokens.size(), 2u);
  const Matrix e = state.scenario().options.variants.linformer.e[0];
  ASSERT_TRUE(state.reseed_linformer());
  EXPECT_NE(state.scenario().options.variants.linformer.e[0], e);
  // A mask names key positions: refused while Linformer is on, with the reason.
  EXPECT_FALSE(state.set_causal(CausalAlign::kTopLeft));
  EXPECT_NE(state.message().find("linformer"), std::string::npos) << state.message();
  // Adding a token redraws E and F for the new n_k instead of refusing the edit.
  ASSERT_TRUE(state.add_token(Side::kQuery));
  frames(2);
  EXPECT_EQ(state.scenario().options.variants.linformer.e[0].cols(),
            static_cast<Eigen::Index>(state.scenario().keys().size()));
  ASSERT_TRUE(state.set_linformer(std::nullopt));
  Matrix theta = Matrix::Ones(2, 3);
  ASSERT_TRUE(state.set_kq_conv(theta));
  ASSERT_TRUE(state.set_head_mix(2, 0.5f));
  frames(3);
  ASSERT_NE(state.trace().find(StageId::kPreConv), nullptr);
  ASSERT_NE(state.trace().find(StageId::kPreMix), nullptr);
  every_stage();
  // Fewer heads than the mixing's group: mixing turns itself off, the convolution stays.
  ASSERT_TRUE(state.set_heads(1, 1));
  frames(2);
  EXPECT_EQ(state.trace().find(StageId::kPreMix), nullptr);
  EXPECT_NE(state.trace().find(StageId::kPreConv), nullptr);
  ASSERT_TRUE(state.set_kq_conv(Matrix()));
  frames(3);
  EXPECT_EQ(state.trace().find(StageId::kPreConv), nullptr);
}

}  // namespace
}  // namespace attn
