// The Dear ImGui context the headless GUI tests draw into: no window, no renderer, the app's
// fonts and light theme, and the GLFW key map so keys can be simulated.
#pragma once

#include <imgui.h>

#include <utility>

#include "gui/gui_setup.h"
#include "gui/ui.h"

namespace attn::test {

inline void create_headless_imgui(Ui& ui) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = {1600, 1000};
  io.IniFilename = nullptr;
  io.DeltaTime = 1.0f / 60;
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

}  // namespace attn::test
