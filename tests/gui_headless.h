// The Dear ImGui context the headless GUI tests draw into: no window, no renderer, the app's
// fonts and light theme, and the GLFW key map so keys can be simulated; and the fixture that
// draws the whole app into it frame by frame.
#pragma once

#include <gtest/gtest.h>
#include <imgui.h>

#include <cfloat>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "gui/gui_setup.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"

namespace attn::test {

inline void create_headless_imgui(Ui& ui) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = {1600, 1000};
  io.IniFilename = nullptr;
  io.DeltaTime = 1.0f / 60;
  // As the app's OpenGL 3 renderer (imgui_impl_opengl3 with GL 3.3 sets it): a window's mesh may
  // pass 65,536 vertices, drawn in parts with a vertex offset.
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  // The key map the GLFW backend installs (GLFW key codes).
  const std::pair<ImGuiKey, int> keys[] = {{ImGuiKey_Tab, 258},        {ImGuiKey_LeftArrow, 263},
                                           {ImGuiKey_RightArrow, 262}, {ImGuiKey_UpArrow, 265},
                                           {ImGuiKey_DownArrow, 264},  {ImGuiKey_PageUp, 266},
                                           {ImGuiKey_PageDown, 267},   {ImGuiKey_Home, 268},
                                           {ImGuiKey_End, 269},        {ImGuiKey_Insert, 260},
                                           {ImGuiKey_Delete, 261},     {ImGuiKey_Backspace, 259},
                                           {ImGuiKey_Space, 32},       {ImGuiKey_Enter, 257},
                                           {ImGuiKey_Escape, 256},     {ImGuiKey_KeyPadEnter, 335},
                                           {ImGuiKey_A, 65},           {ImGuiKey_C, 67},
                                           {ImGuiKey_V, 86},           {ImGuiKey_X, 88},
                                           {ImGuiKey_Y, 89},           {ImGuiKey_Z, 90}};
  for (auto [k, code] : keys) io.KeyMap[k] = code;
  load_fonts(ui, ui.settings.font_px);
  apply_theme(true, 1.0f);
}

// A test with the app's state and its Ui in a headless context. frame() draws the whole app
// once as app_window.cpp does: fonts rebuilt when their size changed, background results polled.
class HeadlessApp : public ::testing::Test {
 protected:
  void SetUp() override { create_headless_imgui(ui); }
  void TearDown() override { ImGui::DestroyContext(); }

  // Drawn each frame before the app (e.g. a panel that sits in a tab not currently shown).
  virtual void before_app() {}

  void frame() {
    ImGuiIO& io = ImGui::GetIO();
    io.DeltaTime = 1.0f / 60;
    if (ui.fonts.built_px != ui.settings.font_px) load_fonts(ui, ui.settings.font_px);
    state.poll();
    ImGui::NewFrame();
    before_app();
    draw_app(ui);
    ImGui::Render();
    ASSERT_NE(ImGui::GetDrawData(), nullptr);
  }
  void frames(int n) {
    for (int i = 0; i < n; ++i) frame();
  }
  // Frames until the windows' work is in — a model's run, and what its tabs compute from it off
  // the UI thread — and two at least: a tab selected takes the tab bar's next frame to show, and
  // asks for its view as it is drawn. A frame checked as a view arrives would see its window's
  // content size of the frame before (the language model's Block tab was once seen cut so, in a
  // fresh-clone CI run on a loaded machine). The fonts stay as they are (a presentation screen's).
  void settle() {
    for (int i = 0; i < 2000 && (i < 2 || ui.working()); ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      state.poll();
      ImGui::GetIO().DeltaTime = 1.0f / 60;
      ImGui::NewFrame();
      draw_app(ui);
      ImGui::Render();
    }
  }
  // The screen size of the frames that follow, with the fonts and theme rebuilt for it as
  // app_window.cpp does (the font size depends on the screen in presentation mode).
  void resize_to(int w, int h) {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = {static_cast<float>(w), static_cast<float>(h)};
    const float px = ui.font_px(io.DisplaySize.x, io.DisplaySize.y);
    if (ui.fonts.built_px != px) load_fonts(ui, px);
    if (theme_px_ != px || theme_light_ != ui.settings.light_theme) {
      apply_theme(ui.settings.light_theme, px / 20.0f);
      theme_px_ = px;
      theme_light_ = ui.settings.light_theme;
    }
  }
  // Presses and releases the key with this index (ImGui::GetKeyIndex(ImGuiKey_…)).
  void press(int key, bool ctrl = false, bool shift = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeyCtrl = ctrl;
    io.KeyShift = shift;
    io.KeysDown[key] = true;
    frame();
    io.KeysDown[key] = false;
    frame();
    io.KeyCtrl = io.KeyShift = false;
  }
  // Moves the mouse to p, clicks, and moves it away.
  void click(ImVec2 p) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = p;
    frame();
    io.MouseDown[0] = true;
    frame();
    io.MouseDown[0] = false;
    frame();
    io.MousePos = {-FLT_MAX, -FLT_MAX};
    frame();
  }

  // Runs a path dialog of `kind` on `path` as a user would (Enter), waits for its export and
  // lets the status bar pick the result up.
  void export_through_dialog(PathDialog kind, const std::string& path) {
    ui.dialogs.path = kind;
    ui.dialogs.buffer = path;
    frames(2);
    press(ImGui::GetKeyIndex(ImGuiKey_Enter));
    ASSERT_TRUE(ui.exports.job.running()) << static_cast<int>(kind) << ": " << ui.dialogs.error;
    ui.exports.job.wait();
    frames(2);
    EXPECT_FALSE(state.message_is_error()) << state.message();
  }

  // Opens a model folder (or a shipped model's name) in the language-model window as
  // `gui --model FOLDER [--text TEXT]` does, with fear-is-the in the stepper behind it.
  void open_lm(const std::string& model, const std::string& text = "") {
    GuiOptions o;
    o.model = model;
    o.text = text;
    std::string error;
    ASSERT_TRUE(setup_lm_from_options(ui, o, error)) << error;
    ASSERT_TRUE(state.load_example("fear-is-the"));
  }

  AppState state;
  Ui ui{state};

 private:
  float theme_px_ = 0;
  bool theme_light_ = true;
};

}  // namespace attn::test
