// imgui.ini through the project's reader and writer (see imgui_ini.h).
#include "gui/files/imgui_ini.h"

#include <imgui.h>
#include <sys/stat.h>

#include <cstdio>

#include "io/atomic_file.h"
#include "io/input_file.h"

namespace attn {
namespace {

bool has_control(const std::string& line) {
  for (char c : line)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t') return true;
  return false;
}

// Whether a section header is one ImGui reads in bounded memory.
bool known_section(const std::string& header) {
  if (header.rfind("[Window][", 0) == 0) return header.size() > 10 && header.back() == ']';
  if (header.rfind("[Table][", 0) == 0) {
    unsigned id = 0;
    int columns = 0;
    char close = 0, extra = 0;
    return std::sscanf(header.c_str() + 8, "0x%8X,%d%c%c", &id, &columns, &close, &extra) == 3 &&
           close == ']' && columns >= 1 && columns <= kMaxImguiTableColumns;
  }
  return false;
}

}  // namespace

std::string sanitize_imgui_ini(const std::string& text, int* dropped) {
  std::string out;
  int sections = 0, left_out = 0;
  bool keep = false;  // the lines of the current section
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (has_control(line)) continue;
    if (!line.empty() && line[0] == '[') {
      keep = known_section(line) && sections < kMaxImguiIniSections;
      if (keep)
        ++sections;
      else
        ++left_out;
    }
    if (keep) out += line + "\n";
  }
  if (dropped) *dropped = left_out;
  return out;
}

bool load_imgui_ini(const std::string& path, std::string& error) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return true;  // no layout saved yet
  std::string text;
  if (!read_input_file(path, kMaxImguiIniBytes, text, error)) return false;
  const std::string clean = sanitize_imgui_ini(text);
  ImGui::LoadIniSettingsFromMemory(clean.data(), clean.size());
  return true;
}

bool save_imgui_ini(const std::string& path, std::string& error) {
  size_t size = 0;
  const char* data = ImGui::SaveIniSettingsToMemory(&size);
  ImGui::GetIO().WantSaveIniSettings = false;
  return write_file_atomically(path, std::string(data, size), error);
}

}  // namespace attn
