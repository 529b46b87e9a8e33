// The .npy reader and writer: round trips through hand-built files, the writer's exact bytes,
// and a clear error (never a crash) for every kind of malformed file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "io/npy.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::npy_data;
using test::npy_file;
using test::npy_fixture;
using test::npy_header;

std::optional<NpyTensor> parse(const std::string& bytes, std::string& error,
                               NpyContent content = NpyContent::kFloat) {
  return parse_npy(bytes, "x.npy", content, error);
}

// Parses bytes that must be rejected and returns the message (which must name the file).
std::string error_of(const std::string& bytes, NpyContent content = NpyContent::kFloat) {
  std::string error;
  std::optional<NpyTensor> t = parse(bytes, error, content);
  EXPECT_FALSE(t.has_value());
  EXPECT_EQ(error.rfind("x.npy: ", 0), 0u) << error;
  return error;
}

std::vector<double> iota(int n, double start = 0.25, double step = -0.5) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(start + step * i);
  return v;
}

TEST(NpyRead, Float32Version1Rank2) {
  const std::vector<double> vals = {1.5, -2.0, 0.125, 3.0, 4.75, -0.5};
  std::string error;
  auto t = parse(npy_fixture("<f4", {2, 3}, vals), error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, 2);
  ASSERT_EQ(t->heads.size(), 1u);
  ASSERT_EQ(t->heads[0].rows(), 2);
  ASSERT_EQ(t->heads[0].cols(), 3);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(t->heads[0](i, j), vals[i * 3 + j]);
}

TEST(NpyRead, Float64Version2Rank3) {
  const std::vector<double> vals = iota(2 * 3 * 4);
  std::string error;
  auto t = parse(npy_fixture("<f8", {2, 3, 4}, vals, 2), error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, 3);
  ASSERT_EQ(t->heads.size(), 2u);
  for (int h = 0; h < 2; ++h) {
    ASSERT_EQ(t->heads[h].rows(), 3);
    ASSERT_EQ(t->heads[h].cols(), 4);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) EXPECT_EQ(t->heads[h](i, j), vals[(h * 3 + i) * 4 + j]);
  }
}

TEST(NpyRead, Version3AndFloat64Rounding) {
  // 0.1 is not a float; the reader must give the nearest float, as numpy's astype would.
  std::string error;
  auto t = parse(npy_fixture("<f8", {1, 2}, {0.1, -1e-3}, 3), error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->heads[0](0, 0), 0.1f);
  EXPECT_EQ(t->heads[0](0, 1), -1e-3f);
}

TEST(NpyRead, SpecialValuesSurviveForTheCallerToJudge) {
  const double inf = std::numeric_limits<double>::infinity();
  std::string error;
  auto t = parse(npy_fixture("<f8", {1, 3}, {-inf, inf, std::nan("")}), error);
  ASSERT_TRUE(t) << error;
  EXPECT_TRUE(std::isinf(t->heads[0](0, 0)) && t->heads[0](0, 0) < 0);
  EXPECT_TRUE(std::isinf(t->heads[0](0, 1)) && t->heads[0](0, 1) > 0);
  EXPECT_TRUE(std::isnan(t->heads[0](0, 2)));
}

TEST(NpyRead, HeaderVariantsNumpyMayWrite) {
  const std::string data = npy_data("<f4", {1, 2, 3, 4, 5, 6});
  const std::vector<std::string> headers = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n",
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",  // no trailing comma
      "{'shape': (2, 3,), 'fortran_order': False, 'descr': '<f4'}\n",       // other key order
      "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 2 , 3 ) , }   \n",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }\n",  // Python 2
  };
  for (const std::string& h : headers) {
    std::string error;
    auto t = parse(npy_file(1, h, data), error);
    ASSERT_TRUE(t) << h << ": " << error;
    EXPECT_EQ(t->heads[0].rows(), 2);
    EXPECT_EQ(t->heads[0](1, 2), 6.0f);
  }
}

TEST(NpyRead, MaskTypesBecomeZeroOrNonzero) {
  const std::vector<double> vals = {1, 0, 0, 1, 1, 0};
  for (const char* descr : {"|b1", "<i1", "|i1", "|u1", "<u1", "<i2", "<u2", "<i4", "<u4", "<i8",
                            "<u8", "<f4", "<f8"}) {
    std::string error;
    auto t = parse(npy_fixture(descr, {3, 2}, vals), error, NpyContent::kMask);
    ASSERT_TRUE(t) << descr << ": " << error;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(t->heads[0](i, j) != 0.0f, vals[i * 2 + j] != 0) << descr << " " << i << j;
  }
  // Negative and large integers are nonzero too ("nonzero = may attend").
  std::string error;
  auto t = parse(npy_fixture("<i8", {1, 3}, {-1, 0, 4e15}), error, NpyContent::kMask);
  ASSERT_TRUE(t) << error;
  EXPECT_NE(t->heads[0](0, 0), 0.0f);
  EXPECT_EQ(t->heads[0](0, 1), 0.0f);
  EXPECT_NE(t->heads[0](0, 2), 0.0f);
}

TEST(NpyRead, FloatInputsRejectMaskTypes) {
  for (const char* descr : {"|b1", "<i4", "|u1"}) {
    std::string e = error_of(npy_fixture(descr, {1, 2}, {1, 0}));
    EXPECT_NE(e.find(std::string("unsupported dtype '") + descr + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("'<f4'"), std::string::npos) << e;
  }
}

TEST(NpyWrite, ExactBytesVersion1PaddedTo64) {
  Matrix m(2, 3);
  m << 1.0f, -2.5f, 0.0f, 3.25f, 1e-7f, -4.0f;
  const std::string bytes = npy_bytes({m}, 2);
  // Built by hand: numpy's header text, spaces up to 127 bytes, then '\n' (10 + 118 = 128).
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header += std::string(117 - header.size(), ' ') + "\n";
  ASSERT_EQ(header.size(), 118u);
  const std::string expected =
      npy_file(1, header, npy_data("<f4", {1.0, -2.5, 0.0, 3.25, 1e-7f, -4.0}));
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(bytes.size(), 128u + 24u);
}

TEST(NpyWrite, Rank3HeaderAndRoundTrip) {
  std::mt19937 rng(7);
  HeadStack heads = test::random_heads(3, 5, 2, rng);
  const std::string bytes = npy_bytes(heads, 3);
  ASSERT_GE(bytes.size(), 10u);
  const size_t header_len = static_cast<unsigned char>(bytes[8]) |
                            (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_NE(bytes.find("'shape': (3, 5, 2), }"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + header_len + 3 * 5 * 2 * 4);
  std::string error;
  auto t = parse(bytes, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, 3);
  ASSERT_EQ(t->heads.size(), 3u);
  for (int h = 0; h < 3; ++h) EXPECT_EQ(t->heads[h], heads[h]);
}

TEST(NpyWrite, FileRoundTripKeepsSpecialValues) {
  Matrix m(1, 3);
  m << -std::numeric_limits<float>::infinity(), 0.5f, -0.0f;
  const std::string path = test::temp_path("round.npy");
  std::string error;
  ASSERT_TRUE(write_npy(path, {m}, 2, error)) << error;
  auto t = read_npy(path, NpyContent::kFloat, error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->rank, 2);
  EXPECT_TRUE(std::isinf(t->heads[0](0, 0)));
  EXPECT_EQ(t->heads[0](0, 1), 0.5f);
  EXPECT_TRUE(std::signbit(t->heads[0](0, 2)));
}

TEST(NpyWrite, RejectsInconsistentHeadsWithoutWriting) {
  const std::string path = test::temp_path("bad_write.npy");
  std::string error;
  EXPECT_FALSE(write_npy(path, {Matrix::Zero(2, 2), Matrix::Zero(2, 2)}, 2, error));
  EXPECT_FALSE(write_npy(path, {Matrix::Zero(2, 2), Matrix::Zero(3, 2)}, 3, error));
  EXPECT_FALSE(test::file_exists(path));
}

// ---- malformed files -------------------------------------------------------------------------

const std::string kGoodData = npy_data("<f4", {1, 2, 3, 4, 5, 6});

std::string with_header(const std::string& header, int major = 1) {
  return npy_file(major, header, kGoodData);
}

TEST(NpyMalformed, EmptyShortAndBadMagic) {
  EXPECT_NE(error_of("").find("only 0 bytes"), std::string::npos);
  EXPECT_NE(error_of("\x93NUM").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error_of("PK\x03\x04 this is a zip file").find("magic"), std::string::npos);
  std::string bytes = npy_fixture("<f4", {2, 3}, {1, 2, 3, 4, 5, 6});
  bytes[1] = 'n';
  EXPECT_NE(error_of(bytes).find("magic"), std::string::npos);
}

TEST(NpyMalformed, UnsupportedVersion) {
  for (auto [major, minor] : {std::pair{4, 0}, {0, 0}, {1, 1}, {255, 255}}) {
    std::string bytes = npy_fixture("<f4", {2, 3}, {1, 2, 3, 4, 5, 6});
    bytes[6] = static_cast<char>(major);
    bytes[7] = static_cast<char>(minor);
    const std::string e = error_of(bytes);
    EXPECT_NE(e.find("unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(minor)),
              std::string::npos)
        << e;
  }
}

TEST(NpyMalformed, TruncatedHeader) {
  const std::string full = npy_fixture("<f4", {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_NE(error_of(full.substr(0, 7)).find("version"), std::string::npos);
  EXPECT_NE(error_of(full.substr(0, 9)).find("header length"), std::string::npos);
  const std::string e = error_of(full.substr(0, 40));
  EXPECT_NE(e.find("truncated header"), std::string::npos) << e;
  EXPECT_NE(e.find("118"), std::string::npos) << e;
  // A version-2 file claiming a 4 GB header.
  std::string huge = "\x93NUMPY\x02";
  huge += std::string("\0\xff\xff\xff\xff", 5);
  EXPECT_NE(error_of(huge + "{}").find("truncated header"), std::string::npos);
}

TEST(NpyMalformed, HeaderNotADict) {
  for (const std::string& h : {
           std::string("['descr', '<f4']\n"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)\n"),
           std::string("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}\n"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} extra\n"),
           std::string("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}\n"),
           std::string("{'descr': <f4, 'fortran_order': False, 'shape': (2, 3)}\n"),
           std::string("{descr: '<f4'}\n"),
           std::string("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2, 3)}\n"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}\n"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -)}\n"),
           std::string("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}") + '\0',
           std::string(""),
           std::string("\n"),
       }) {
    const std::string e = error_of(with_header(h));
    EXPECT_NE(e.find("header is not a valid Python dict literal"), std::string::npos) << e;
  }
}

TEST(NpyMalformed, DeeplyNestedHeaderIsRejectedNotRecursedInto) {
  const std::string deep = "{'descr': " + std::string(100000, '(') + "}";
  EXPECT_NE(error_of(with_header(deep, 2)).find("nested too deeply"), std::string::npos);
}

TEST(NpyMalformed, MissingDuplicateAndUnexpectedKeys) {
  EXPECT_NE(
      error_of(with_header("{'descr': '<f4', 'fortran_order': False}")).find("no 'shape' key"),
      std::string::npos);
  EXPECT_NE(
      error_of(with_header("{'shape': (2, 3), 'fortran_order': False}")).find("no 'descr' key"),
      std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'shape': (2, 3)}")).find("'fortran_order'"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{}")).find("no 'descr' key"), std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                                 "'shape': (2, 3)}"))
                .find("'descr' appears twice"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "
                                 "'extra': 1}"))
                .find("unexpected key 'extra'"),
            std::string::npos);
}

TEST(NpyMalformed, WrongValueKinds) {
  EXPECT_NE(error_of(with_header("{'descr': [('a', '<f4')], 'fortran_order': False, "
                                 "'shape': (2, 3)}"))
                .find("structured"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}"))
                .find("'fortran_order' is an integer"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': 6}"))
                .find("'shape' is an integer"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, '3')}"))
                .find("'shape' entry 1 is a string"),
            std::string::npos);
  EXPECT_NE(error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, None)}"))
                .find("'shape' entry 1 is None"),
            std::string::npos);
}

TEST(NpyMalformed, BigEndianAndFortranOrder) {
  std::string e = error_of(npy_file(1, npy_header(">f4", {2, 3}), kGoodData));
  EXPECT_NE(e.find("big-endian dtype '>f4'"), std::string::npos) << e;
  e = error_of(npy_file(1, npy_header(">f8", {2, 3}), kGoodData + kGoodData));
  EXPECT_NE(e.find("big-endian"), std::string::npos) << e;
  e = error_of(npy_file(1, npy_header("<f4", {2, 3}, true), kGoodData));
  EXPECT_NE(e.find("fortran_order is True"), std::string::npos) << e;
}

TEST(NpyMalformed, UnsupportedDtypes) {
  for (const char* descr : {"<f2", "<c8", "<c16", "|O", "|S5", "<U3", "<f16", "f4", "<f", "|f4",
                            "<M8[ns]", "", "<b1x"}) {
    std::string e = error_of(npy_file(1, npy_header(descr, {2, 3}), kGoodData));
    EXPECT_NE(e.find(std::string("unsupported dtype '") + descr + "'"), std::string::npos) << e;
    e = error_of(npy_file(1, npy_header(descr, {2, 3}), kGoodData), NpyContent::kMask);
    EXPECT_NE(e.find("unsupported dtype"), std::string::npos) << e;
  }
}

TEST(NpyMalformed, RankNotTwoOrThree) {
  std::string e = error_of(npy_fixture("<f4", {6}, {1, 2, 3, 4, 5, 6}));
  EXPECT_NE(e.find("rank 1, shape (6,)"), std::string::npos) << e;
  e = error_of(npy_fixture("<f4", {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_NE(e.find("rank 4, shape (1, 1, 2, 3)"), std::string::npos) << e;
  e = error_of(npy_fixture("<f4", {}, {1}));
  EXPECT_NE(e.find("rank 0, shape ()"), std::string::npos) << e;
  EXPECT_NE(e.find("expected rank 2 (n, d) or 3 (H, n, d)"), std::string::npos) << e;
}

TEST(NpyMalformed, ZeroAndNegativeDimensions) {
  std::string e = error_of(npy_fixture("<f4", {0, 3}, {}));
  EXPECT_NE(e.find("shape (0, 3) has a zero dimension"), std::string::npos) << e;
  e = error_of(npy_fixture("<f4", {2, 3, 0}, {}));
  EXPECT_NE(e.find("zero dimension"), std::string::npos) << e;
  e = error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, -3)}"));
  EXPECT_NE(e.find("negative"), std::string::npos) << e;
}

TEST(NpyMalformed, TruncatedDataSaysExpectedAndFound) {
  std::string bytes = npy_fixture("<f4", {2, 3}, {1, 2, 3, 4, 5, 6});
  bytes.resize(bytes.size() - 4);
  const std::string e = error_of(bytes);
  EXPECT_NE(e.find("truncated data"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 24 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("found 20"), std::string::npos) << e;
}

TEST(NpyMalformed, TrailingGarbage) {
  const std::string e = error_of(npy_fixture("<f8", {2, 3}, iota(6)) + "abc");
  EXPECT_NE(e.find("trailing garbage: 3 bytes"), std::string::npos) << e;
}

TEST(NpyMalformed, AbsurdShapesNeverAllocate) {
  // Products near 2^93 bytes: must be rejected by comparing with the bytes present.
  std::string e = error_of(npy_fixture("<f8", {2147483647, 2147483647, 2147483647}, {1, 2}));
  EXPECT_NE(e.find("truncated data"), std::string::npos) << e;
  EXPECT_NE(e.find("found 16"), std::string::npos) << e;
  e = error_of(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3000000000, 2)}"));
  EXPECT_NE(e.find("'shape' entry 0 is too large"), std::string::npos) << e;
  e =
      error_of(with_header("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (99999999999999999999999999999, 2)}"));
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
}

TEST(NpyMalformed, Float64OutsideFloat32Range) {
  const std::string e = error_of(npy_fixture("<f8", {2, 2, 2}, {0, 0, 0, 0, 0, 1e300, 0, 0}));
  EXPECT_NE(e.find("element [1, 0, 1] = 1e+300 is outside float32's range"), std::string::npos)
      << e;
}

TEST(NpyMalformed, UnreadableFiles) {
  std::string error;
  EXPECT_FALSE(read_npy("/nonexistent/dir/q.npy", NpyContent::kFloat, error));
  EXPECT_EQ(error.rfind("/nonexistent/dir/q.npy: cannot read", 0), 0u) << error;
  EXPECT_FALSE(read_npy(ATTN_TEST_TMP, NpyContent::kFloat, error));
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
}

// Every prefix and many random corruptions of valid files must give a result or an error,
// never a crash (run under the sanitizer build to catch out-of-bounds reads).
TEST(NpyMalformed, EveryTruncationAndRandomCorruptionIsHandled) {
  const std::vector<std::string> goods = {npy_fixture("<f4", {2, 3}, iota(6)),
                                          npy_fixture("<f8", {2, 1, 3}, iota(6), 2),
                                          npy_fixture("|b1", {3, 2}, {1, 0, 1, 1, 0, 0})};
  for (const std::string& good : goods) {
    for (size_t n = 0; n < good.size(); ++n) {
      std::string error;
      EXPECT_FALSE(parse(good.substr(0, n), error, NpyContent::kMask)) << n;
      EXPECT_FALSE(error.empty());
    }
    std::mt19937 rng(42);
    for (int trial = 0; trial < 3000; ++trial) {
      std::string bad = good;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<char>(rng() & 0xff);
      std::string error;
      auto t = parse(bad, error, NpyContent::kMask);
      if (!t) {
        EXPECT_FALSE(error.empty());
      }
    }
  }
}

}  // namespace
}  // namespace attn
