// The app's window layout (imgui.ini) read and written by the project's own file code rather
// than ImGui's: ImGui 1.86 opens the file with fopen (a FIFO there hangs the app), reads whatever
// size it reports (/dev/zero) and allocates what a [Table] line claims (docs/robustness.md).
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// imgui.ini holds at most this many bytes and sections (a layout of every window and table the
// app has is about 4 KB and 40 sections).
constexpr uint64_t kMaxImguiIniBytes = 256 * 1024;
constexpr int kMaxImguiIniSections = 1000;
// ImGui 1.86's IMGUI_TABLE_MAX_COLUMNS: a [Table][0xID,N] section claiming more is dropped.
constexpr int kMaxImguiTableColumns = 64;

// The sections of `text` ImGui can read in memory bounded by the text: [Window][NAME] and
// [Table][0xID,N] with 1 <= N <= kMaxImguiTableColumns, at most kMaxImguiIniSections of them, and
// their lines; lines with control characters (a NUL ends ImGui's parse early) are dropped. Sets
// `dropped` to how many sections were left out.
std::string sanitize_imgui_ini(const std::string& text, int* dropped = nullptr);

// Reads `path` through read_input_file (regular file, at most kMaxImguiIniBytes) and hands the
// sanitized text to ImGui::LoadIniSettingsFromMemory. A missing file is no error (a first start).
// Needs a current ImGui context, before the first NewFrame.
bool load_imgui_ini(const std::string& path, std::string& error);

// ImGui::SaveIniSettingsToMemory written to `path` atomically; clears io.WantSaveIniSettings.
bool save_imgui_ini(const std::string& path, std::string& error);

}  // namespace attn
