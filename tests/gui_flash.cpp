// The FlashAttention window (panel_flash.cpp) drawn headless on every example, every block size
// and every step, at the default size and at 1280×720 with a 28 px font; it follows the
// heatmap's selected query and keeps its step within the blocks.
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include "explain/online_softmax.h"
#include "gui/gui_setup.h"
#include "gui/ui.h"
#include "gui_headless.h"
#include "io/examples.h"

namespace attn {
namespace {

class FlashWindow : public test::HeadlessApp {
 protected:
  // The FlashAttention window as drawn last frame (null when it was not).
  ImGuiWindow* window() {
    ImGuiWindow* w =
        ImGui::FindWindowByName("FlashAttention: the online softmax, block by block###flash");
    return w && w->Active ? w : nullptr;
  }
};

TEST_F(FlashWindow, EveryExampleBlockSizeAndStepDraws) {
  ui.flash.open = true;
  for (const ExampleInfo& e : list_examples()) {
    SCOPED_TRACE(e.name);
    ASSERT_TRUE(state.load_example(e.name));
    ASSERT_TRUE(state.set_stage(StageId::kWeights));
    frame();
    ASSERT_NE(window(), nullptr);
    const AttentionTrace& t = state.trace();
    // Linformer and Multi-Token Attention: the window says why it has no blocks to step through.
    if (t.variants.any()) continue;
    for (int b = 1; b <= t.n_k; ++b) {
      ui.flash.block = b;
      const int blocks = (t.n_k + b - 1) / b;
      for (int step = 0; step <= blocks; ++step) {
        ui.flash.done = step;
        frame();
        EXPECT_EQ(ui.flash.done, step);
      }
      ui.flash.done = blocks + 5;  // past the end: clamped to the last block
      frame();
      EXPECT_EQ(ui.flash.done, blocks);
    }
  }
}

TEST_F(FlashWindow, FollowsTheSelectedQueryAndDrawsLargeAndSmall) {
  ASSERT_TRUE(state.load_example("sliding-window"));
  ui.flash.open = true;
  state.select_row(3);
  ui.flash.done = 2;
  frame();
  EXPECT_EQ(ui.flash.query, 3);
  EXPECT_EQ(ui.flash.done, 0);  // a new query starts from the first block
  ui.flash.done = 4;
  frame();
  EXPECT_EQ(ui.flash.done, 4);  // the same selection: the step stays
  ImGui::GetIO().DisplaySize = {1280, 720};
  ui.settings.font_px = 28;
  ui.layout.reset = true;
  for (int i = 0; i < 4; ++i) frame();
  ImGuiWindow* w = window();
  ASSERT_NE(w, nullptr);
  EXPECT_LE(w->Pos.x + w->Size.x, 1280.0f);
  EXPECT_LE(w->Pos.y + w->Size.y, 720.0f);
  ui.flash.open = false;
  frame();
  EXPECT_EQ(window(), nullptr);
}

}  // namespace
}  // namespace attn
