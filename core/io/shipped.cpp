// Short names of shipped data: a recursive listing of one folder under data_dir().
#include "io/shipped.h"

#include <algorithm>
#include <filesystem>

#include "io/data_dir.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string kind_dir(const ShippedKind& kind) {
  const std::string root = data_dir();
  return root.empty() ? "" : root + "/" + kind.folder;
}

}  // namespace

std::vector<ShippedItem> list_shipped(const ShippedKind& kind) {
  std::vector<ShippedItem> out;
  const std::string dir = kind_dir(kind);
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  const std::string ext = kind.extension;
  const bool folders = ext.empty();
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.lexically_relative(dir).generic_string();
    if (folders) {
      if (!it->is_directory(ec) || !fs::is_regular_file(p / kind.marker, ec)) continue;
      it.disable_recursion_pending();  // an item's own subfolders are part of it
    } else {
      if (!it->is_regular_file(ec) || !ends_with(name, ext) || name.size() == ext.size()) continue;
      name.resize(name.size() - ext.size());
    }
    out.push_back({name, dir + "/" + name + ext});
  }
  std::sort(out.begin(), out.end(),
            [](const ShippedItem& a, const ShippedItem& b) { return a.name < b.name; });
  return out;
}

std::string no_shipped_message(const ShippedKind& kind) {
  if (data_dir().empty())
    return "no shipped data found at " + data_dir_description() +
           " (ATTN_DATA_DIR names the folder holding " + kind.folder + "/)";
  return std::string("no shipped ") + kind.what + "s in " + kind_dir(kind);
}

std::optional<std::string> resolve_shipped(const ShippedKind& kind, const std::string& name_or_path,
                                           std::string& error) {
  std::error_code ec;
  if (name_or_path.empty()) {
    error = std::string("expected a ") + kind.what + " file or the name of a shipped one";
  } else if (fs::exists(name_or_path, ec)) {
    return name_or_path;
  }
  const std::vector<ShippedItem> items = list_shipped(kind);
  if (!name_or_path.empty()) {
    std::string name = name_or_path;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    if (*kind.extension && ends_with(name, kind.extension))
      name.resize(name.size() - std::string(kind.extension).size());
    for (const ShippedItem& item : items)
      if (item.name == name) return item.path;
    error = "'" + name_or_path + "' is neither a " + (*kind.extension ? "file" : "folder") +
            " nor the name of a shipped " + kind.what;
  }
  if (items.empty()) {
    error += "; " + no_shipped_message(kind);
    return std::nullopt;
  }
  error += std::string("; shipped ") + kind.what + "s:";
  for (size_t i = 0; i < items.size(); ++i) error += (i ? ", " : " ") + items[i].name;
  error += " (in " + kind_dir(kind) + ")";
  return std::nullopt;
}

}  // namespace attn
