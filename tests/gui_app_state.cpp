// The app's model layer without any window: navigation, selection, validated and undoable edits,
// shape changes, masks, files and the recovery file. Expected numbers come from the independent
// double-precision reference (tests/support), never from the engine under test.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "backends/backend.h"
#include "backends/compute.h"
#include "gui/model/app_state.h"
#include "io/atomic_file.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::reference_attention;

// Max |trace weights - reference weights| over every head.
double weights_gap(const AppState& st) {
  test::RefResult ref = reference_attention(to_problem(st.scenario()));
  const TraceStep& w = st.trace().step(StageId::kWeights);
  double gap = 0;
  for (size_t h = 0; h < w.heads.size(); ++h)
    gap = std::max(gap, test::max_abs_diff(w.heads[h], ref.weights[h]));
  return gap;
}

TEST(AppState, OpensOnFearIsTheWithEveryStage) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  std::vector<StageId> ids;
  for (const StageInfo& s : st.stages()) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<StageId>{StageId::kInputs, StageId::kScores, StageId::kScaled,
                                       StageId::kMasked, StageId::kWeights, StageId::kOutput}));
  EXPECT_EQ(st.stage_index(), 0);
  EXPECT_FALSE(st.dirty());
  EXPECT_LT(weights_gap(st), 1e-6);
  // The causal table: "Fear" sees only itself.
  EXPECT_NEAR(st.trace().head(StageId::kWeights, 0)(0, 0), 1.0, 1e-6);
}

TEST(AppState, SteppingAndPlaying) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  st.next_stage();
  EXPECT_EQ(st.current_stage().id, StageId::kScores);
  st.last_stage();
  EXPECT_EQ(st.current_stage().id, StageId::kOutput);
  st.next_stage();  // stays at the end
  EXPECT_EQ(st.current_stage().id, StageId::kOutput);
  st.prev_stage();
  EXPECT_EQ(st.current_stage().id, StageId::kWeights);
  st.first_stage();
  EXPECT_EQ(st.stage_index(), 0);
  EXPECT_TRUE(st.set_stage(StageId::kK));  // an input step opens the inputs stage
  EXPECT_EQ(st.current_stage().id, StageId::kInputs);
  EXPECT_FALSE(st.set_stage(StageId::kConcat));  // fear-is-the has one head: no concat

  st.playing = true;
  st.play_interval = 1.0;
  EXPECT_FALSE(st.tick(0.6));
  EXPECT_TRUE(st.tick(0.6));
  EXPECT_EQ(st.current_stage().id, StageId::kScores);
  for (int i = 0; i < 20; ++i) st.tick(1.1);
  EXPECT_EQ(st.current_stage().id, StageId::kOutput);
  EXPECT_FALSE(st.playing);  // stops at the last stage
}

TEST(AppState, SelectionBecomesTheNarrationRequest) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  EXPECT_FALSE(st.narration_request());
  st.set_stage(StageId::kWeights);
  st.select_cell(2, 1);
  auto r = st.narration_request();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->query, 2);
  ASSERT_TRUE(r->key);
  EXPECT_EQ(*r->key, 1);
  EXPECT_EQ(r->step, StageId::kWeights);
  st.select_row(1);
  r = st.narration_request();
  EXPECT_EQ(r->query, 1);
  EXPECT_FALSE(r->key);
  st.select_cell(7, 0);  // outside: ignored
  EXPECT_EQ(st.selection().query, 1);
  st.set_stage(StageId::kInputs);
  EXPECT_FALSE(st.narration_request()->step);  // the inputs stage narrates every stage
}

TEST(AppState, BadTypedValuesAreRefusedAndTheOldValueKept) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const float before = (*st.tensor(Tensor::kQ, 0))(1, 2);
  for (const char* bad : {"abc", "nan", "NaN", "inf", "-inf", "", "  ", "1e999", "0.5x", "--1"}) {
    EXPECT_FALSE(st.set_value_text(Tensor::kQ, 0, 1, 2, bad)) << bad;
    EXPECT_TRUE(st.message_is_error()) << bad;
    EXPECT_NE(st.message().find("Q [1, 2]"), std::string::npos) << st.message();
    EXPECT_EQ((*st.tensor(Tensor::kQ, 0))(1, 2), before) << bad;
  }
  EXPECT_FALSE(st.can_undo());
  EXPECT_FALSE(st.dirty());
  EXPECT_FALSE(st.set_value(Tensor::kK, 0, 0, 0, NAN));
  EXPECT_FALSE(st.set_value(Tensor::kK, 0, 0, 0, INFINITY));
  EXPECT_FALSE(st.set_value(Tensor::kK, 0, 5, 0, 1.0f));  // no such row
}

TEST(AppState, AnEditRecomputesEveryStageAndUndoRedoRestore) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  const Matrix w0 = st.trace().head(StageId::kWeights, 0);
  ASSERT_TRUE(st.set_value_text(Tensor::kK, 0, 0, 2,
                                "\xE2\x88\x92"
                                "1.5"));  // Unicode minus
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kK, 0))(0, 2), -1.5f);
  EXPECT_TRUE(st.dirty());
  // scores[2][0] = q_2 · k_0 by hand with the new value: 0.1·0.3 + 0.6·0.5 + 0.3·(−1.5).
  EXPECT_NEAR(st.trace().head(StageId::kScores, 0)(2, 0), 0.1 * 0.3 + 0.6 * 0.5 + 0.3 * -1.5, 1e-6);
  EXPECT_LT(weights_gap(st), 1e-6);
  EXPECT_GT((st.trace().head(StageId::kWeights, 0) - w0).cwiseAbs().maxCoeff(), 0.01);

  ASSERT_TRUE(st.undo());
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kK, 0))(0, 2), 0.2f);
  EXPECT_LT((st.trace().head(StageId::kWeights, 0) - w0).cwiseAbs().maxCoeff(), 1e-7);
  ASSERT_TRUE(st.redo());
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kK, 0))(0, 2), -1.5f);
  EXPECT_FALSE(st.redo());
}

TEST(AppState, ADragIsOneUndoStep) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is"));
  for (float v : {0.3f, 0.4f, 0.5f}) st.set_value(Tensor::kV, 0, 1, 0, v, true);
  st.end_gesture();
  EXPECT_EQ(st.undo_depth(), 1u);
  st.set_value(Tensor::kV, 0, 1, 0, 0.9f, true);
  EXPECT_EQ(st.undo_depth(), 2u);
  st.undo();
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kV, 0))(1, 0), 0.5f);
  st.undo();
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kV, 0))(1, 0), 0.8f);  // fear-is V[1][0]
}

TEST(AppState, DimensionAndTokenChangesKeepShapesValid) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_d_k(5));
  EXPECT_EQ(st.trace().d_k, 5);
  EXPECT_EQ(st.tensor(Tensor::kK, 0)->cols(), 5);
  ASSERT_TRUE(st.set_d_v(1));
  EXPECT_EQ(st.trace().head(StageId::kOutput, 0).cols(), 1);
  EXPECT_FALSE(st.set_d_k(0));
  ASSERT_TRUE(st.add_token(Side::kQuery));
  EXPECT_EQ(st.trace().n_q, 4);
  EXPECT_EQ(st.trace().n_k, 4);
  ASSERT_TRUE(st.rename_token(Side::kQuery, 3, "dark"));
  EXPECT_EQ(st.trace().query_tokens[3], "dark");
  EXPECT_FALSE(st.rename_token(Side::kQuery, 3, ""));
  ASSERT_TRUE(st.remove_token(Side::kQuery, 0));
  EXPECT_EQ(st.trace().query_tokens.front(), "is");
  EXPECT_LT(weights_gap(st), 1e-6);

  // Cross-attention: the two sides change separately, so n_q != n_k.
  ASSERT_TRUE(st.set_cross_attention(true));
  ASSERT_TRUE(st.add_token(Side::kKey));
  ASSERT_TRUE(st.add_token(Side::kKey));
  EXPECT_EQ(st.trace().n_q, 3);
  EXPECT_EQ(st.trace().n_k, 5);
  ASSERT_TRUE(st.toggle_custom_cell(1, 4));
  ASSERT_TRUE(st.remove_token(Side::kKey, 2));
  EXPECT_EQ(st.scenario().options.mask.custom[0].cols(), 4);
  EXPECT_TRUE(validate_scenario(st.scenario()).empty());
  EXPECT_LT(weights_gap(st), 1e-6);
  ASSERT_TRUE(st.set_cross_attention(false));
  EXPECT_EQ(st.trace().n_k, 3);

  for (int i = 0; i < 2; ++i) ASSERT_TRUE(st.remove_token(Side::kQuery, 0));
  EXPECT_FALSE(st.remove_token(Side::kQuery, 0));  // the last token stays
  EXPECT_TRUE(st.message_is_error());
}

TEST(AppState, HeadsMhaMqaGqa) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_heads(4, 2));
  EXPECT_EQ(st.trace().kv_head_of, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_LT(weights_gap(st), 1e-6);
  ASSERT_TRUE(st.set_heads(4, 1));
  EXPECT_EQ(st.trace().kv_head_of, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_FALSE(st.set_heads(3, 2));  // 3 is not a multiple of 2
  EXPECT_EQ(st.trace().num_heads, 4);
  st.set_head(3);
  EXPECT_EQ(st.head(), 3);
  ASSERT_TRUE(st.set_heads(2, 2));
  EXPECT_EQ(st.head(), 1);  // clamped to the heads that remain
}

TEST(AppState, ProjectionModeKeepsEveryValue) {
  AppState st;
  ASSERT_TRUE(st.load_example("gqa"));
  const Matrix w = st.trace().head(StageId::kWeights, 3);
  ASSERT_TRUE(st.set_projection_mode(true));
  EXPECT_TRUE(st.scenario().use_projection);
  EXPECT_TRUE(st.trace().find(StageId::kProjected));
  EXPECT_LT((st.trace().head(StageId::kWeights, 3) - w).cwiseAbs().maxCoeff(), 1e-6);
  // Editing X changes the derived Q.
  ASSERT_TRUE(st.set_value_text(Tensor::kX, 0, 0, 0, "2"));
  EXPECT_NEAR(st.trace().head(StageId::kQ, 0)(0, 0), 2.0, 1e-6);
  EXPECT_LT(weights_gap(st), 1e-6);
  ASSERT_TRUE(st.set_d_model(st.tensor(Tensor::kX, 0)->cols() + 2));
  ASSERT_TRUE(st.set_projection_mode(false));
  EXPECT_NEAR((*st.tensor(Tensor::kQ, 0))(0, 0), 2.0, 1e-6);
}

TEST(AppState, MasksScaleAndTemperature) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_causal(CausalAlign::kNone));
  ASSERT_TRUE(st.set_window(0));
  const ReasonMatrix& r = st.trace().hidden_of(0);
  EXPECT_EQ(r(0, 1) & kHiddenWindow, kHiddenWindow);
  EXPECT_EQ(r(1, 1), 0);
  ASSERT_TRUE(st.toggle_global(0));
  EXPECT_EQ(st.trace().hidden_of(0)(2, 0), 0);  // everyone sees the global key 0
  ASSERT_TRUE(st.set_window(std::nullopt));
  ASSERT_TRUE(st.toggle_custom_cell(2, 1));
  EXPECT_EQ(st.trace().hidden_of(0)(2, 1) & kHiddenCustom, kHiddenCustom);
  EXPECT_NEAR(st.trace().head(StageId::kWeights, 0)(2, 1), 0.0, 0.0);
  ASSERT_TRUE(st.set_key_length(2));
  EXPECT_EQ(st.trace().hidden_of(0)(0, 2) & kHiddenPadding, kHiddenPadding);
  EXPECT_FALSE(st.set_key_length(9));
  EXPECT_LT(weights_gap(st), 1e-6);

  // Temperature below 1 sharpens (lower entropy), above 1 flattens.
  ASSERT_TRUE(st.set_key_length(std::nullopt));
  ASSERT_TRUE(st.clear_custom_mask());
  const double h1 = row_entropy_bits(st.trace().head(StageId::kWeights, 0))[2];
  ASSERT_TRUE(st.set_temperature(0.1f));
  const double h_cold = row_entropy_bits(st.trace().head(StageId::kWeights, 0))[2];
  ASSERT_TRUE(st.set_temperature(10.0f));
  const double h_hot = row_entropy_bits(st.trace().head(StageId::kWeights, 0))[2];
  EXPECT_LT(h_cold, h1);
  EXPECT_GT(h_hot, h1);
  EXPECT_LE(h_hot, std::log2(3.0) + 1e-9);
  EXPECT_FALSE(st.set_temperature(0));
  EXPECT_FALSE(st.set_scale(-1.0f));
  ASSERT_TRUE(st.set_scale(1.0f));
  EXPECT_NEAR(st.trace().head(StageId::kScaled, 0)(1, 0),
              st.trace().head(StageId::kScores, 0)(1, 0), 1e-7);
  EXPECT_LT(weights_gap(st), 1e-6);
}

TEST(AppState, MalformedFilesGiveAMessageAndKeepTheScenario) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  st.set_value_text(Tensor::kQ, 0, 0, 0, "0.7");
  const std::string bad = test::temp_path("bad.json");
  for (const char* text : {"{ not json", "{\"q\": [[1, 2]], \"k\": [[1]], \"v\": [[1]]}",
                           "{\"q\": [[\"x\"]], \"k\": [[1]], \"v\": [[1]]}", "[]"}) {
    std::string e;
    ASSERT_TRUE(write_file_atomically(bad, text, e));
    EXPECT_FALSE(st.load_file(bad)) << text;
    EXPECT_TRUE(st.message_is_error());
    EXPECT_NE(st.message().find(bad), std::string::npos) << st.message();
    EXPECT_EQ(st.scenario().name, "fear-is-the");
    EXPECT_FLOAT_EQ((*st.tensor(Tensor::kQ, 0))(0, 0), 0.7f);
    EXPECT_TRUE(st.can_undo());  // the edit history is untouched too
  }
  EXPECT_FALSE(st.load_file(test::temp_path("missing.json")));
  EXPECT_FALSE(st.load_example("no-such-example"));
  EXPECT_EQ(st.scenario().name, "fear-is-the");
}

TEST(AppState, SaveAndReopen) {
  AppState st;
  ASSERT_TRUE(st.load_example("cross-attention"));
  st.set_value_text(Tensor::kV, 0, 3, 1, "0.25");
  const std::string path = test::temp_path("saved.json");
  ASSERT_TRUE(st.save_file(path));
  EXPECT_FALSE(st.dirty());
  AppState other;
  ASSERT_TRUE(other.load_file(path));
  EXPECT_FLOAT_EQ((*other.tensor(Tensor::kV, 0))(3, 1), 0.25f);
  EXPECT_EQ(other.trace().key_tokens, st.trace().key_tokens);
  EXPECT_FALSE(st.save_file("/nonexistent-dir/x.json"));
  EXPECT_TRUE(st.message_is_error());
}

TEST(AppState, RecoveryFileKeepsUnsavedEdits) {
  const std::string rec = test::temp_path("recovery.json");
  {
    AppState st;
    st.recovery_path = rec;
    ASSERT_TRUE(st.load_example("fear-is-the"));
    EXPECT_TRUE(st.write_recovery());
    EXPECT_FALSE(std::filesystem::exists(rec));  // nothing unsaved yet
    st.set_value_text(Tensor::kQ, 0, 2, 2, "0.95");
    EXPECT_TRUE(st.write_recovery());
    EXPECT_TRUE(std::filesystem::exists(rec));
  }  // "crash": the state goes away without saving
  AppState st;
  st.recovery_path = rec;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.recovery_available());
  ASSERT_TRUE(st.restore_recovery());
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kQ, 0))(2, 2), 0.95f);
  EXPECT_TRUE(st.dirty());
  st.discard_recovery();
  EXPECT_FALSE(st.recovery_available());
}

// "● unsaved" follows the history: undoing back to the file as opened or saved clears it (and
// the recovery file, so the next start offers nothing), redoing sets it again, and an edit made
// after undoing past the saved state leaves no way back to it.
TEST(AppState, UndoBackToTheSavedStateIsNotUnsaved) {
  const std::string rec = test::temp_path("recovery-undo.json");
  std::filesystem::remove(rec);
  {
    AppState st;
    st.recovery_path = rec;
    ASSERT_TRUE(st.load_example("fear-is-the"));
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "0.7"));
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 1, "0.2"));
    EXPECT_TRUE(st.dirty());
    EXPECT_TRUE(st.write_recovery());
    ASSERT_TRUE(std::filesystem::exists(rec));
    ASSERT_TRUE(st.undo());
    EXPECT_TRUE(st.dirty());  // one edit still there
    ASSERT_TRUE(st.undo());
    EXPECT_FALSE(st.dirty());  // the example as opened
    EXPECT_FALSE(std::filesystem::exists(rec));
    EXPECT_TRUE(st.write_recovery());
    EXPECT_FALSE(std::filesystem::exists(rec));  // nothing to keep
    ASSERT_TRUE(st.redo());
    EXPECT_TRUE(st.dirty());
    ASSERT_TRUE(st.undo());
    EXPECT_FALSE(st.dirty());
  }  // the app ends here, with nothing unsaved
  {
    AppState next;
    next.recovery_path = rec;
    EXPECT_FALSE(next.check_recovery_at_start());
  }

  // Saved in the middle: clean there, not at the example as opened.
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_value_text(Tensor::kV, 0, 1, 0, "0.4"));
  const std::string path = test::temp_path("undo-saved.json");
  ASSERT_TRUE(st.save_file(path));
  EXPECT_FALSE(st.dirty());
  ASSERT_TRUE(st.undo());
  EXPECT_TRUE(st.dirty());  // back past the save: not what the file holds
  ASSERT_TRUE(st.redo());
  EXPECT_FALSE(st.dirty());
  // Undo past the save, then a different edit: the saved state cannot come back.
  ASSERT_TRUE(st.undo());
  ASSERT_TRUE(st.set_value_text(Tensor::kV, 0, 1, 0, "0.9"));
  ASSERT_TRUE(st.undo());
  EXPECT_TRUE(st.dirty());
  // A dragged value is one step: back to its start is clean again.
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.set_value(Tensor::kK, 0, 0, 0, 0.11f, true));
  ASSERT_TRUE(st.set_value(Tensor::kK, 0, 0, 0, 0.12f, true));
  st.end_gesture();
  EXPECT_TRUE(st.dirty());
  ASSERT_TRUE(st.undo());
  EXPECT_FALSE(st.dirty());
}

// Recovered edits were never saved: undoing them all still leaves something to save.
TEST(AppState, RecoveredEditsStayUnsavedAfterUndo) {
  const std::string rec = test::temp_path("recovery-recovered.json");
  {
    AppState st;
    st.recovery_path = rec;
    ASSERT_TRUE(st.load_example("fear-is-the"));
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 2, 2, "0.5"));
    ASSERT_TRUE(st.write_recovery());
  }
  AppState st;
  st.recovery_path = rec;
  ASSERT_TRUE(st.check_recovery_at_start());
  ASSERT_TRUE(st.restore_recovery());
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 2, 2, "0.6"));
  ASSERT_TRUE(st.undo());
  EXPECT_TRUE(st.dirty());
  st.discard_recovery();
}

// An error from typing stays until the next thing that works: a step, a selection, a head, an
// edit.
TEST(AppState, AnInputErrorLeavesTheStatusBarAtTheNextSuccessfulAction) {
  AppState st;
  ASSERT_TRUE(st.load_example("gqa"));
  auto fail = [&] {
    EXPECT_FALSE(st.set_value_text(Tensor::kQ, 0, 0, 0, "abc"));
    ASSERT_TRUE(st.message_is_error());
    ASSERT_FALSE(st.message().empty());
  };
  fail();
  EXPECT_FALSE(st.set_d_k(0));  // another refusal keeps an error up
  EXPECT_TRUE(st.message_is_error());
  st.next_stage();
  EXPECT_FALSE(st.message_is_error());
  EXPECT_EQ(st.message(), "");
  fail();
  st.select_cell(1, 0);
  EXPECT_FALSE(st.message_is_error());
  fail();
  st.set_head(1);
  EXPECT_FALSE(st.message_is_error());
  fail();
  st.clear_selection();
  EXPECT_FALSE(st.message_is_error());
  fail();
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "0.5"));
  EXPECT_FALSE(st.message_is_error());
  EXPECT_NE(st.message().find("0.5"), std::string::npos) << st.message();
  // A message that is not an error stays while the class steps through the stages.
  st.next_stage();
  EXPECT_NE(st.message().find("0.5"), std::string::npos) << st.message();
}

// Closing the window while "Recover?" is showing used to delete recovery.json: the unanswered
// question now keeps it, and nothing overwrites it meanwhile.
TEST(AppState, AnUnansweredRecoveryQuestionKeepsTheFile) {
  const std::string rec = test::temp_path("pending-recovery.json");
  {
    AppState st;
    st.recovery_path = rec;
    ASSERT_TRUE(st.load_example("fear-is-the"));
    st.set_value_text(Tensor::kQ, 0, 1, 1, "0.55");
    ASSERT_TRUE(st.write_recovery());
  }
  const std::string saved = test::read_bytes(rec);
  AppState st;
  st.recovery_path = rec;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.check_recovery_at_start());
  EXPECT_TRUE(st.recovery_pending());
  EXPECT_FALSE(st.recovery_removable_at_exit());  // the window closes with the question open
  st.set_value_text(Tensor::kQ, 0, 0, 0, "0.1");  // and edits made meanwhile do not overwrite it
  EXPECT_TRUE(st.write_recovery());
  EXPECT_EQ(test::read_bytes(rec), saved);
  st.discard_recovery();  // answered: now it may go
  EXPECT_FALSE(st.recovery_pending());
  EXPECT_FALSE(std::filesystem::exists(rec));
}

// A recovery file that cannot be loaded (here nested 150,000 levels deep, which used to crash the
// app at "Restore" and so at every start) is reported and moved aside, never deleted.
TEST(AppState, AnUnreadableRecoveryFileIsReportedAndKeptAside) {
  const std::string dir = test::temp_path("recovery-dir");
  ASSERT_TRUE(std::filesystem::create_directory(dir));
  const std::string rec = dir + "/recovery.json";
  const std::string deep = "{\"q\": [[1]], \"k\": [[1]], \"v\": [[1]], \"mask\": {\"custom\": " +
                           std::string(150000, '[') + std::string(150000, ']') + "}}";
  std::string e;
  ASSERT_TRUE(write_file_atomically(rec, deep, e)) << e;
  AppState st;
  st.recovery_path = rec;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  ASSERT_TRUE(st.check_recovery_at_start());
  EXPECT_FALSE(st.restore_recovery());
  EXPECT_TRUE(st.message_is_error());
  EXPECT_NE(st.message().find("nested"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("was kept as recovery-unreadable-"), std::string::npos)
      << st.message();
  EXPECT_FALSE(std::filesystem::exists(rec));  // not offered again at the next start
  ASSERT_FALSE(st.recovery_kept_aside().empty());
  EXPECT_EQ(test::read_bytes(st.recovery_kept_aside()), deep);
  EXPECT_EQ(st.scenario().name, "fear-is-the");
  EXPECT_FALSE(st.recovery_pending());
}

TEST(AppState, LargeProblemsComputeOffTheUiThread) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  st.async_threshold = 0;  // everything counts as large
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, "1.25"));
  st.wait_for_trace();
  EXPECT_FALSE(st.computing());
  EXPECT_NEAR(st.trace().head(StageId::kQ, 0)(0, 0), 1.25, 1e-7);
  EXPECT_LT(weights_gap(st), 1e-6);
}

// Edits made while a computation runs cancel it; the trace that lands is the last edit's, and
// progress reads 0..1 meanwhile.
TEST(AppState, EditsCancelTheRunningComputation) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  st.async_threshold = 0;
  for (int k = 1; k <= 5; ++k) {
    ASSERT_TRUE(st.set_value_text(Tensor::kQ, 0, 0, 0, std::to_string(k) + ".5"));
    const double progress = st.computing_progress();
    EXPECT_GE(progress, 0.0);
    EXPECT_LE(progress, 1.0);
  }
  st.wait_for_trace();
  EXPECT_FALSE(st.computing());
  EXPECT_NEAR(st.trace().head(StageId::kQ, 0)(0, 0), 5.5, 1e-7);
  EXPECT_LT(weights_gap(st), 1e-6);
}

// Large problems: an edit of one head's Q recomputes that head only (and of K or V, the heads of
// its key/value group), and the trace equals a whole computation of the edited scenario.
TEST(AppState, AnEditOfOneHeadRecomputesOnlyThatHead) {
  AppState st;
  ASSERT_TRUE(st.load_example("gqa"));  // H = 4 query heads over 2 key/value heads
  st.async_threshold = 0;
  const std::unique_ptr<Backend> cpu = make_cpu_backend();
  auto expect_whole = [&](const char* what) {
    const AttentionTrace whole = compute_scenario_trace(st.scenario(), *cpu);
    for (StageId id : {StageId::kQ, StageId::kK, StageId::kV, StageId::kScores, StageId::kMasked,
                       StageId::kWeights, StageId::kOutput}) {
      const TraceStep& s = st.trace().step(id);
      for (int h = 0; h < s.num_heads(); ++h)
        EXPECT_TRUE(Matrix(st.trace().head(s, h)) == whole.head(id, h))
            << what << ": " << id << " head " << h;
    }
    EXPECT_LT(weights_gap(st), 1e-6) << what;
  };
  const uint64_t head0 = st.head_serial(0);
  ASSERT_TRUE(st.set_value_text(Tensor::kQ, 2, 1, 0, "0.9"));
  st.wait_for_trace();
  EXPECT_EQ(st.recomputed_heads(), 1);
  expect_whole("q edit");
  EXPECT_EQ(st.head_serial(0), head0);  // the heads grid keeps head 0's texture
  EXPECT_EQ(st.head_serial(2), st.trace_serial());
  ASSERT_TRUE(st.set_value_text(Tensor::kK, 1, 0, 0, "-0.3"));
  st.wait_for_trace();
  EXPECT_EQ(st.recomputed_heads(), 2);
  expect_whole("k edit");
  st.undo();  // a value change like any other
  st.wait_for_trace();
  EXPECT_EQ(st.recomputed_heads(), 2);
  expect_whole("undo");
  st.randomise(3);  // every head changes: the whole trace
  st.wait_for_trace();
  EXPECT_EQ(st.recomputed_heads(), 4);
  expect_whole("randomise");
}

TEST(AppState, RandomiseAndReset) {
  AppState st;
  ASSERT_TRUE(st.load_example("fear-is-the"));
  st.randomise(7);
  const Matrix q7 = *st.tensor(Tensor::kQ, 0);
  EXPECT_LT(weights_gap(st), 1e-6);
  st.randomise(7);
  EXPECT_EQ(*st.tensor(Tensor::kQ, 0), q7);  // same seed, same numbers
  st.reset_to_origin();
  EXPECT_FLOAT_EQ((*st.tensor(Tensor::kQ, 0))(0, 2), 0.8f);
  st.undo();
  EXPECT_EQ(*st.tensor(Tensor::kQ, 0), q7);
}

TEST(AppState, NumbersAndEntropy) {
  std::string e;
  EXPECT_FLOAT_EQ(*parse_user_number(" 2 ", e), 2.0f);
  EXPECT_FLOAT_EQ(*parse_user_number("-1e-3", e), -1e-3f);
  EXPECT_FALSE(parse_user_number("0,5", e));
  Matrix w(2, 4);
  w << 0.5f, 0.5f, 0, 0, 0.25f, 0.25f, 0.25f, 0.25f;
  std::vector<double> h = row_entropy_bits(w);
  EXPECT_NEAR(h[0], 1.0, 1e-7);
  EXPECT_NEAR(h[1], 2.0, 1e-7);
}

}  // namespace
}  // namespace attn
