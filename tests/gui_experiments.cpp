// The experiment windows drawn headless: "Why √d_k" (its numbers computed off the UI thread,
// every d_k drawn) and the score-function timing window (measured on a worker thread, then its
// table and chart), at 1600×1000 and at 1280×720 with a 28 px font, never past the screen.
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <chrono>
#include <thread>

#include "gui/gui_setup.h"
#include "gui/model/index_notation.h"
#include "gui/panel_experiments.h"
#include "gui/ui.h"
#include "gui_headless.h"

namespace attn {
namespace {

class ExperimentWindows : public test::HeadlessApp {
 protected:
  ImGuiWindow* window(const char* name) {
    ImGuiWindow* w = ImGui::FindWindowByName(name);
    return w && w->Active ? w : nullptr;
  }
  // Draws frames until `done` or about 60 s.
  template <typename F>
  void frames_until(F done) {
    for (int i = 0; i < 6000 && !done(); ++i) {
      frame();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

TEST_F(ExperimentWindows, SqrtDkDrawsEveryDimensionLargeAndSmall) {
  ASSERT_TRUE(state.load_example("fear-is"));
  ui.sqrt_dk.open = true;
  frame();
  frames_until([&] {
    return ui.sqrt_dk.state && !ui.sqrt_dk.state->job.running() && !ui.sqrt_dk.state->rows.empty();
  });
  ASSERT_EQ(ui.sqrt_dk.state->rows.size(), scaling_dims().size());
  for (int i = 0; i < static_cast<int>(scaling_dims().size()); ++i) {
    ui.sqrt_dk.state->dim_index = i;
    frame();
  }
  ImGui::GetIO().DisplaySize = {1280, 720};
  ui.settings.font_px = 28;
  ui.layout.reset = true;
  for (int i = 0; i < 3; ++i) frame();
  ImGuiWindow* w = window("Why divide by √d_k?###sqrt-dk");
  ASSERT_NE(w, nullptr);
  EXPECT_LE(w->Pos.x + w->Size.x, 1280.0f);
  EXPECT_LE(w->Pos.y + w->Size.y, 720.0f);
  // A new seed recomputes.
  ui.sqrt_dk.state->seed = 5;
  frame();
  frames_until([&] { return !ui.sqrt_dk.state->job.running(); });
  EXPECT_EQ(ui.sqrt_dk.state->computed_seed, 5);
}

TEST_F(ExperimentWindows, ScoreTimingMeasuresOffTheUiThread) {
  ASSERT_TRUE(state.load_example("additive"));
  ui.scores.open = true;
  frame();
  ASSERT_NE(window("Score functions: additive vs scaled dot product###scores"), nullptr);
  ASSERT_TRUE(ui.scores.state);
  ui.scores.state->start();
  frame();  // drawn while the worker measures
  frames_until([&] { return !ui.scores.state->running(); });
  frame();
  EXPECT_EQ(ui.scores.state->rows.size(), default_score_cases().size());
  for (const ScoreTiming& t : ui.scores.state->rows) {
    EXPECT_GT(t.dot_seconds, 0.0);
    EXPECT_GT(t.additive_seconds, 0.0);
  }
  ui.scores.open = false;
  frame();
}

TEST_F(ExperimentWindows, GhostAttentionHelpDraws) {
  ASSERT_TRUE(state.load_example("fear-is"));
  ui.ghost.open = true;
  frame();
  ImGuiWindow* w = window("Ghost Attention (Llama 2)###ghost");
  ASSERT_NE(w, nullptr);
  ImGui::GetIO().DisplaySize = {1280, 720};
  ui.settings.font_px = 28;
  ui.layout.reset = true;
  for (int i = 0; i < 3; ++i) frame();
  w = window("Ghost Attention (Llama 2)###ghost");
  ASSERT_NE(w, nullptr);
  EXPECT_LE(w->Pos.x + w->Size.x, 1280.0f);
}

// The additive example follows a change of d_k: W_q and W_k get the new width too.
TEST(AdditiveInTheApp, DkChangesResizeTheScoreWeights) {
  AppState st;
  ASSERT_TRUE(st.load_example("additive"));
  ASSERT_TRUE(st.set_d_k(5));
  st.poll();
  EXPECT_EQ(st.trace().d_k, 5);
  ASSERT_TRUE(st.trace().additive);
  EXPECT_EQ(st.trace().additive->w_q.cols(), 5);
  EXPECT_EQ(st.stages()[1].label, std::string("vᵀtanh"));
}

TEST(IndexNotation, FormsAndHoveredCells) {
  EXPECT_EQ(index_form(StageId::kScores, false, 0, 0, -1, -1).general,
            "S^{ij} = Q^{ia} K^{ja}   (a summed over d_k)");
  EXPECT_EQ(index_form(StageId::kScores, false, 0, 0, 1, 2).cell, "S^{1,2} = Q^{1,a} K^{2,a}");
  EXPECT_EQ(index_form(StageId::kOutput, true, 3, 1, 0, 12).cell,
            "O^{3,0,12} = A^{3,0,j} V^{1,j,12}");
  EXPECT_EQ(index_form(StageId::kWeights, false, 0, 0, 4, 5).cell,
            "A^{4,5} = exp(M^{4,5}) / Σ_k exp(M^{4,k})");
  EXPECT_EQ(index_form(StageId::kScores, false, 0, 0, -1, 3).cell, "");
  const std::vector<ShapeRow> rows = shapes_table(true, 4, 2, 5, 6, 8, 3);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1].indices, "gja");
  EXPECT_EQ(rows[1].shape, "(2, 6, 8)");
  EXPECT_EQ(rows[3].shape, "(4, 5, 6)");
}

}  // namespace
}  // namespace attn
