// Keeps the layering of core/README.md, app/README.md and design.md: every `#include` under core/
// and app/ is checked against the table of which part may depend on which.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "reference.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

// The parts of the source tree, named by their folder. A part may always include itself.
// `core/train/` may not exist yet: design.md gives it the standard library only, and lets lm/
// and seq2seq/ use it.
const std::map<std::string, std::set<std::string>>& allowed_parts() {
  static const std::set<std::string> all_core = {"core/attention", "core/backends", "core/io",
                                                 "core/render",    "core/explain",  "core/train",
                                                 "core/seq2seq",   "core/lm",       "core/lessons"};
  static const std::map<std::string, std::set<std::string>> table = [] {
    std::map<std::string, std::set<std::string>> t = {
        {"core/attention", {}},
        {"core/backends", {"core/attention"}},
        {"core/io", {"core/attention"}},
        {"core/render", {"core/attention"}},
        {"core/explain", {"core/attention"}},
        {"core/train", {}},
        {"core/seq2seq", {"core/attention", "core/io", "core/train"}},
        {"core/lm", {"core/attention", "core/io", "core/train"}},
        {"core/lessons", {"core/attention", "core/io"}},
        {"app/cli", all_core},
        {"app/gui/model", all_core},
        {"app/gui", all_core},
    };
    t["app/gui"].insert("app/gui/model");
    return t;
  }();
  return table;
}

// Single files allowed one more edge, each documented in its part's README: the lesson
// worksheet fills render's worksheet items, and draws a model step's figure from the model, and
// the lesson web page draws figures and worked arithmetic (core/lessons/README.md); the `gui`
// subcommand calls the app's entry point `run_gui` (app/cli/README.md).
bool documented_exception(const std::string& file, const std::string& include) {
  if ((file == "core/lessons/lesson_sheet.h" || file == "core/lessons/lesson_sheet.cpp") &&
      include.rfind("render/", 0) == 0)
    return true;
  if ((file == "core/lessons/model_figures.h" || file == "core/lessons/model_figures.cpp") &&
      (include.rfind("render/", 0) == 0 || include.rfind("lm/", 0) == 0 ||
       include.rfind("seq2seq/", 0) == 0))
    return true;
  // A lesson as one web page draws each step's figure with render/ and writes each cell's
  // worked arithmetic with explain/ (core/lessons/README.md).
  if (file.rfind("core/lessons/lesson_html", 0) == 0 &&
      (include.rfind("render/", 0) == 0 || include.rfind("explain/", 0) == 0))
    return true;
  return file == "app/cli/cli.cpp" && include == "gui/gui.h";
}

// The part a source file belongs to ("core/io", "app/gui/model", ...), "app" for app/main.cpp,
// "" outside core/ and app/.
std::string part_of_file(const std::string& file) {
  const fs::path p(file);
  std::vector<std::string> dirs;
  for (const auto& e : p.parent_path()) dirs.push_back(e.string());
  if (dirs.empty()) return "";
  if (dirs[0] == "core") return dirs.size() >= 2 ? "core/" + dirs[1] : "core";
  if (dirs[0] != "app") return "";
  if (dirs.size() >= 3 && dirs[1] == "gui" && dirs[2] == "model") return "app/gui/model";
  return dirs.size() >= 2 ? "app/" + dirs[1] : "app";
}

// The part a quoted include names ("attention/trace.h" -> "core/attention"), "" when it names
// no part (a generated header, a system path).
std::string part_of_include(const std::string& include) {
  const auto slash = include.find('/');
  if (slash == std::string::npos) return "";
  const std::string folder = include.substr(0, slash);
  if (folder == "gui") return include.rfind("gui/model/", 0) == 0 ? "app/gui/model" : "app/gui";
  if (folder == "cli") return "app/cli";
  const std::string core = "core/" + folder;
  return allowed_parts().count(core) ? core : "";
}

bool is_gui_library(const std::string& include) {
  return include.rfind("imgui", 0) == 0 || include.rfind("GLFW/", 0) == 0 ||
         include.rfind("GL/", 0) == 0 || include.rfind("backends/imgui", 0) == 0;
}

// Why `file` (a path relative to the source root) may not include `include` (as written between
// the quotes or brackets), or "" when it may.
std::string forbidden_edge(const std::string& file, const std::string& include, bool quoted) {
  const std::string from = part_of_file(file);
  if (from.empty() || from == "app") return "";
  const bool gui_allowed = from == "app/gui";
  if (is_gui_library(include) && !gui_allowed)
    return from + "/ may not use Dear ImGui, GLFW or OpenGL";
  if (!quoted) return "";
  const std::string to = part_of_include(include);
  if (to.empty() || to == from) return "";
  const auto row = allowed_parts().find(from);
  if (row == allowed_parts().end())
    return from + "/ is not in the layering table (core/README.md): add it there and here";
  if (row->second.count(to) || documented_exception(file, include)) return "";
  std::string may;
  for (const auto& p : row->second) may += (may.empty() ? "" : ", ") + p + "/";
  return from + "/ may not depend on " + to + "/ (it may depend on " +
         (may.empty() ? std::string("no other part") : may) + ")";
}

// The .h and .cpp files under root/core, then under root/app, each part sorted.
std::vector<fs::path> source_files(const fs::path& root) {
  std::vector<fs::path> files;
  for (const char* top : {"core", "app"}) {
    if (!fs::is_directory(root / top)) continue;
    const size_t first = files.size();
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cpp")) files.push_back(e.path());
    }
    std::sort(files.begin() + static_cast<long>(first), files.end());
  }
  return files;
}

// Every forbidden include in the .h and .cpp files under root/core and root/app, as
// "FILE:LINE: includes PATH: WHY". `includes_seen` counts the include lines read.
std::vector<std::string> layering_violations(const fs::path& root, int* includes_seen = nullptr) {
  static const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  std::vector<std::string> out;
  for (const auto& path : source_files(root)) {
    const std::string rel = fs::relative(path, root).generic_string();
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      if (includes_seen) ++*includes_seen;
      const std::string why = forbidden_edge(rel, m[2], m[1] == "\"");
      if (!why.empty())
        out.push_back(rel + ":" + std::to_string(n) + ": includes " + m[2].str() + ": " + why);
    }
  }
  return out;
}

TEST(Layering, TheSourceTreeKeepsIt) {
  int seen = 0;
  const auto violations = layering_violations(ATTN_SOURCE_DIR, &seen);
  std::string all;
  for (const auto& v : violations) all += v + "\n";
  EXPECT_TRUE(violations.empty()) << all;
  // An empty report means something only if the tree was read (hundreds of includes).
  EXPECT_GT(seen, 500);
}

TEST(Layering, UpwardAndSidewaysEdgesAreForbidden) {
  const std::pair<const char*, const char*> bad[] = {
      {"core/attention/engine.cpp", "render/colormap.h"},
      {"core/attention/engine.cpp", "io/npy.h"},
      {"core/backends/cpu.cpp", "io/npy.h"},
      {"core/io/npy.cpp", "render/colormap.h"},
      {"core/render/heatmap.cpp", "explain/explain.h"},
      {"core/explain/explain.cpp", "backends/backend.h"},
      {"core/io/examples.cpp", "lm/model.h"},
      {"core/train/run.cpp", "attention/trace.h"},
      {"core/lm/model.cpp", "seq2seq/model.h"},
      {"core/lm/model.cpp", "render/colormap.h"},
      {"core/lessons/lesson.cpp", "lm/model.h"},
      {"core/lessons/lesson.cpp", "render/worksheet.h"},
      {"core/seq2seq/model.cpp", "gui/ui.h"},
      {"app/cli/export.cpp", "gui/ui.h"},
      {"app/cli/cli.cpp", "gui/heatmap_widget.h"},
      {"app/gui/panel_menu.cpp", "cli/cli.h"},
      {"app/gui/model/session.cpp", "gui/ui.h"},
      {"app/gui/model/session.cpp", "cli/cli.h"},
      {"core/newpart/thing.cpp", "attention/trace.h"},
  };
  for (const auto& [file, include] : bad)
    EXPECT_NE(forbidden_edge(file, include, true), "") << file << " -> " << include;
}

TEST(Layering, GuiLibrariesOnlyInTheApp) {
  for (const char* file : {"core/render/heatmap.cpp", "core/attention/trace.h", "app/cli/cli.cpp",
                           "app/gui/model/session.h"})
    for (const char* include : {"imgui.h", "imgui_internal.h", "GLFW/glfw3.h", "GL/gl.h"}) {
      EXPECT_NE(forbidden_edge(file, include, false), "") << file << " -> <" << include << ">";
      EXPECT_NE(forbidden_edge(file, include, true), "") << file << " -> \"" << include << "\"";
    }
  EXPECT_EQ(forbidden_edge("app/gui/app_window.cpp", "GLFW/glfw3.h", false), "");
  EXPECT_EQ(forbidden_edge("app/gui/panel_menu.cpp", "imgui.h", false), "");
}

TEST(Layering, DownwardEdgesAreAllowed) {
  const std::pair<const char*, const char*> good[] = {
      {"core/attention/engine.cpp", "attention/trace.h"},
      {"core/backends/cpu.cpp", "attention/trace.h"},
      {"core/seq2seq/model.cpp", "io/npy.h"},
      {"core/seq2seq/train.cpp", "train/live_run.h"},
      {"core/lm/train.cpp", "train/live_run.h"},
      {"core/lessons/lesson.cpp", "io/scenario_json.h"},
      {"core/lessons/lesson_sheet.cpp", "render/heatmap_view.h"},
      {"app/cli/export.cpp", "render/heatmap_export.h"},
      {"app/cli/cli.cpp", "gui/gui.h"},
      {"app/gui/panel_lm.cpp", "lm/model.h"},
      {"app/gui/panel_lm.cpp", "gui/model/lm_session.h"},
      {"app/gui/model/lm_session.cpp", "lm/model.h"},
      {"app/main.cpp", "cli/cli.h"},
      {"core/io/npy.cpp", "embedded_shaders.h"},  // a generated header names no part
  };
  for (const auto& [file, include] : good)
    EXPECT_EQ(forbidden_edge(file, include, true), "") << file << " -> " << include;
}

TEST(Layering, ScanReportsFileLineAndEdge) {
  const fs::path root = test::temp_path("layering_tree");
  fs::remove_all(root);
  fs::create_directories(root / "core/attention");
  fs::create_directories(root / "app/cli");
  std::ofstream(root / "core/attention/bad.h") << "// x\n#include <vector>\n"
                                               << "#include \"attention/ok.h\"\n"
                                               << "  #  include \"render/colormap.h\"  // no\n";
  std::ofstream(root / "app/cli/fine.cpp") << "#include \"lm/model.h\"\n#include \"io/npy.h\"\n";
  std::ofstream(root / "app/cli/bad.cpp") << "\n\n#include <imgui.h>\n";
  const auto v = layering_violations(root);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].rfind("app/cli/bad.cpp:3: includes imgui.h: ", 0), 0u) << v[1];
  EXPECT_EQ(v[0].rfind("core/attention/bad.h:4: includes render/colormap.h: core/attention/ may "
                       "not depend on core/render/",
                       0),
            0u)
      << v[0];
  fs::remove_all(root);
}

// design.md's one worker pool and "background work never ends the program": threads are made
// only by the pool (core/attention/parallel.cpp) and BackgroundJob (core/train/background_job.h),
// which carry every exception back; the class server's threads are httplib's.
TEST(Layering, ThreadsAreMadeOnlyByThePoolAndBackgroundJob) {
  static const std::regex thread_object(R"(std::thread\b(?!::))");
  const std::set<std::string> allowed = {"core/attention/parallel.cpp",
                                         "core/train/background_job.h"};
  std::vector<std::string> makers;
  for (const fs::path& path : source_files(ATTN_SOURCE_DIR)) {
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      if (std::regex_search(line.substr(0, comment), thread_object)) {
        const std::string rel = fs::relative(path, ATTN_SOURCE_DIR).generic_string();
        if (!allowed.count(rel)) makers.push_back(rel + ":" + std::to_string(n));
      }
    }
  }
  std::string all;
  for (const auto& m : makers) all += m + "\n";
  EXPECT_TRUE(makers.empty()) << "std::thread outside the pool and BackgroundJob:\n" << all;
}

}  // namespace
}  // namespace attn
