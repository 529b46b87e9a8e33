// Font files for the app's ImGui font atlas, read and checked before ImGui sees them: ImGui bakes
// fonts with stb_truetype, which trusts every offset in a file, so a truncated, garbage or hostile
// font from $ATTN_FONT_DIR would crash the app (docs/robustness.md).
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>

namespace attn {

// A font file holds at most this many bytes (DejaVuSans.ttf is 0.7 MB, a CJK font about 20 MB).
constexpr uint64_t kMaxFontFileBytes = 32ull * 1024 * 1024;

// Checks that `bytes` are a font ImGui can bake the glyphs `ranges` (0-terminated pairs, as
// ImGui's) of: FreeType opens it as a scalable face with glyphs for the basic Latin letters and
// digits and loads them; stb_truetype finds its first font, whose table directory, required tables
// and glyph outlines lie inside the file (no composite containing itself, no glyph of the ranges
// more than four times the font's height), and initialises it; and a trial bake of the ranges
// in a child process (in case stb reads something the checks did not foresee) ends normally
// within 10 s. "" when it is usable, else why not.
std::string check_font_bytes(const std::string& bytes, const ImWchar* ranges);

// The same without the trial bake (the fuzz target reads every outline with stb instead).
std::string check_font_structure(const std::string& bytes, const ImWchar* ranges);

// Reads `path` through read_input_file (a regular file of at most kMaxFontFileBytes: a FIFO,
// /dev/zero or a folder is refused without waiting) and checks it with check_font_bytes. On
// failure `error` says "cannot use font 'PATH': WHY".
bool read_font_file(const std::string& path, const ImWchar* ranges, std::string& bytes,
                    std::string& error);

}  // namespace attn
