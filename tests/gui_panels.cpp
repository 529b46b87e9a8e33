// Every panel drawn headless (Dear ImGui with no renderer) for many frames on every example, with
// simulated keys and clicks, checking the state the UI reads and edits.
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "documents.h"
#include "gui/gui_setup.h"
#include "gui/model/lesson_player.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"
#include "gui/window_registry.h"
#include "gui_headless.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "reference.h"
#include "render/heatmap_export.h"

namespace attn {
namespace {

class Headless : public test::HeadlessApp {
 protected:
  // The panels that sit in a tab not currently shown, drawn before the app so they exist before
  // any modal dialog the app opens.
  void before_app() override {
    ImGui::SetNextWindowPos({2000, 0});  // off screen: drawn, not overlapping
    ImGui::Begin("variants-test");
    draw_variants_panel(ui);
    ImGui::End();
  }
};

// Before any scenario is loaded (the app's first frames, or a trace still on its way) every
// panel must draw without touching a trace that does not exist yet.
TEST_F(Headless, EveryPanelDrawsWithNoScenarioLoaded) {
  ASSERT_FALSE(state.has_trace());
  frames(5);
  // draw_app skips the trace panels until there is a trace; each must still cope on its own.
  for (auto draw : {draw_pipeline_panel, draw_heatmap_panel, draw_narration_panel,
                    draw_editor_panel, draw_heads_panel, draw_status_bar}) {
    ImGui::NewFrame();
    draw(ui);
    ImGui::Render();
  }
  EXPECT_FALSE(state.has_trace());
}

TEST_F(Headless, EveryExampleEveryStageDrawsForManyFrames) {
  for (const ExampleInfo& e : list_examples()) {
    SCOPED_TRACE(e.name);
    const StageId before = state.has_trace() ? state.current_stage().id : StageId::kInputs;
    ASSERT_TRUE(state.load_example(e.name));
    frames(3);
    // Another example opens on the same stage, so a class can compare them.
    bool has_before = false;
    for (const StageInfo& s : state.stages()) has_before |= s.id == before;
    if (has_before) {
      EXPECT_EQ(state.current_stage().id, before);
    }
    press(ImGui::GetKeyIndex(ImGuiKey_Home));
    const int n = static_cast<int>(state.stages().size());
    EXPECT_EQ(state.stage_index(), 0);
    for (int i = 1; i < n; ++i) {
      press(ImGui::GetKeyIndex(ImGuiKey_RightArrow));
      EXPECT_EQ(state.stage_index(), i);
      frames(5);
      EXPECT_TRUE(ui.views["main"].drawn || state.current_stage().id == StageId::kInputs);
    }
    press(ImGui::GetKeyIndex(ImGuiKey_Home));
    EXPECT_EQ(state.stage_index(), 0);
    press(ImGui::GetKeyIndex(ImGuiKey_End));
    EXPECT_EQ(state.stage_index(), n - 1);
    press(ImGui::GetKeyIndex(ImGuiKey_LeftArrow));
    EXPECT_EQ(state.stage_index(), n - 2);
    // Every head of a multi-head example draws too.
    for (int h = 0; h < state.trace().num_heads; ++h) {
      state.set_head(h);
      frames(2);
    }
  }
}

TEST_F(Headless, SpacePlaysThroughTheStages) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.play_interval = 0.05;
  press(ImGui::GetKeyIndex(ImGuiKey_Space));
  EXPECT_TRUE(state.playing);
  for (int i = 0; i < 60 && state.playing; ++i) {
    state.tick(1.0 / 60);
    frame();
  }
  EXPECT_EQ(state.current_stage().id, StageId::kOutput);
}

TEST_F(Headless, ClickingACellSelectsItForTheNarration) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kWeights);
  frames(3);
  const HeatmapViewport& v = ui.views["main"];
  ASSERT_TRUE(v.drawn);
  EXPECT_EQ(v.rows, 3);
  EXPECT_EQ(v.cols, 3);
  click(v.cell_center(2, 1));
  ASSERT_TRUE(state.selection().active());
  EXPECT_EQ(state.selection().query, 2);
  EXPECT_EQ(state.selection().key, 1);
  auto r = state.narration_request();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->step, StageId::kWeights);
  EXPECT_EQ(*r->key, 1);
  // A click on a query token (left of the cells) selects its whole row.
  const ImVec2 c = v.cell_center(1, 0);
  click({v.clip.x - 10, c.y});
  EXPECT_EQ(state.selection().query, 1);
  EXPECT_EQ(state.selection().key, -1);
  press(ImGui::GetKeyIndex(ImGuiKey_Escape));
  EXPECT_FALSE(state.selection().active());
}

TEST_F(Headless, CustomMaskEditingTogglesCells) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kMasked);
  ui.editor.custom_mask = true;
  frames(3);
  click(ui.views["main"].cell_center(2, 0));
  ASSERT_EQ(state.scenario().options.mask.custom.size(), 1u);
  EXPECT_EQ(state.scenario().options.mask.custom[0](2, 0), 0.0f);
  EXPECT_EQ(state.trace().hidden_of(0)(2, 0) & kHiddenCustom, kHiddenCustom);
  frames(3);
}

TEST_F(Headless, UndoRedoAndFontSizeFromTheKeyboard) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  frames(2);
  ASSERT_TRUE(state.set_value_text(Tensor::kV, 0, 0, 0, "3"));
  frames(2);
  press(ImGui::GetKeyIndex(ImGuiKey_Z), true);
  EXPECT_FLOAT_EQ((*state.tensor(Tensor::kV, 0))(0, 0), 0.1f);
  press(ImGui::GetKeyIndex(ImGuiKey_Z), true, true);
  EXPECT_FLOAT_EQ((*state.tensor(Tensor::kV, 0))(0, 0), 3.0f);
  const float px = ui.settings.font_px;
  press(kKeyEqual, true);
  EXPECT_EQ(ui.settings.font_px, px + 2);
  frames(3);
  press(kKeyMinus, true);
  press(kKeyMinus, true);
  EXPECT_EQ(ui.settings.font_px, px - 2);
  frames(3);
}

TEST_F(Headless, EditsFromPanelsRecomputeAndBadInputKeepsTheOldValue) {
  GuiOptions o;
  o.example = "gqa";
  o.step = "weights";
  o.head = 3;
  o.select = "4,2";
  o.edits = {"q:3:4:0=0.5"};
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  frames(5);
  EXPECT_EQ(state.head(), 3);
  EXPECT_FLOAT_EQ(state.trace().head(StageId::kQ, 3)(4, 0), 0.5f);
  for (const char* bad : {"q:0:0:0=abc", "q:0:0:0=nan", "q:0:0:0=inf", "q:9:0:0=1", "zz:0:0:0=1"}) {
    GuiOptions b = o;
    b.edits = {bad};
    AppState st2;
    Ui ui2(st2);
    EXPECT_FALSE(setup_from_options(ui2, b, error)) << bad;
    EXPECT_NE(error.find("--edit"), std::string::npos) << error;
  }
  GuiOptions s = o;
  s.step = "nope";
  AppState st3;
  Ui ui3(st3);
  EXPECT_FALSE(setup_from_options(ui3, s, error));
  EXPECT_NE(error.find("--step"), std::string::npos);
}

TEST_F(Headless, OpeningAMalformedFileFromTheDialogKeepsTheScenario) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  const std::string bad = test::temp_path("malformed.json");
  std::string e;
  ASSERT_TRUE(write_file_atomically(bad, "{\"q\": [[1, 2], [3]], \"k\": [[1]], \"v\": [[1]]}", e));
  ui.dialogs.path = PathDialog::kOpen;
  ui.dialogs.buffer = bad;
  frames(3);
  // Enter confirms the path field (it has keyboard focus when the dialog opens).
  press(ImGui::GetKeyIndex(ImGuiKey_Enter));
  frames(2);
  EXPECT_TRUE(state.message_is_error());
  EXPECT_NE(state.message().find("ragged"), std::string::npos) << state.message();
  EXPECT_EQ(state.scenario().name, "fear-is-the");
  EXPECT_EQ(ui.dialogs.path, PathDialog::kOpen);  // the dialog stays open with the error
}

TEST_F(Headless, VariantsAndProjectionModeDraw) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kWeights);
  frames(2);
  ASSERT_TRUE(state.set_heads(4, 2));
  frames(3);
  ASSERT_TRUE(state.set_window(1));
  ASSERT_TRUE(state.toggle_global(0));
  ASSERT_TRUE(state.set_cross_attention(true));
  ASSERT_TRUE(state.add_token(Side::kKey));
  frames(3);
  ASSERT_TRUE(state.set_projection_mode(true));
  frames(3);
  EXPECT_TRUE(state.set_stage(StageId::kProjected));
  frames(3);
  EXPECT_TRUE(ui.views["main"].drawn);
  EXPECT_EQ(ui.views["main"].rows, 3);
  ui.settings.light_theme = false;
  apply_theme(false, 1.0f);
  frames(3);
}

TEST_F(Headless, A1024TokenScenarioComputesWithoutBlockingFrames) {
  std::mt19937 rng(5);
  Scenario s;
  s.name = "big";
  s.qkv.q = {test::random_matrix(1024, 16, rng)};
  s.qkv.k = {test::random_matrix(1024, 16, rng)};
  s.qkv.v = {test::random_matrix(1024, 16, rng)};
  for (int i = 0; i < 1024; ++i) s.query_tokens.push_back("t" + std::to_string(i));
  ASSERT_TRUE(state.load_scenario(s, "big"));
  state.wait_for_trace();
  state.set_stage(StageId::kWeights);
  frames(3);
  EXPECT_EQ(ui.views["main"].rows, 1024);
  // An edit of a large problem runs on a worker; frames keep coming while it computes.
  ASSERT_TRUE(state.set_value_text(Tensor::kQ, 0, 0, 0, "0.5"));
  int frames_while_computing = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (state.computing() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    frame();
    ++frames_while_computing;
  }
  EXPECT_FALSE(state.computing());
  EXPECT_NEAR(state.trace().head(StageId::kQ, 0)(0, 0), 0.5, 1e-7);
  std::cout << "frames drawn while the 1024-token trace computed: " << frames_while_computing
            << "\n";
  frames(3);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST_F(Headless, UnsavedEditsAskBeforeBeingDiscarded) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  bool ran = false;
  ui.request_discard_check([&] { ran = true; });
  EXPECT_TRUE(ran);  // nothing to lose: runs at once
  ASSERT_TRUE(state.set_value_text(Tensor::kQ, 0, 0, 0, "0.6"));
  ran = false;
  ui.request_discard_check([&] { ran = true; });
  EXPECT_FALSE(ran);
  EXPECT_TRUE(ui.dialogs.ask_discard);
  frames(3);  // the dialog is up; the edit is still there
  EXPECT_FLOAT_EQ((*state.tensor(Tensor::kQ, 0))(0, 0), 0.6f);
  EXPECT_FALSE(ran);
}

TEST(Settings, RoundTripAndBadValuesIgnored) {
  UiSettings s;
  s.light_theme = false;
  s.colormap = "magma";
  s.font_px = 26;
  s.decimals = 3;
  const std::string path = test::temp_path("settings.ini");
  std::string e;
  ASSERT_TRUE(write_file_atomically(path, settings_text(s) + "font_px=999\ncolormap=rainbow\n", e));
  UiSettings back;
  load_settings(back, path);
  EXPECT_FALSE(back.light_theme);
  EXPECT_EQ(back.colormap, "magma");  // "rainbow" is not a map: ignored
  EXPECT_EQ(back.font_px, 26);        // 999 is out of range: ignored
  EXPECT_EQ(back.decimals, 3);
}

TEST(Settings, TheFirstStartHintIsRememberedOnceDone) {
  UiSettings s;
  EXPECT_FALSE(s.welcomed);  // a first start shows the hint
  const std::string path = test::temp_path("settings-welcomed.ini");
  std::string e;
  ASSERT_TRUE(write_file_atomically(path, settings_text(s), e));
  UiSettings back;
  back.welcomed = true;
  load_settings(back, path);
  EXPECT_FALSE(back.welcomed);
  s.welcomed = true;
  ASSERT_TRUE(write_file_atomically(path, settings_text(s), e));
  load_settings(back, path);
  EXPECT_TRUE(back.welcomed);
  // An older settings file has no such line: the hint shows.
  ASSERT_TRUE(write_file_atomically(path, "theme=light\nfont_px=22\n", e));
  UiSettings old;
  load_settings(old, path);
  EXPECT_FALSE(old.welcomed);
}

// Without --size the window takes the monitor's work area (here a 1280 × 720 projector less a
// 27-pixel panel at the top); --size is kept as given.
TEST(WindowPlacement, TheWorkAreaUnlessSizeIsGiven) {
  GuiOptions o;
  WindowPlacement p = first_window_placement(o, 0, 27, 1280, 693);
  EXPECT_TRUE(p.place);
  EXPECT_EQ(p.x, 0);
  EXPECT_EQ(p.y, 27);
  EXPECT_EQ(p.w, 1280);
  EXPECT_EQ(p.h, 693);
  p = first_window_placement(o, 1920, 0, 1920, 1080);  // a second monitor's origin
  EXPECT_EQ(p.x, 1920);
  EXPECT_EQ(p.w, 1920);
  EXPECT_EQ(p.h, 1080);
  p = first_window_placement(o, 0, 0, 300, 200);  // never below what --size accepts
  EXPECT_EQ(p.w, 320);
  EXPECT_EQ(p.h, 240);
  p = first_window_placement(o, 0, 0, 0, 0);  // no work area known: the default size
  EXPECT_FALSE(p.place);
  EXPECT_EQ(p.w, 1600);
  EXPECT_EQ(p.h, 1000);
  o.width = 1024;
  o.height = 768;
  o.size_given = true;
  p = first_window_placement(o, 0, 27, 1280, 693);
  EXPECT_FALSE(p.place);
  EXPECT_EQ(p.w, 1024);
  EXPECT_EQ(p.h, 768);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The first screen points to Help → Getting started and the Lessons menu until the tour is seen
// or a lesson opened; the tour's Back and Next buttons page through it and Done closes it.
TEST_F(Headless, TheFirstStartHintAndTheTourPages) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  frames(2);
  EXPECT_TRUE(first_start_hint_shown(ui));
  open_tour(ui);
  EXPECT_TRUE(ui.settings.welcomed);
  EXPECT_FALSE(first_start_hint_shown(ui));
  frames(3);
  ImGuiWindow* w = ImGui::FindWindowByName("Getting started###tour");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(w->Active);
  // The buttons on the bottom row: "◀ Back", then "Next ▶" (or "Done") after it.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float y = w->Pos.y + w->Size.y - style.WindowPadding.y - ImGui::GetFrameHeight() / 2;
  const float back_x = w->Pos.x + style.WindowPadding.x + 4;
  const float next_x = w->Pos.x + style.WindowPadding.x + ImGui::CalcTextSize("◀ Back").x +
                       style.FramePadding.x * 2 + style.ItemSpacing.x + 4;
  EXPECT_EQ(ui.tour.page, 0);
  click({back_x, y});  // disabled on the first page
  EXPECT_EQ(ui.tour.page, 0);
  for (int page = 1; page < tour_page_count(); ++page) {
    click({next_x, y});
    EXPECT_EQ(ui.tour.page, page);
  }
  EXPECT_EQ(tour_page_count(), 5);
  click({back_x, y});
  EXPECT_EQ(ui.tour.page, tour_page_count() - 2);
  click({next_x, y});
  click({next_x, y});  // "Done" on the last page
  EXPECT_FALSE(ui.tour.open);

  // A new user who opens a lesson instead: the hint goes once the lesson is on screen.
  ui.settings.welcomed = false;
  std::string error;
  ASSERT_TRUE(open_lesson(ui, "01-soft-lookup", error)) << error;
  EXPECT_FALSE(first_start_hint_shown(ui));
  frame();
  close_lesson(ui);
  frame();
  EXPECT_TRUE(ui.settings.welcomed);
  EXPECT_FALSE(first_start_hint_shown(ui));
}

// Every Help window draws, at the normal and a large font.
TEST_F(Headless, TheHelpWindowsDraw) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  for (float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    ui.tour.open = ui.shortcuts.open = ui.about.open = true;
    for (int page = 0; page < tour_page_count(); ++page) {
      ui.tour.page = page;
      frames(2);
    }
    for (const char* name : {"Getting started###tour", "Keyboard shortcuts###shortcuts",
                             "About Attention Lab###about"}) {
      ImGuiWindow* w = ImGui::FindWindowByName(name);
      ASSERT_NE(w, nullptr) << name;
      EXPECT_TRUE(w->Active) << name;
    }
  }
}

// The registry is the one list of windows: each `--tab` name opens its own window and no other,
// the model windows become the stage, and names that are not windows are refused with the list.
TEST_F(Headless, EveryWindowOpensFromItsTabNameAloneAndDraws) {
  std::string error, view;
  for (int i = 0; i < kWindowCount; ++i) {
    const WindowRow& r = window_rows()[i];
    ASSERT_EQ(static_cast<int>(r.id), i);
    for (int j = 0; j < kWindowCount; ++j) window_flags(ui, window_rows()[j].id).open = false;
    const std::optional<WindowId> named = window_for_tab(r.name, view);
    if (r.menu == WindowMenu::kDebug || r.id == WindowId::kClassMode) {
      EXPECT_FALSE(named) << r.name;  // opened from their menu only
      continue;
    }
    ASSERT_EQ(named, r.id) << r.name;
    if (r.id == WindowId::kLmTrain) continue;  // it starts training: gui_lm_train's tests
    GuiOptions o;
    o.tab = r.name;
    ASSERT_TRUE(setup_from_options(ui, o, error)) << r.name << ": " << error;
    frames(2);
    for (int j = 0; j < kWindowCount; ++j)
      EXPECT_EQ(window_open(ui, window_rows()[j].id), j == i)
          << r.name << " / " << window_rows()[j].name;
    EXPECT_EQ(ui.layout.model_stage == r.id, r.model_stage) << r.name;
  }
  for (const WindowRow* r = window_rows(); r != window_rows() + kWindowCount; ++r)
    window_flags(ui, r->id).open = false;

  EXPECT_EQ(window_for_tab("seq2seq-live", view), WindowId::kSeq2seq);
  EXPECT_EQ(view, "live");
  EXPECT_EQ(window_for_tab("lm-kv", view), WindowId::kLm);
  EXPECT_EQ(view, "kv");
  EXPECT_EQ(window_for_tab("lm-train", view), WindowId::kLmTrain);
  EXPECT_EQ(view, "");
  for (const char* bad : {"lm-", "lm-nonsense", "flash-live", "imgui-demo", "class-mode", "lm kv"})
    EXPECT_FALSE(window_for_tab(bad, view)) << bad;
  // A view of the model window without --model, in a window that never had one: the shipped
  // English model's.
  ui.lm.state.reset();
  GuiOptions o;
  o.tab = "lm-heads";
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  ui.lm.state->session.wait();
  EXPECT_EQ(ui.lm.state->session.model()->name, kDefaultLmModel);
  o.tab = "flashy";
  EXPECT_FALSE(setup_from_options(ui, o, error));
  for (const char* name : {"'flashy'", "inputs", "rope-turned", "seq2seq-live", "lm-kv", "lm-sinks",
                           "lm-train", "variant-views", "sqrt-dk", "about"})
    EXPECT_NE(error.find(name), std::string::npos) << name << " in: " << error;
}

TEST_F(Headless, ExportFromTheDialogWritesTheCurrentHeatmap) {
  ASSERT_TRUE(state.load_example("gqa"));
  state.set_stage(StageId::kWeights);
  state.set_head(2);
  frames(2);
  const std::string png = test::temp_path("dialog-export.png");
  ui.dialogs.path = PathDialog::kExportPng;
  ui.dialogs.buffer = png;
  frames(2);
  press(ImGui::GetKeyIndex(ImGuiKey_Enter));
  ASSERT_TRUE(ui.exports.job.running());
  ui.exports.job.wait();
  frames(2);  // the status bar picks the result up
  EXPECT_FALSE(state.message_is_error()) << state.message();
  std::string bytes, e;
  ASSERT_TRUE(read_text_file(png, bytes, e)) << e;
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");

  // Every stage of every head into a folder.
  const std::string dir = test::temp_path("all-stages");
  ui.dialogs.path = PathDialog::kExportAllSvg;
  ui.dialogs.buffer = dir;
  frames(2);
  press(ImGui::GetKeyIndex(ImGuiKey_Enter));
  ASSERT_TRUE(ui.exports.job.running());
  ui.exports.job.wait();
  frames(2);
  EXPECT_FALSE(state.message_is_error()) << state.message();
  for (const char* f : {"/weights-h0.svg", "/weights-h3.svg", "/scores-h2.svg", "/k-kv1.svg"})
    EXPECT_TRUE(read_text_file(dir + f, bytes, e)) << e;

  // Every stage as the pages of one PDF, and a worksheet with its key.
  for (const auto& [kind, name] : {std::pair{PathDialog::kExportAllPdf, "export-all-pdf"},
                                   std::pair{PathDialog::kWorksheet, "worksheet"}}) {
    const std::string pdf = test::temp_path(std::string(name) + ".pdf");
    export_through_dialog(kind, pdf);
    ASSERT_TRUE(read_text_file(pdf, bytes, e)) << e;
    EXPECT_EQ(bytes.rfind("%PDF-", 0), 0u);
  }
  const std::string sheet = test::temp_path("sheet.pdf");
  ui.dialogs.worksheet_fresh = true;
  ui.dialogs.worksheet_seed = 3;
  export_through_dialog(PathDialog::kWorksheet, sheet);
  ASSERT_TRUE(read_text_file(sheet.substr(0, sheet.size() - 4) + "-answers.pdf", bytes, e)) << e;
  EXPECT_EQ(bytes.rfind("%PDF-", 0), 0u);
}

// The export dialog's sizes: a 16:9 slide, 4:3 and a typed size give pictures of exactly that
// many pixels and slide pages of half as many points; the status bar names the full path.
TEST_F(Headless, ExportDialogSizesPicturesAndSlidesAndNamesTheFullPath) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kWeights);
  frames(2);
  const std::pair<ExportSizeChoice, std::pair<int, int>> sizes[] = {
      {ExportSizeChoice::kWide, {1920, 1080}},
      {ExportSizeChoice::kFourThree, {1600, 1200}},
      {ExportSizeChoice::kCustom, {640, 480}}};
  ui.dialogs.export_w = 640;
  ui.dialogs.export_h = 480;
  for (const auto& [choice, wh] : sizes) {
    ui.dialogs.export_size = choice;
    const std::string png = test::temp_path("sized-export.png");
    export_through_dialog(PathDialog::kExportPng, png);
    const test::RgbImage img = test::load_png_rgb(png);
    EXPECT_EQ(img.w, wh.first);
    EXPECT_EQ(img.h, wh.second);
    // The full path, in the status bar and as the last export's path.
    const std::string full = std::filesystem::absolute(png).lexically_normal().string();
    EXPECT_EQ(ui.exports.written, full);
    EXPECT_NE(state.message().find(full), std::string::npos) << state.message();

    ui.dialogs.deck_size = choice;
    const std::string pdf = test::temp_path("sized-deck.pdf");
    export_through_dialog(PathDialog::kExportAllPdf, pdf);
    double w = 0, h = 0;
    ASSERT_TRUE(test::pdf_page_size(pdf, w, h));
    EXPECT_NEAR(w, wh.first / 2.0, 0.5);
    EXPECT_NEAR(h, wh.second / 2.0, 0.5);
  }
  // A relative path is written where it says, and named in full.
  const std::string dir = test::temp_path("sized-folder");
  ui.dialogs.export_size = ExportSizeChoice::kWide;
  export_through_dialog(PathDialog::kExportAllPng, dir);
  EXPECT_EQ(test::load_png_rgb(dir + "/weights.png").w, 1920);
  EXPECT_EQ(ui.exports.written, std::filesystem::absolute(dir).lexically_normal().string());
  // A custom size out of range is refused in the dialog.
  ui.dialogs.export_size = ExportSizeChoice::kCustom;
  ui.dialogs.export_w = 10;
  ui.dialogs.path = PathDialog::kExportPng;
  ui.dialogs.buffer = test::temp_path("too-small.png");
  frames(2);
  press(ImGui::GetKeyIndex(ImGuiKey_Enter));
  frames(1);
  EXPECT_FALSE(ui.exports.job.running());
  EXPECT_NE(ui.dialogs.error.find("size"), std::string::npos) << ui.dialogs.error;
}

// The scale render/color_scale.h describes, derived here from the cells with plain loops: signed
// data spans the signed map symmetric around 0; weights span [0, 1] up to 32 keys, else [0,
// largest]; other data spans [min, max] (a constant stage one unit around its value); −∞ and
// other non-finite cells are left out.
ColorScale expected_scale(const UiSettings& s, StageId step, const Matrix& m) {
  double mn = INFINITY, mx = -INFINITY;
  for (int r = 0; r < m.rows(); ++r)
    for (int c = 0; c < m.cols(); ++c)
      if (std::isfinite(m(r, c))) {
        mn = std::min(mn, double(m(r, c)));
        mx = std::max(mx, double(m(r, c)));
      }
  if (mn > mx) return {s.colormap, 0.0, 1.0};
  if (mn < 0) {
    const double a = std::max(-mn, std::fabs(mx));
    return {s.signed_colormap, -a, a};
  }
  if (step == StageId::kWeights) return {s.colormap, 0.0, m.cols() <= 32 ? 1.0 : mx};
  if (mn == mx) return {s.colormap, mn - 0.5, mx + 0.5};
  return {s.colormap, mn, mx};
}

TEST(ColourScale, TheAppAndTheExporterFollowTheRuleOnEveryStage) {
  UiSettings settings;
  int signed_stages = 0, unit_stages = 0;
  for (const std::string map : {"viridis", "magma"}) {
    settings.colormap = map;
    for (const ExampleInfo& ex : list_examples()) {
      std::string error;
      auto s = load_example(ex.name, error);
      ASSERT_TRUE(s) << error;
      AppState st;
      ASSERT_TRUE(st.load_example(ex.name));
      const AttentionTrace& t = st.trace();
      for (const TraceStep& step : t.steps) {
        SCOPED_TRACE(ex.name + " " + stage_name(step.id));
        const int head = 0;
        HeatmapOptions o;
        o.step = step.id;
        o.head = head;
        o.maps = colormaps(settings);
        MatrixLayout L;
        ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
        const Matrix& m = t.head(step, head);
        const ColorScale want = expected_scale(settings, step.id, m);
        signed_stages += want.lo < 0;
        unit_stages += want.lo == 0 && want.hi == 1;
        const ColorScale app = color_scale_for(settings, step.id, m);
        EXPECT_EQ(app.map, want.map);
        EXPECT_DOUBLE_EQ(app.lo, want.lo);
        EXPECT_DOUBLE_EQ(app.hi, want.hi);
        EXPECT_EQ(L.scale.map, want.map);
        EXPECT_DOUBLE_EQ(L.scale.lo, want.lo);
        EXPECT_DOUBLE_EQ(L.scale.hi, want.hi);
      }
    }
  }
  // The examples exercise both kinds of scale.
  EXPECT_GT(signed_stages, 0);
  EXPECT_GT(unit_stages, 0);
  // The case: a weight of 0.67 is one colour on screen and on the slide.
  Matrix w(1, 3);
  w << 0.67f, 0.33f, 0.0f;
  EXPECT_EQ(color_scale_for(settings, StageId::kWeights, w).hi, 1.0);
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

TEST_F(Headless, TypingIntoTablesGoesThroughValidationAndUndo) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kScores);
  frames(3);
  auto type_into = [&](const std::string& key, const char* text) {
    ASSERT_TRUE(ui.editor.cell_rects.count(key)) << key;
    const ImVec4 r = ui.editor.cell_rects.at(key);
    click({(r.x + r.z) / 2, (r.y + r.w) / 2});
    ImGui::GetIO().AddInputCharactersUTF8(text);
    frame();
    press(ImGui::GetKeyIndex(ImGuiKey_Enter));
    frames(2);
  };
  // Q row 1 ("is"), column 2 holds 0.3 in the seed's table.
  for (const char* bad : {"abc", "nan", "inf"}) {
    type_into("Q-0:1:2", bad);
    EXPECT_TRUE(state.message_is_error()) << bad;
    EXPECT_NE(state.message().find("Q [1, 2]"), std::string::npos) << state.message();
    EXPECT_FLOAT_EQ((*state.tensor(Tensor::kQ, 0))(1, 2), 0.3f) << bad;
  }
  EXPECT_FALSE(state.can_undo());
  type_into("Q-0:1:2", "0.75");
  EXPECT_FLOAT_EQ((*state.tensor(Tensor::kQ, 0))(1, 2), 0.75f);
  // scores[1][0] = q_is · k_Fear = 0.5·0.3 + 0.2·0.5 + 0.75·0.2, by hand.
  EXPECT_NEAR(state.trace().head(StageId::kScores, 0)(1, 0), 0.15 + 0.1 + 0.15, 1e-6);
  type_into("Tokens:tok:2", "dog");
  EXPECT_EQ(state.trace().query_tokens[2], "dog");
  press(ImGui::GetKeyIndex(ImGuiKey_Z), true);
  press(ImGui::GetKeyIndex(ImGuiKey_Z), true);
  EXPECT_FLOAT_EQ((*state.tensor(Tensor::kQ, 0))(1, 2), 0.3f);
  EXPECT_EQ(state.trace().query_tokens[2], "the");
}

}  // namespace
}  // namespace attn

namespace attn {
namespace {

// The small defects, each where a test can see it.

// The mouse wheel zooms even a 3×3 heatmap (about the cursor), and the panel does not scroll.
TEST_F(Headless, TheWheelZoomsASmallHeatmap) {
  ASSERT_TRUE(state.load_example("fear-is-the"));
  state.set_stage(StageId::kWeights);
  frames(4);
  HeatmapViewport& v = ui.views["main"];
  ASSERT_TRUE(v.drawn);
  ASSERT_EQ(v.rows, 3);
  EXPECT_EQ(v.zoom, 1.0f);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = v.cell_center(1, 1);
  frame();
  io.MouseWheel = 2;
  frame();
  io.MouseWheel = 0;
  frames(2);
  EXPECT_GT(v.zoom, 1.3f);
  io.MousePos = {-FLT_MAX, -FLT_MAX};
}

// An export is suggested as a full path named after the example, the stage and the head, not a
// bare "weights.png" in whatever the working folder is.
TEST_F(Headless, ExportSuggestsAFullPathNamedAfterWhatItShows) {
  ASSERT_TRUE(state.load_example("gqa"));
  state.set_stage(StageId::kWeights);
  state.set_head(2);
  const std::string p = suggested_export_path(state, "png");
  EXPECT_TRUE(std::filesystem::path(p).is_absolute()) << p;
  EXPECT_EQ(std::filesystem::path(p).filename().string(), "gqa-weights-h2.png");
  EXPECT_EQ(std::filesystem::path(suggested_export_path(state, "")).filename().string(),
            "gqa-stages");
}

// The Debug menu (ImGui demo, metrics) is for developers: a flag or ATTN_DEBUG, never by default.
TEST(DebugMenu, OnlyWithTheFlagOrTheEnvironmentVariable) {
  EXPECT_FALSE(debug_menu_wanted(false, nullptr));
  EXPECT_FALSE(debug_menu_wanted(false, ""));
  EXPECT_FALSE(debug_menu_wanted(false, "0"));
  EXPECT_TRUE(debug_menu_wanted(false, "1"));
  EXPECT_TRUE(debug_menu_wanted(true, nullptr));
  AppState st;
  Ui ui(st);
  EXPECT_FALSE(ui.debug_menu);
}

}  // namespace
}  // namespace attn
