// Font files checked before ImGui bakes them (see font_file.h). stb_truetype, which ImGui 1.86
// bakes with, reads every offset and count a file declares without comparing it with the file's
// size; so every table, cmap subtable, glyph offset and glyph outline stb will read is checked to
// lie inside the file first, the font must also open in FreeType, and a trial bake runs in a
// child process so that anything the checks miss ends that process, not the app.
#include "gui/files/font_file.h"

#include <fcntl.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <signal.h>
#include <stb_truetype.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "io/input_file.h"

namespace attn {
namespace {

// Big-endian reads; callers check the bounds first.
uint32_t u16(const std::string& b, uint64_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 8) |
         static_cast<unsigned char>(b[at + 1]);
}
int32_t s16(const std::string& b, uint64_t at) { return static_cast<int16_t>(u16(b, at)); }
uint32_t u32(const std::string& b, uint64_t at) { return (u16(b, at) << 16) | u16(b, at + 2); }

std::string hex4(int c) {
  char s[16];
  std::snprintf(s, sizeof s, "%04X", static_cast<unsigned>(c));
  return s;
}

struct Table {
  uint64_t offset = 0, length = 0;
  bool found = false;
  uint64_t end() const { return offset + length; }
};

// The font's tables as stb_truetype finds them (the first record with the tag).
struct Tables {
  Table cmap, head, hhea, hmtx, loca, glyf, maxp, cff;
};

std::string check_tables(const std::string& b, uint64_t start, Tables& t) {
  const uint64_t size = b.size();
  if (start + 12 > size) return "its table directory lies past the end of the file";
  const uint32_t count = u16(b, start + 4);
  if (start + 12 + 16ull * count > size)
    return "its table directory lists " + std::to_string(count) +
           " tables, more than the file holds";
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t rec = start + 12 + 16ull * i;
    Table table{u32(b, rec + 8), u32(b, rec + 12), true};
    const std::string tag = b.substr(rec, 4);
    if (table.end() > size)
      return "its table '" + tag + "' (offset " + std::to_string(table.offset) + ", length " +
             std::to_string(table.length) + ") lies past the end of the file (" +
             std::to_string(size) + " bytes)";
    for (auto [name, slot] : {std::pair<const char*, Table*>{"cmap", &t.cmap},
                              {"head", &t.head},
                              {"hhea", &t.hhea},
                              {"hmtx", &t.hmtx},
                              {"loca", &t.loca},
                              {"glyf", &t.glyf},
                              {"maxp", &t.maxp},
                              {"CFF ", &t.cff}})
      if (tag == name && !slot->found) *slot = table;
  }
  if (!t.glyf.found && t.cff.found)
    return "it has CFF (PostScript) outlines; the app bakes TrueType (glyf) outlines only";
  for (auto [name, table, min] : {std::tuple<const char*, Table*, uint64_t>{"cmap", &t.cmap, 4},
                                  {"head", &t.head, 54},
                                  {"hhea", &t.hhea, 36},
                                  {"hmtx", &t.hmtx, 4},
                                  {"loca", &t.loca, 4},
                                  {"glyf", &t.glyf, 0},
                                  {"maxp", &t.maxp, 6}}) {
    if (!table->found) return std::string("it has no '") + name + "' table";
    if (table->length < min)
      return std::string("its '") + name + "' table is " + std::to_string(table->length) +
             " bytes, too short";
  }
  return "";
}

// The cmap subtable stb_truetype picks (the last Unicode or Microsoft-Unicode record), and every
// read its lookup can make inside the cmap table.
std::string check_cmap(const std::string& b, const Table& cmap) {
  const uint32_t count = u16(b, cmap.offset + 2);
  if (4 + 8ull * count > cmap.length) return "its cmap lists more subtables than it holds";
  uint64_t map = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t rec = cmap.offset + 4 + 8ull * i;
    const uint32_t platform = u16(b, rec), encoding = u16(b, rec + 2);
    if (platform == 0 || (platform == 3 && (encoding == 1 || encoding == 10)))
      map = cmap.offset + u32(b, rec + 4);
  }
  if (map == 0) return "it has no Unicode character map";
  const uint64_t end = cmap.end();
  if (map + 4 > end) return "its Unicode character map lies outside the cmap table";
  const uint32_t format = u16(b, map);
  switch (format) {
    case 0:
      if (map + 6 + 256 > end) return "its character map (format 0) is truncated";
      return "";
    case 6:
      if (map + 10 > end || map + 10 + 2ull * u16(b, map + 8) > end)
        return "its character map (format 6) is truncated";
      return "";
    case 12:
    case 13:
      if (map + 16 > end || map + 16 + 12ull * u32(b, map + 12) > end)
        return "its character map (format " + std::to_string(format) + ") is truncated";
      return "";
    case 4: {
      if (map + 14 > end) return "its character map (format 4) is truncated";
      const uint32_t seg_x2 = u16(b, map + 6), segs = seg_x2 / 2;
      if (segs == 0 || seg_x2 % 2) return "its character map (format 4) has no segments";
      // stb's binary search steps by searchRange, entrySelector and rangeShift as written: they
      // must be the values the segment count gives, or it reads outside the arrays.
      uint32_t range = 1, selector = 0;
      while (range * 2 <= segs) range *= 2, ++selector;
      if (u16(b, map + 8) != 2 * range || u16(b, map + 10) != selector ||
          u16(b, map + 12) != seg_x2 - 2 * range)
        return "its character map (format 4) has a wrong search range";
      const uint64_t ends = map + 14, starts = ends + seg_x2 + 2, offsets = starts + 2ull * seg_x2;
      if (offsets + seg_x2 > end) return "its character map (format 4) is truncated";
      for (uint32_t s = 0; s < segs; ++s) {
        const uint32_t last = u16(b, ends + 2ull * s), first = u16(b, starts + 2ull * s);
        const uint32_t ro = u16(b, offsets + 2ull * s);
        if (ro == 0 || first > last) continue;
        if (offsets + 2ull * s + ro + 2ull * (last - first) + 2 > b.size())
          return "its character map (format 4) points past the end of the file";
      }
      return "";
    }
    default:
      return "its character map has format " + std::to_string(format) +
             ", which the app cannot read";
  }
}

// A glyph made of parts made of parts can double its points at every level (stb copies each
// part's outline): at most this many after expansion.
constexpr uint64_t kMaxGlyphPoints = 1 << 17;

// Every glyph's outline as stb_truetype parses it: inside the glyf table, with its points,
// flags and coordinates inside its own bytes, and composites that do not refer to themselves.
std::string check_glyphs(const std::string& b, const Tables& t, uint32_t glyphs, bool long_loca) {
  if ((glyphs + 1ull) * (long_loca ? 4 : 2) > t.loca.length)
    return "its loca table is shorter than its " + std::to_string(glyphs) + " glyphs need";
  auto glyph_at = [&](uint32_t g, uint64_t& from, uint64_t& to) {
    if (long_loca) {
      from = u32(b, t.loca.offset + 4ull * g);
      to = u32(b, t.loca.offset + 4ull * g + 4);
    } else {
      from = 2ull * u16(b, t.loca.offset + 2ull * g);
      to = 2ull * u16(b, t.loca.offset + 2ull * g + 2);
    }
  };
  std::vector<std::vector<uint32_t>> parts(glyphs);  // a composite's components
  std::vector<uint64_t> points(glyphs, 0);           // outline points, composites expanded
  std::vector<uint8_t> flags;
  for (uint32_t g = 0; g < glyphs; ++g) {
    uint64_t from = 0, to = 0;
    glyph_at(g, from, to);
    if (from == to) continue;  // no outline
    const std::string where = "its glyph " + std::to_string(g);
    if (from > to || to > t.glyf.length) return where + " lies outside the glyf table";
    const uint64_t at = t.glyf.offset + from, len = to - from;
    if (len < 10) return where + " is truncated";
    const int32_t contours = s16(b, at);
    if (contours > 0) {
      uint64_t pos = 10 + 2ull * contours;
      if (pos + 2 > len) return where + " is truncated";
      uint32_t prev = 0;
      for (int32_t c = 0; c < contours; ++c) {
        const uint32_t e = u16(b, at + 10 + 2ull * c);
        if (c > 0 && e <= prev) return where + " has contours out of order";
        prev = e;
      }
      pos += 2 + u16(b, at + pos);  // the instructions
      const uint32_t n = prev + 1;
      flags.assign(n, 0);
      uint32_t repeat = 0;
      uint8_t f = 0;
      for (uint32_t i = 0; i < n; ++i) {
        if (repeat == 0) {
          if (pos >= len) return where + " is truncated";
          f = static_cast<uint8_t>(b[at + pos++]);
          if (f & 8) {
            if (pos >= len) return where + " is truncated";
            repeat = static_cast<unsigned char>(b[at + pos++]);
          }
        } else {
          --repeat;
        }
        flags[i] = f;
      }
      for (uint8_t fl : flags) {
        pos += (fl & 2) ? 1 : (fl & 16) ? 0 : 2;
        pos += (fl & 4) ? 1 : (fl & 32) ? 0 : 2;
      }
      if (pos > len) return where + " is truncated";
      // A contour that starts off the curve makes stb look at the point after its first: for a
      // one-point contour at the very end that is past its own array.
      const uint32_t last_start = contours > 1 ? u16(b, at + 10 + 2ull * (contours - 2)) + 1 : 0;
      if (last_start == n - 1 && !(flags[n - 1] & 1))
        return where + " ends with a one-point contour off the curve";
      points[g] = n;
    } else if (contours == -1) {
      uint64_t pos = 10;
      for (bool more = true; more;) {
        if (pos + 4 > len) return where + " is truncated";
        const uint32_t fl = u16(b, at + pos), part = u16(b, at + pos + 2);
        pos += 4;
        if (!(fl & 2)) return where + " places a part by matching points, which the app cannot";
        pos += (fl & 1) ? 4 : 2;
        pos += (fl & 8) ? 2 : (fl & 64) ? 4 : (fl & 128) ? 8 : 0;
        if (pos > len) return where + " is truncated";
        if (part >= glyphs)
          return where + " is made of glyph " + std::to_string(part) + ", which does not exist";
        parts[g].push_back(part);
        more = (fl & 32) != 0;
      }
    } else if (contours < -1) {
      return where + " has an unknown kind of outline";
    }
  }
  // No composite may contain itself, however deep (stb would recurse until the stack ends).
  std::vector<uint8_t> state(glyphs, 0);  // 0 new, 1 on the path, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t root = 0; root < glyphs; ++root) {
    if (state[root] || parts[root].empty()) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      if (next == parts[g].size()) {
        // Its parts are done: stb copies their points into it, once per use.
        for (uint32_t part : parts[g])
          points[g] = std::min<uint64_t>(points[g] + points[part], 1ull << 40);
        if (points[g] > kMaxGlyphPoints)
          return "its glyph " + std::to_string(g) + " expands to " + std::to_string(points[g]) +
                 " outline points";
        state[g] = 2;
        stack.pop_back();
        continue;
      }
      const uint32_t part = parts[g][next++];
      if (state[part] == 1) return "its glyph " + std::to_string(part) + " contains itself";
      if (stack.size() > 16) return "its glyph " + std::to_string(root) + " nests parts too deeply";
      if (state[part] == 0) {
        state[part] = 1;
        stack.push_back({part, 0});
      }
    }
  }
  return "";
}

std::string check_freetype(const std::string& bytes) {
  FT_Library lib = nullptr;
  if (FT_Init_FreeType(&lib) != 0) return "FreeType could not start";
  FT_Face face = nullptr;
  std::string why;
  if (FT_New_Memory_Face(lib, reinterpret_cast<const FT_Byte*>(bytes.data()),
                         static_cast<FT_Long>(bytes.size()), 0, &face) != 0) {
    why = "it is not a font FreeType can read";
  } else if (!FT_IS_SCALABLE(face) || face->num_glyphs <= 0) {
    why = "it has no scalable glyphs";
  } else {
    for (const char* set :
         {"ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"})
      for (const char* c = set; *c && why.empty(); ++c) {
        const FT_UInt g = FT_Get_Char_Index(face, static_cast<FT_ULong>(*c));
        if (g == 0)
          why = std::string("it has no glyph for '") + *c + "'";
        else if (FT_Load_Glyph(face, g, FT_LOAD_NO_SCALE | FT_LOAD_NO_HINTING) != 0)
          why = std::string("FreeType cannot load its glyph for '") + *c + "'";
      }
  }
  if (face) FT_Done_Face(face);
  FT_Done_FreeType(lib);
  return why;
}

// Bakes `ranges` of the font as the app does (ui_style.cpp), at 16 px: every outline is read and
// rasterised whatever the size (a bake at 128 px takes half a second), and the glyph size check
// bounds what larger sizes cost. Returns whether ImGui built an atlas.
bool bake(const std::string& bytes, const ImWchar* ranges) {
  for (float px : {16.0f}) {
    ImFontAtlas atlas;
    ImFontConfig cfg;
    cfg.FontDataOwnedByAtlas = false;
    cfg.OversampleH = 2;
    cfg.OversampleV = 1;
    void* data = const_cast<char*>(bytes.data());
    if (!atlas.AddFontFromMemoryTTF(data, static_cast<int>(bytes.size()), px, &cfg, ranges))
      return false;
    if (!atlas.Build()) return false;
  }
  return true;
}

bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// The trial bake in a child process, given 10 s and (outside sanitizer builds, which reserve
// terabytes of address space) 2 GB.
std::string trial_bake(const std::string& bytes, const ImWchar* ranges) {
  const pid_t pid = fork();
  if (pid < 0) return "";  // no child to try in: the structural checks stand
  if (pid == 0) {
    // stb's own assertions would print on the app's stderr; the warning says it instead.
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2);
    if (!sanitized_build()) {
      const rlimit cap{rlim_t{2048} << 20, rlim_t{2048} << 20};
      setrlimit(RLIMIT_AS, &cap);
    }
    _exit(bake(bytes, ranges) ? 0 : 3);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return "";
    if (std::chrono::steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "baking its glyphs did not finish within 10 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status))
    return "baking its glyphs crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  return "ImGui could not bake its glyphs";
}

}  // namespace

std::string check_font_structure(const std::string& b, const ImWchar* ranges) {
  const uint64_t size = b.size();
  if (size == 0) return "it is empty";
  if (size < 12) return "it is too short to be a font";
  if (size > kMaxFontFileBytes) return "it is larger than " + byte_size_text(kMaxFontFileBytes);
  uint64_t start = 0;
  const std::string tag = b.substr(0, 4);
  if (tag == "ttcf") {
    if (size < 16 || u32(b, 8) == 0) return "it is a font collection without fonts";
    start = u32(b, 12);
  } else if (tag != std::string("\0\1\0\0", 4) && tag != "true" && tag != "1\0\0\0" &&
             tag != "OTTO" && tag != "typ1") {
    return "it does not start as a TrueType or OpenType font";
  }
  Tables t;
  std::string why = check_tables(b, start, t);
  if (!why.empty()) return why;
  const uint32_t loca_format = u16(b, t.head.offset + 50);
  if (loca_format > 1) return "its head table names an unknown loca format";
  const uint32_t glyphs = u16(b, t.maxp.offset + 4);
  if (glyphs == 0) return "it has no glyphs";
  const uint32_t metrics = u16(b, t.hhea.offset + 34);
  if (metrics == 0 || metrics > glyphs) return "its hhea table has a wrong metrics count";
  if (4ull * metrics + 2ull * (glyphs - metrics) > t.hmtx.length)
    return "its hmtx table is shorter than its glyphs need";
  const int32_t ascent = s16(b, t.hhea.offset + 4), descent = s16(b, t.hhea.offset + 6);
  if (ascent - descent <= 0) return "its hhea table gives it no height";
  if ((why = check_cmap(b, t.cmap)).empty()) why = check_glyphs(b, t, glyphs, loca_format == 1);
  if (!why.empty()) return why;
  // Everything stb reads is inside the file: it may now look.
  stbtt_fontinfo info;
  unsigned char* data = reinterpret_cast<unsigned char*>(const_cast<char*>(b.data()));
  if (stbtt_GetFontOffsetForIndex(data, 0) != static_cast<int>(start) ||
      !stbtt_InitFont(&info, data, static_cast<int>(start)))
    return "stb_truetype cannot read it";
  // A glyph the app bakes far larger than the font's height would make a huge atlas.
  const int height = ascent - descent;
  for (const ImWchar* r = ranges; r && r[0] && r[1]; r += 2)
    for (int c = r[0]; c <= r[1]; ++c) {
      const int g = stbtt_FindGlyphIndex(&info, c);
      // stb reads the metrics of whatever glyph the character map names.
      if (g >= static_cast<int>(glyphs))
        return "its character map gives U+" + hex4(c) + " glyph " + std::to_string(g) +
               ", past its " + std::to_string(glyphs) + " glyphs";
      int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      if (g <= 0 || !stbtt_GetGlyphBox(&info, g, &x0, &y0, &x1, &y1)) continue;
      if (x1 < x0 || y1 < y0 || x1 - x0 > 4 * height || y1 - y0 > 4 * height)
        return "its glyph " + std::to_string(g) + " is larger than four times the font's height";
    }
  return check_freetype(b);
}

std::string check_font_bytes(const std::string& bytes, const ImWchar* ranges) {
  std::string why = check_font_structure(bytes, ranges);
  if (why.empty()) why = trial_bake(bytes, ranges);
  return why;
}

bool read_font_file(const std::string& path, const ImWchar* ranges, std::string& bytes,
                    std::string& error) {
  if (!read_input_file(path, kMaxFontFileBytes, bytes, error)) return false;
  const std::string why = check_font_bytes(bytes, ranges);
  if (why.empty()) return true;
  error = "cannot use font '" + path + "': " + why;
  bytes.clear();
  return false;
}

}  // namespace attn
