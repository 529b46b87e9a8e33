// Class mode's QR code (app/gui/model/class_qr.h): the symbol's size and fixed patterns, and a
// reader (zbarimg, from zbar-tools) getting the address back from a picture of it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "gui/model/class_qr.h"
#include "reference.h"

namespace attn {
namespace {

const std::string kUrl = "http://192.168.1.20:8765/?code=0420";  // 35 bytes

// The 7×7 finder pattern whose top-left module is (x0, y0): a dark ring, a light ring, a dark
// 3×3 centre; and the light separator row and column on its inner sides.
void expect_finder(const QrMatrix& m, int x0, int y0) {
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 7; ++x) {
      const bool ring = x == 0 || y == 0 || x == 6 || y == 6;
      const bool centre = x >= 2 && x <= 4 && y >= 2 && y <= 4;
      EXPECT_EQ(m.at(x0 + x, y0 + y), ring || centre) << "finder at " << x0 << "," << y0;
    }
}

TEST(ClassQr, TheSymbolHasItsSizeAndFixedPatterns) {
  std::string error;
  const std::optional<QrMatrix> m = qr_matrix(kUrl, error);
  ASSERT_TRUE(m) << error;
  // 35 bytes at level M: version 2 holds 26, version 3 holds 42; version v is 17 + 4v wide.
  EXPECT_EQ(m->width, 29);
  ASSERT_EQ(m->dark.size(), 29u * 29u);
  expect_finder(*m, 0, 0);
  expect_finder(*m, 29 - 7, 0);
  expect_finder(*m, 0, 29 - 7);
  for (int i = 0; i < 8; ++i) {  // separators
    EXPECT_FALSE(m->at(7, i));
    EXPECT_FALSE(m->at(i, 7));
    EXPECT_FALSE(m->at(29 - 8, i));
    EXPECT_FALSE(m->at(i, 29 - 8));
  }
  for (int i = 8; i < 29 - 8; ++i) {  // timing patterns: dark on even positions
    EXPECT_EQ(m->at(i, 6), i % 2 == 0) << i;
    EXPECT_EQ(m->at(6, i), i % 2 == 0) << i;
  }
  EXPECT_TRUE(m->at(8, 29 - 8));  // the dark module beside the bottom-left finder
}

TEST(ClassQr, NothingOrTooMuchIsAnError) {
  std::string error;
  EXPECT_FALSE(qr_matrix("", error));
  EXPECT_EQ(error, "nothing to encode");
  EXPECT_FALSE(qr_matrix(std::string(4000, 'a'), error));  // version 40-M holds 2331 bytes
  EXPECT_NE(error.find("too long"), std::string::npos) << error;
}

TEST(ClassQr, AReaderGetsTheAddressBack) {
  if (std::system("command -v zbarimg >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "zbarimg not installed (apt-get install zbar-tools)";
  std::string error;
  const std::optional<QrMatrix> m = qr_matrix(kUrl, error);
  ASSERT_TRUE(m) << error;
  // A PGM at 8 pixels a module with the 4-module quiet zone the standard asks for.
  constexpr int kScale = 8, kQuiet = 4;
  const int side = (m->width + 2 * kQuiet) * kScale;
  const std::string path = test::temp_path("class_qr.pgm");
  {
    std::ofstream out(path, std::ios::binary);
    out << "P5\n" << side << " " << side << "\n255\n";
    for (int py = 0; py < side; ++py)
      for (int px = 0; px < side; ++px) {
        const int x = px / kScale - kQuiet, y = py / kScale - kQuiet;
        const bool dark = x >= 0 && y >= 0 && x < m->width && y < m->width && m->at(x, y);
        out.put(static_cast<char>(dark ? 0 : 255));
      }
  }
  // stderr apart: zbarimg may complain there about a missing D-Bus, which changes nothing.
  const std::string command = "zbarimg --raw -q '" + path + "' 2>/dev/null";
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string read;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) read += buf;
  pclose(p);
  EXPECT_EQ(read, kUrl + "\n");
}

}  // namespace
}  // namespace attn
