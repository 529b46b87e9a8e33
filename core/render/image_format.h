// The file formats the renderers write, chosen by a file name's extension. Renderers return the
// file's bytes; writing them (atomically) is io/atomic_file.h's job.
#pragma once

#include <optional>
#include <string>

namespace attn {

enum class ImageFormat { kPng, kSvg, kPdf };

// The format a file name asks for (".png", ".svg" or ".pdf", any case); nullopt for anything else.
std::optional<ImageFormat> image_format_of(const std::string& path);

// "cannot tell the image format of 'x.gif' (extension .gif); use a name ending in .png, .svg or
// .pdf"
std::string image_format_error(const std::string& path);

// "png", "svg" or "pdf".
const char* image_format_extension(ImageFormat format);

}  // namespace attn
