// export_heatmap: validates the options, composes the scene and writes it as PNG or SVG
// atomically, chosen by the file's extension.
#include "render/heatmap_export.h"

#include <algorithm>
#include <cctype>

#include "io/atomic_file.h"
#include "render/heatmap_layout.h"

namespace attn {

namespace {

std::string lower_extension(const std::string& path) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext;
}

}  // namespace

bool export_heatmap(const AttentionTrace& trace, const HeatmapOptions& options,
                    const std::string& path, std::string& error) {
  std::string ext = lower_extension(path);
  if (ext != ".png" && ext != ".svg") {
    error = "--out: cannot tell the image format of '" + path + "'" +
            (ext.empty() ? "" : " (extension " + ext + ")") + "; use a name ending in .png or .svg";
    return false;
  }
  HeatmapScene scene;
  if (!build_heatmap_scene(trace, options, scene, error)) return false;
  std::string bytes;
  if (ext == ".svg") {
    bytes = render_heatmap_svg(scene);
  } else if (!render_heatmap_png(scene, bytes, error)) {
    return false;
  }
  if (!write_file_atomically(path, bytes, error)) {
    error = "--out: " + error;
    return false;
  }
  return true;
}

}  // namespace attn
