// The image formats the renderers write, chosen by a file name's extension. Renderers return the
// file's bytes; writing them (atomically) is io/atomic_file.h's job.
#pragma once

#include <optional>
#include <string>

namespace attn {

enum class ImageFormat { kPng, kSvg };

// The format a file name asks for (".png" or ".svg", any case); nullopt for anything else.
std::optional<ImageFormat> image_format_of(const std::string& path);

// "cannot tell the image format of 'x.gif' (extension .gif); use a name ending in .png or .svg"
std::string image_format_error(const std::string& path);

}  // namespace attn
