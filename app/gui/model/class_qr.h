// The QR code of class mode's address, as a matrix of modules the GUI draws (libqrencode).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn {

// A QR symbol: width × width modules, row by row, true = dark. The quiet zone (four light
// modules around it) is not included: whoever draws it leaves that margin.
struct QrMatrix {
  int width = 0;
  std::vector<bool> dark;
  bool at(int x, int y) const { return dark[static_cast<size_t>(y * width + x)]; }
};

// Encodes `text` (a URL) as 8-bit data at error correction level M, the smallest version that
// holds it; nullopt with `error` when it cannot (too long for any version).
std::optional<QrMatrix> qr_matrix(const std::string& text, std::string& error);

}  // namespace attn
