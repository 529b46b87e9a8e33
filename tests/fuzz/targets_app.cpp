// The fuzz targets of lessons and the app's own files (see targets.h): the lesson reader, the
// imgui.ini reader with ImGui reading what it keeps, and the font check with ImGui baking what
// it accepts.
#include <imgui.h>
#include <imgui_internal.h>

// stb_truetype's own code, static in this file and so instrumented with the fuzz build.
#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#include <stb_truetype.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gui/files/font_file.h"
#include "gui/files/imgui_ini.h"
#include "lessons/lesson.h"
#include "targets.h"

namespace attn::fuzz {
namespace {

// The app's ranges (gui/ui_style.cpp).
const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00, 0x1DBF,
                           0x1E00, 0x1EFF, 0x2000, 0x22FF, 0x2500, 0x26FF, 0};

}  // namespace

int lesson(const uint8_t* data, size_t size) {
  std::string error;
  // A folder that does not exist: relative scenario files name nothing.
  const std::optional<Lesson> l =
      parse_lesson(bytes_of(data, size), "/nonexistent/fuzz.json", error);
  if (!l) {
    if (error.empty()) broken("a refused lesson has no error", "");
    return 0;
  }
  if (l->steps.empty() || l->steps.size() > kMaxLessonSteps) broken("step count", "");
  if (l->title.size() > kMaxLessonTitleBytes || l->summary.size() > kMaxLessonLineBytes)
    broken("a lesson string over its limit", l->title);
  for (const LessonStep& s : l->steps) {
    if (s.title.size() > kMaxLessonTitleBytes || s.formula.size() > kMaxLessonLineBytes ||
        s.text.size() > kMaxLessonParagraphs)
      broken("a step string over its limit", s.title);
    for (const std::string& p : s.text)
      if (p.size() > kMaxLessonTextBytes) broken("a paragraph over its limit", "");
    if (s.question) {
      if (s.question->prompt.size() > kMaxLessonLineBytes ||
          s.question->explanation.size() > kMaxLessonTextBytes ||
          s.question->choices.size() > kMaxLessonChoices)
        broken("a question over its limits", s.question->prompt);
      for (const Choice& c : s.question->choices)
        if (c.text.size() > kMaxLessonLineBytes) broken("a choice over its limit", "");
    }
  }
  return 0;
}

int imgui_ini(const uint8_t* data, size_t size) {
  const std::string text = bytes_of(data, size);
  if (text.size() > kMaxImguiIniBytes) return 0;  // the reader refuses these before this point
  const std::string clean = sanitize_imgui_ini(text);
  if (sanitize_imgui_ini(clean) != clean) broken("sanitizing twice changes the text", clean);
  ImGuiContext* ctx = ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  ImGui::LoadIniSettingsFromMemory(clean.data(), clean.size());
  ImGuiContext& g = *ctx;
  if (g.SettingsTables.size() > static_cast<int>(kMaxImguiIniBytes) * 16)
    broken("table settings grew past the file's size", std::to_string(g.SettingsTables.size()));
  size_t saved = 0;
  ImGui::SaveIniSettingsToMemory(&saved);
  ImGui::DestroyContext(ctx);
  return 0;
}

int font(const uint8_t* data, size_t size) {
  const std::string bytes = bytes_of(data, size);
  if (!check_font_structure(bytes, kRanges).empty()) return 0;
  // Accepted: every read stb_truetype makes of the font's tables, character map, metrics and
  // outlines must be inside it. stb is compiled into this file (sanitized, unlike the system
  // library ImGui uses), so a read past the bytes is an AddressSanitizer report. Rasterising is
  // left to the app's trial bake in a child process (font_file.h).
  std::vector<unsigned char> copy(bytes.begin(), bytes.end());  // exactly the font's size
  stbtt_fontinfo info;
  if (!stbtt_InitFont(&info, copy.data(), stbtt_GetFontOffsetForIndex(copy.data(), 0)))
    broken("an accepted font does not initialise", "");
  for (const ImWchar* r = kRanges; r[0]; r += 2)
    for (int c = r[0]; c <= r[1]; ++c) {
      const int g = stbtt_FindGlyphIndex(&info, c);
      if (g == 0) continue;
      int advance = 0, lsb = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      stbtt_GetGlyphHMetrics(&info, g, &advance, &lsb);
      stbtt_GetGlyphBox(&info, g, &x0, &y0, &x1, &y1);
      stbtt_vertex* v = nullptr;
      stbtt_GetGlyphShape(&info, g, &v);
      stbtt_FreeShape(&info, v);
    }
  return 0;
}

}  // namespace attn::fuzz
