// Fonts and themes: DejaVu (from fonts-dejavu-core) so √ × Σ −∞ ≤ ᵀ and subscripts render, sizes
// that scale the whole UI, and a light theme for projectors beside a dark one.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attention/format.h"
#include "gui/files/font_file.h"
#include "gui/ui.h"

namespace attn {
namespace {

// Latin, combining marks (the tilde of Linformer's k̃, drawn over the letter before it: the
// marks have no advance), Greek, super/subscripts (ᵀ ₖ), Latin Extended Additional (Linformer's
// Ṽ is one precomposed letter), general punctuation (− … ·), arrows, mathematical operators
// (√ ∞ ≤ Σ ×), box and geometric shapes (▶ ◀ ●).
const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00, 0x1DBF,
                           0x1E00, 0x1EFF, 0x2000, 0x22FF, 0x2500, 0x26FF, 0};

// Digits, signs and the few symbols a cell shows (−∞ ≈ … ·): a small range, so the cell-number
// font can be baked large for a projector without growing the atlas much.
const ImWchar kNumberRanges[] = {0x0020, 0x007E, 0x00B7, 0x00B7, 0x2026, 0x2026, 0x2212,
                                 0x2212, 0x221E, 0x221E, 0x2248, 0x2248, 0};

const char* const kFontDirs[] = {"/usr/share/fonts/truetype/dejavu/", "/usr/share/fonts/dejavu/",
                                 "/usr/local/share/fonts/"};

// A font file read and checked once (font_file.h), kept for the process's life: ImGui bakes from
// these bytes on every font rebuild (the atlas does not own them), and a file that failed is
// not tried again. `why` says what was wrong with the files passed over.
struct LoadedFont {
  std::string bytes, why;
};

// $ATTN_FONT_DIR first, then Debian's folders (the exports find fonts through fontconfig): the
// first file named `file` that is a usable font.
const LoadedFont& find_font(const char* file) {
  static std::map<std::string, LoadedFont> loaded;
  auto [it, fresh] = loaded.try_emplace(file);
  if (!fresh) return it->second;
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ATTN_FONT_DIR"); env && *env) dirs.push_back(env);
  for (const char* d : kFontDirs) dirs.push_back(d);
  for (const std::string& d : dirs) {
    const std::string p = d + (d.back() == '/' ? "" : "/") + file;
    std::error_code ec;
    // Any kind of file is tried (a FIFO or a folder too, which the reader refuses without
    // waiting): only a name that is not there is passed over in silence.
    if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) continue;
    std::string error;
    if (read_font_file(p, kRanges, it->second.bytes, error)) return it->second;
    it->second.why += (it->second.why.empty() ? "" : "; ") + error;
  }
  return it->second;
}

ImFont* add(Ui& ui, const char* file, float px, const ImWchar* ranges = kRanges) {
  ImGuiIO& io = ImGui::GetIO();
  const LoadedFont& font = find_font(file);
  static std::set<std::string> warned;
  if (!font.why.empty() && warned.insert(file).second) {
    // Said once per file, on stderr and in the status bar; the app goes on with what it has.
    const std::string note =
        printable_text(font.why) +
        (font.bytes.empty() ? "; using the built-in font" : "; using the next one found");
    std::cerr << "warning: " << note << "\n";
    ui.state.set_message(note, true);
  }
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  cfg.OversampleV = 1;
  if (!font.bytes.empty()) {
    cfg.FontDataOwnedByAtlas = false;  // the bytes stay in find_font's cache
    void* data = const_cast<char*>(font.bytes.data());
    return io.Fonts->AddFontFromMemoryTTF(data, static_cast<int>(font.bytes.size()), px, &cfg,
                                          ranges);
  }
  // Without DejaVu the app still runs; the built-in font lacks the mathematical symbols.
  ImFontConfig d;
  d.SizePixels = px;
  return io.Fonts->AddFontDefault(&d);
}

}  // namespace

void load_fonts(Ui& ui, float px) {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ui.fonts.regular = add(ui, "DejaVuSans.ttf", px);
  ui.fonts.bold = add(ui, "DejaVuSans-Bold.ttf", px);
  ui.fonts.mono = add(ui, "DejaVuSansMono.ttf", px * 0.95f);
  ui.fonts.title = add(ui, "DejaVuSans-Bold.ttf", px * 1.35f);
  ui.fonts.narration = add(ui, "DejaVuSansMono.ttf", std::round(px * 0.85f));
  // Drawn scaled down to the cells; baked at the largest size a cell number takes.
  ui.fonts.cells =
      add(ui, "DejaVuSans.ttf", std::clamp(std::round(px * 2.2f), 24.0f, 128.0f), kNumberRanges);
  ui.fonts.built_px = px;
  io.FontDefault = ui.fonts.regular;
  io.Fonts->Build();
}

void apply_theme(bool light, float scale) {
  ImGuiStyle style;
  if (light)
    ImGui::StyleColorsLight(&style);
  else
    ImGui::StyleColorsDark(&style);
  style.WindowRounding = 6;
  style.FrameRounding = 4;
  style.GrabRounding = 4;
  style.TabRounding = 4;
  style.PopupRounding = 4;
  style.WindowPadding = {12, 10};
  style.FramePadding = {8, 5};
  style.ItemSpacing = {10, 7};
  style.WindowBorderSize = 1;
  style.FrameBorderSize = light ? 1.0f : 0.0f;
  ImVec4* c = style.Colors;
  if (light) {
    c[ImGuiCol_WindowBg] = {0.985f, 0.985f, 0.98f, 1};
    c[ImGuiCol_TitleBg] = {0.90f, 0.91f, 0.93f, 1};
    c[ImGuiCol_TitleBgActive] = {0.83f, 0.87f, 0.93f, 1};
    c[ImGuiCol_MenuBarBg] = {0.93f, 0.93f, 0.94f, 1};
    c[ImGuiCol_Button] = {0.90f, 0.91f, 0.94f, 1};
    c[ImGuiCol_ButtonHovered] = {0.78f, 0.85f, 0.96f, 1};
    c[ImGuiCol_ButtonActive] = {0.65f, 0.76f, 0.94f, 1};
    c[ImGuiCol_Header] = {0.80f, 0.86f, 0.96f, 1};
    c[ImGuiCol_Text] = {0.08f, 0.09f, 0.12f, 1};
    c[ImGuiCol_TextDisabled] = {0.40f, 0.42f, 0.47f, 1};
  } else {
    c[ImGuiCol_WindowBg] = {0.10f, 0.105f, 0.12f, 1};
    c[ImGuiCol_TitleBgActive] = {0.16f, 0.22f, 0.33f, 1};
    c[ImGuiCol_Text] = {0.93f, 0.94f, 0.96f, 1};
    c[ImGuiCol_TextDisabled] = {0.60f, 0.62f, 0.67f, 1};
  }
  // Menus and lists open over the views: an opaque ground keeps their words readable on a
  // projector (the themes' popups let what is under them show through).
  c[ImGuiCol_PopupBg].w = 1;
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

}  // namespace attn
