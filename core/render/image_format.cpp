// The image format a file name asks for, by its extension.
#include "render/image_format.h"

#include <algorithm>
#include <cctype>

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
  if (ext == ".pdf") return ImageFormat::kPdf;
  return std::nullopt;
}

std::string image_format_error(const std::string& path) {
  const std::string ext = lower_extension(path);
  return "cannot tell the image format of '" + path + "'" +
         (ext.empty() ? "" : " (extension " + ext + ")") +
         "; use a name ending in .png, .svg or .pdf";
}

const char* image_format_extension(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kSvg:
      return "svg";
    case ImageFormat::kPdf:
      return "pdf";
  }
  return "png";
}

}  // namespace attn
