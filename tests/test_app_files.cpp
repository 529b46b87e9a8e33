// Issue 28, classes 9 and 10: the app's imgui.ini and its fonts are read through the project's
// bounded reader and checked before ImGui sees them. A FIFO, /dev/zero, a folder, an oversized
// or hostile file is refused without waiting and without ImGui allocating what it claims; a
// truncated, garbage or lying font is refused before stb_truetype reads it (docs/robustness.md).
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gui/files/font_file.h"
#include "gui/files/imgui_ini.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::read_bytes;
using test::temp_dir;
using test::temp_path;
using test::write_bytes;

// An ImGui context with no window and no renderer, as the app has before its first frame.
struct Context {
  ImGuiContext* ctx = ImGui::CreateContext();
  Context() {
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = {1280, 720};
    io.DeltaTime = 1.0f / 60;
    unsigned char* px = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsAlpha8(&px, &w, &h);
  }
  ~Context() { ImGui::DestroyContext(ctx); }
};

std::string fifo(const std::string& name) {
  const std::string p = temp_path(name);
  ::unlink(p.c_str());
  EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
  return p;
}

// Runs `f` and fails when it takes longer than a few seconds (a FIFO read would never return;
// the test would then hang until CTest's timeout, also a failure).
template <typename F>
void quickly(F f, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0)
      << what;
}

TEST(ImguiIni, FilesThatAreNotRegularOrTooLargeAreRefusedWithoutWaiting) {
  Context c;
  std::string error;
  quickly([&] { EXPECT_FALSE(load_imgui_ini(fifo("imgui-fifo.ini"), error)); }, "FIFO");
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  EXPECT_FALSE(load_imgui_ini("/dev/zero", error));
  EXPECT_NE(error.find("character device"), std::string::npos) << error;
  EXPECT_FALSE(load_imgui_ini(temp_dir("imgui-folder"), error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  const std::string big = temp_path("big.ini");
  ASSERT_TRUE(write_bytes(big, std::string(kMaxImguiIniBytes + 1, '\n')));
  EXPECT_FALSE(load_imgui_ini(big, error));
  EXPECT_NE(error.find("at most"), std::string::npos) << error;
  // No file yet is a first start, not an error.
  EXPECT_TRUE(load_imgui_ini(temp_path("none.ini"), error));
}

TEST(ImguiIni, TableSectionsClaimingHugeColumnCountsAreDropped) {
  // 108 KB of [Table] sections each claiming 10^8 columns: ImGui would allocate 2.5–4 GB.
  std::string text;
  for (unsigned i = 0; text.size() < 108 * 1024; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "[Table][0x%08X,100000000]\nColumn 0  Width=10\n", i + 1);
    text += line;
  }
  text += "[Window][Kept]\nPos=10,20\nSize=300,200\n";
  int dropped = 0;
  const std::string clean = sanitize_imgui_ini(text, &dropped);
  EXPECT_GT(dropped, 1000);
  EXPECT_EQ(clean, "[Window][Kept]\nPos=10,20\nSize=300,200\n");
  const std::string path = temp_path("tables.ini");
  ASSERT_TRUE(write_bytes(path, text));
  Context c;
  std::string error;
  ASSERT_TRUE(load_imgui_ini(path, error)) << error;
  ImGuiContext& g = *c.ctx;
  EXPECT_EQ(g.SettingsTables.size(), 0);
  ASSERT_NE(ImGui::FindWindowSettings(ImHashStr("Kept")), nullptr);
  EXPECT_EQ(ImGui::FindWindowSettings(ImHashStr("Kept"))->Pos.x, 10);
}

TEST(ImguiIni, SectionsAreCappedAndControlBytesDropped) {
  std::string text;
  for (int i = 0; i < 3 * kMaxImguiIniSections; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "[Table][0x%08X,64]\nColumn 63 Width=10\n", i + 1);
    text += line;
  }
  int dropped = 0;
  const std::string clean = sanitize_imgui_ini(text, &dropped);
  EXPECT_EQ(dropped, 2 * kMaxImguiIniSections);
  Context c;
  ImGui::LoadIniSettingsFromMemory(clean.data(), clean.size());
  ImGuiContext& g = *c.ctx;
  // 1000 tables of 64 columns: well under a few MB whatever the file says.
  EXPECT_LT(g.SettingsTables.size(), 4 << 20);
  EXPECT_GT(g.SettingsTables.size(), 0);
  // A NUL (as /dev/zero's bytes would be) or another control byte drops its line only.
  const std::string nul = std::string("[Window][A]\nPos=1,2\n", 20) + std::string("\0\0\0", 3) +
                          "\nSize=5,6\n[Unknown][x]\nfoo\n";
  EXPECT_EQ(sanitize_imgui_ini(nul), "[Window][A]\nPos=1,2\nSize=5,6\n");
}

TEST(ImguiIni, ALayoutSavedIsReadBack) {
  const std::string path = temp_path("layout.ini");
  std::string error;
  {
    Context c;
    ImGui::NewFrame();
    ImGui::SetNextWindowPos({123, 45});
    ImGui::SetNextWindowSize({300, 200});
    ImGui::Begin("Lesson");
    ImGui::End();
    ImGui::Render();
    ImGui::MarkIniSettingsDirty();
    ASSERT_TRUE(save_imgui_ini(path, error)) << error;
  }
  EXPECT_NE(read_bytes(path).find("[Window][Lesson]"), std::string::npos);
  Context c;
  ASSERT_TRUE(load_imgui_ini(path, error)) << error;
  const ImGuiWindowSettings* s = ImGui::FindWindowSettings(ImHashStr("Lesson"));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->Pos.x, 123);
  EXPECT_EQ(s->Size.y, 200);
}

// ---------------------------------------------------------------- fonts

const ImWchar kRanges[] = {0x0020, 0x00FF, 0x0300, 0x036F, 0x0370, 0x03FF, 0x1D00, 0x1DBF,
                           0x1E00, 0x1EFF, 0x2000, 0x22FF, 0x2500, 0x26FF, 0};
const char* kDejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

uint32_t be32(const std::string& b, size_t at) {
  return (uint32_t(uint8_t(b[at])) << 24) | (uint32_t(uint8_t(b[at + 1])) << 16) |
         (uint32_t(uint8_t(b[at + 2])) << 8) | uint8_t(b[at + 3]);
}
uint32_t be16(const std::string& b, size_t at) {
  return (uint32_t(uint8_t(b[at])) << 8) | uint8_t(b[at + 1]);
}
void put32(std::string& b, size_t at, uint32_t v) {
  for (int k = 0; k < 4; ++k) b[at + k] = char(v >> (24 - 8 * k));
}
// The directory record of table `tag` (its offset is at +8, its length at +12).
size_t record_of(const std::string& b, const char* tag) {
  const uint32_t n = be16(b, 4);
  for (uint32_t i = 0; i < n; ++i)
    if (b.compare(12 + 16 * i, 4, tag) == 0) return 12 + 16 * i;
  ADD_FAILURE() << "no table " << tag;
  return 0;
}

// Bakes the bytes in this process as the app would: only for fonts the check accepted.
void bake_here(const std::string& bytes) {
  ImFontAtlas atlas;
  ImFontConfig cfg;
  cfg.FontDataOwnedByAtlas = false;
  ASSERT_NE(atlas.AddFontFromMemoryTTF(const_cast<char*>(bytes.data()), int(bytes.size()), 20, &cfg,
                                       kRanges),
            nullptr);
  EXPECT_TRUE(atlas.Build());
}

TEST(FontFile, TheFontsTheAppShipsWithAreAccepted) {
  for (const char* name : {"DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf"}) {
    const std::string path = std::string("/usr/share/fonts/truetype/dejavu/") + name;
    std::string bytes, error;
    if (::access(path.c_str(), R_OK) != 0) GTEST_SKIP() << "fonts-dejavu-core is not installed";
    ASSERT_TRUE(read_font_file(path, kRanges, bytes, error)) << error;
    bake_here(bytes);
  }
  const std::string tiny =
      read_bytes(std::string(ATTN_SOURCE_DIR) + "/tests/fuzz/corpus/font/tiny.ttf");
  EXPECT_EQ(check_font_bytes(tiny, kRanges), "");
}

TEST(FontFile, FilesThatAreNotRegularAreRefusedWithoutWaiting) {
  std::string bytes, error;
  quickly([&] { EXPECT_FALSE(read_font_file(fifo("font.ttf"), kRanges, bytes, error)); }, "FIFO");
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  EXPECT_FALSE(read_font_file("/dev/zero", kRanges, bytes, error));
  EXPECT_NE(error.find("character device"), std::string::npos) << error;
  EXPECT_FALSE(read_font_file(temp_dir("font-folder"), kRanges, bytes, error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  const std::string empty = temp_path("empty.ttf");
  ASSERT_TRUE(write_bytes(empty, ""));
  EXPECT_FALSE(read_font_file(empty, kRanges, bytes, error));
  EXPECT_NE(error.find("cannot use font"), std::string::npos) << error;
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

TEST(FontFile, BrokenAndLyingFontsAreRefusedBeforeStbReadsThem) {
  if (::access(kDejaVu, R_OK) != 0) GTEST_SKIP() << "fonts-dejavu-core is not installed";
  const std::string good = read_bytes(kDejaVu);
  std::vector<std::pair<std::string, std::string>> cases;  // what, bytes
  std::mt19937 rng(28);
  std::string garbage(4096, '\0');
  for (char& ch : garbage) ch = char(rng());
  cases.push_back({"garbage", garbage});
  cases.push_back({"garbage with a TrueType tag", std::string("\0\1\0\0", 4) + garbage});
  for (size_t cut : {size_t{11}, size_t{200}, good.size() / 2, good.size() - 1000})
    cases.push_back({"truncated to " + std::to_string(cut), good.substr(0, cut)});
  std::string far = good;
  put32(far, record_of(far, "glyf") + 8, 0xFFFFFF00u);
  cases.push_back({"glyf past the end", far});
  std::string longer = good;
  put32(longer, record_of(longer, "hmtx") + 12, uint32_t(good.size()));
  cases.push_back({"hmtx longer than the file", longer});
  std::string tables = good;
  tables[4] = char(0x7F);  // 32,000 tables
  cases.push_back({"a directory longer than the file", tables});
  // A glyph's loca entry past the glyf table: FreeType only reads a glyph when asked, so it
  // accepts this; stb would read past the file while baking.
  std::string loca = good;
  {
    const size_t head = be32(good, record_of(good, "head") + 8);
    const bool long_loca = be16(good, head + 50) == 1;
    const size_t at = be32(good, record_of(good, "loca") + 8);
    const uint32_t glyphs = be16(good, be32(good, record_of(good, "maxp") + 8) + 4);
    const size_t g = glyphs - 2;
    if (long_loca)
      put32(loca, at + 4 * g, 0x7FFFFFF0u);
    else
      loca[at + 2 * g] = loca[at + 2 * g + 1] = char(0xFF);
  }
  cases.push_back({"a glyph past the glyf table", loca});
  std::string cmap = good;
  {
    const size_t at = be32(good, record_of(good, "cmap") + 8);
    const uint32_t n = be16(good, at + 2);
    for (uint32_t i = 0; i < n; ++i) put32(cmap, at + 4 + 8 * i + 4, 0x7FFFFFF0u);
  }
  cases.push_back({"character maps past the end", cmap});
  std::string height = good;
  {
    const size_t hhea = be32(good, record_of(good, "hhea") + 8);
    height[hhea + 4] = height[hhea + 5] = 0;  // ascent 0
    height[hhea + 6] = height[hhea + 7] = 0;  // descent 0
  }
  cases.push_back({"no height", height});
  for (const auto& c : cases) {
    // Named copies: a lambda cannot capture structured bindings in C++17 (clang refuses).
    const std::string& what = c.first;
    const std::string& bytes = c.second;
    SCOPED_TRACE(what);
    std::string why;
    quickly([&] { why = check_font_bytes(bytes, kRanges); }, what);
    EXPECT_FALSE(why.empty());
    const std::string path = temp_path("broken.ttf");
    ASSERT_TRUE(write_bytes(path, bytes));
    std::string read, error;
    EXPECT_FALSE(read_font_file(path, kRanges, read, error));
    EXPECT_EQ(error.rfind("cannot use font '" + path + "': ", 0), 0u) << error;
    EXPECT_TRUE(read.empty());
  }
}

TEST(FontFile, ACompositeGlyphThatContainsItselfIsRefused) {
  // The seed font's last glyph is made of glyphs 2 and 3; made of itself, stb would recurse
  // until the stack ran out.
  std::string tiny = read_bytes(std::string(ATTN_SOURCE_DIR) + "/tests/fuzz/corpus/font/tiny.ttf");
  ASSERT_EQ(check_font_structure(tiny, kRanges), "");
  const uint32_t glyphs = be16(tiny, be32(tiny, record_of(tiny, "maxp") + 8) + 4);
  const size_t glyf = be32(tiny, record_of(tiny, "glyf") + 8);
  const size_t loca = be32(tiny, record_of(tiny, "loca") + 8);
  const size_t last = glyf + be32(tiny, loca + 4 * (glyphs - 1));
  ASSERT_EQ(be16(tiny, last), 0xFFFFu);  // a composite
  tiny[last + 10 + 2] = char((glyphs - 1) >> 8);
  tiny[last + 10 + 3] = char((glyphs - 1) & 0xFF);
  const std::string why = check_font_structure(tiny, kRanges);
  EXPECT_NE(why.find("contains itself"), std::string::npos) << why;
}

}  // namespace
}  // namespace attn
