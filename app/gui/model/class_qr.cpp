// Class mode's QR code: libqrencode's symbol turned into a plain module matrix.
#include "gui/model/class_qr.h"

#include <qrencode.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace attn {

std::optional<QrMatrix> qr_matrix(const std::string& text, std::string& error) {
  if (text.empty()) {
    error = "nothing to encode";
    return std::nullopt;
  }
  // Version 0: the smallest that fits. Level M survives a smudged projector or a photo at an
  // angle (15% damage) and keeps a short URL at version 2 or 3, large modules from the back row.
  errno = 0;
  const std::unique_ptr<QRcode, void (*)(QRcode*)> code(
      QRcode_encodeString8bit(text.c_str(), 0, QR_ECLEVEL_M), &QRcode_free);
  if (!code) {
    error = std::string("cannot make a QR code of '") + text +
            "': " + (errno == ERANGE ? "too long" : std::strerror(errno));
    return std::nullopt;
  }
  QrMatrix m;
  m.width = code->width;
  m.dark.resize(static_cast<size_t>(m.width) * static_cast<size_t>(m.width));
  // Each byte is one module; its lowest bit is dark or light (the others say which part of the
  // symbol it is).
  for (size_t i = 0; i < m.dark.size(); ++i) m.dark[i] = (code->data[i] & 1) != 0;
  return m;
}

}  // namespace attn
