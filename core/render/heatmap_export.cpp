// render_heatmap: validates the options, composes the scene and encodes it as PNG or SVG; and the
// image format a file name asks for.
#include "render/heatmap_export.h"

#include <algorithm>
#include <cctype>

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

std::optional<ImageFormat> image_format_of(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".png") return ImageFormat::kPng;
  if (ext == ".svg") return ImageFormat::kSvg;
  return std::nullopt;
}

std::string image_format_error(const std::string& path) {
  const std::string ext = lower_extension(path);
  return "cannot tell the image format of '" + path + "'" +
         (ext.empty() ? "" : " (extension " + ext + ")") + "; use a name ending in .png or .svg";
}

bool render_heatmap(const AttentionTrace& trace, const HeatmapOptions& options, ImageFormat format,
                    std::string& bytes, std::string& error) {
  HeatmapScene scene;
  if (!build_heatmap_scene(trace, options, scene, error)) return false;
  if (format == ImageFormat::kSvg) {
    bytes = render_heatmap_svg(scene);
    return true;
  }
  return render_heatmap_png(scene, bytes, error);
}

}  // namespace attn
