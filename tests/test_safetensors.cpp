// The safetensors reader and writer: a file built byte by byte read back exactly (F32, F16,
// BF16 bit patterns), the writer's layout, and every kind of damaged or hostile file refused with
// an error naming the file and tensor — never a crash or a huge allocation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <random>

#include "io/safetensors.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::temp_path;
using test::write_bytes;

std::string le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string file_of(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}
std::string u16(uint16_t v) {
  return std::string{static_cast<char>(v & 0xff), static_cast<char>(v >> 8)};
}
std::string f32(float f) {
  std::string s(4, '\0');
  std::memcpy(&s[0], &f, 4);
  return s;
}

// A file with three tensors of known bits: F16 (2, 2), BF16 (3,), an F32 scalar.
std::string known_file() {
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]},)"
                             R"("c":{"dtype":"F32","shape":[],"data_offsets":[14,18]}})";
  // F16: 1, -2, 65504 (largest), 2^-24 (smallest subnormal). BF16: 1, 3.140625, -0.5.
  const std::string data = u16(0x3C00) + u16(0xC000) + u16(0x7BFF) + u16(0x0001) + u16(0x3F80) +
                           u16(0x4049) + u16(0xBF00) + f32(0.1f);
  return file_of(header, data);
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  EXPECT_TRUE(write_bytes(path, bytes));
  return path;
}

TEST(Safetensors, ReadsAFileBuiltByHand) {
  const std::string path = write_temp("known.safetensors", known_file());
  SafetensorsFile f;
  std::string error;
  ASSERT_TRUE(f.open(path, error)) << error;
  ASSERT_EQ(f.entries().size(), 3u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const SafetensorsEntry* a = f.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 2}));
  float av[4], bv[3], cv[1];
  ASSERT_TRUE(f.read_floats(*a, av, error));
  EXPECT_EQ(av[0], 1.0f);
  EXPECT_EQ(av[1], -2.0f);
  EXPECT_EQ(av[2], 65504.0f);
  EXPECT_EQ(av[3], std::ldexp(1.0f, -24));
  ASSERT_TRUE(f.read_floats(*f.find("b"), bv, error));
  EXPECT_EQ(bv[0], 1.0f);
  EXPECT_EQ(bv[1], 3.140625f);
  EXPECT_EQ(bv[2], -0.5f);
  ASSERT_TRUE(f.read_floats(*f.find("c"), cv, error));
  EXPECT_EQ(cv[0], 0.1f);  // F32 at an unaligned offset (8 + header + 14)
}

TEST(Safetensors, WriterLayoutAndRoundingToNearestEven) {
  // 1 + 2^-11 is halfway between two halves (1 and 1 + 2^-10): ties go to the even one, 1.
  // 1 + 3·2^-12 rounds up to 1 + 2^-10. In bfloat16 (8 bits of mantissa) the same at 2^-8.
  const std::vector<float> x = {1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -12),
                                1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -9)};
  const std::string bytes = safetensors_bytes({{"h", "F16", {4}, x.data()},
                                               {"b", "BF16", {2, 2}, x.data()},
                                               {"f", "F32", {1, 4}, x.data()}},
                                              {{"k", "v"}});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u);  // padded so the data starts 8-aligned
  EXPECT_EQ(bytes[8], '{');
  EXPECT_EQ(bytes.size(), 8 + n + 8 + 8 + 16);
  const std::string path = write_temp("written.safetensors", bytes);
  SafetensorsFile f;
  std::string error;
  ASSERT_TRUE(f.open(path, error)) << error;
  float h[4], b[4], g[4];
  ASSERT_TRUE(f.read_floats(*f.find("h"), h, error));
  ASSERT_TRUE(f.read_floats(*f.find("b"), b, error));
  ASSERT_TRUE(f.read_floats(*f.find("f"), g, error));
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(b[2], 1.0f);
  EXPECT_EQ(b[3], 1.0f + std::ldexp(1.0f, -7));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g[i], x[static_cast<size_t>(i)]);
  EXPECT_EQ(f.metadata().at("k"), "v");
}

struct Damaged {
  const char* name;
  std::string bytes;
  const char* expect;  // a piece of the error
};

TEST(Safetensors, DamagedFilesAreRefusedWithTheirName) {
  const std::string ok_t = R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const std::string d8(8, '\0');
  const std::vector<Damaged> cases = {
      {"empty", "", "truncated"},
      {"five-bytes", "abcde", "truncated"},
      {"length-past-end", le64(1000) + "{}", "claims 1000 bytes"},
      {"length-huge", le64(~0ull) + "{}", "claims"},
      {"junk", le64(8) + "\x01\x02junk!!", "not a JSON object"},
      {"bad-json", file_of("{\"t\":", ""), "not valid JSON"},
      {"array-header", file_of("[1,2]  ", ""), "not a JSON object"},
      {"no-dtype", file_of(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", d8), "tensor 't'"},
      {"unknown-dtype", file_of(R"({"t":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", d8),
       "unknown dtype 'F33'"},
      {"negative-shape", file_of(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", d8),
       "tensor 't'"},
      {"float-shape", file_of(R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", d8),
       "tensor 't'"},
      {"offsets-past-end",
       file_of(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", d8), "past the end"},
      {"begin-after-end", file_of(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", d8),
       "begin after"},
      {"size-mismatch", file_of(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", d8),
       "expected 12"},
      {"overlap",
       file_of("{" + ok_t + R"(,"u":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", d8),
       "overlap"},
      {"shape-overflow",
       file_of(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})",
               d8),
       "is too large"},
      {"offsets-not-pair", file_of(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", d8),
       "data_offsets"},
      {"metadata-not-strings", file_of(R"({"__metadata__":{"a":1},)" + ok_t + "}", d8),
       "__metadata__"},
      {"tensor-not-object", file_of(R"({"t":[1,2]})", ""), "tensor 't'"},
  };
  for (const Damaged& c : cases) {
    const std::string path = write_temp(std::string(c.name) + ".safetensors", c.bytes);
    SafetensorsFile f;
    std::string error;
    EXPECT_FALSE(f.open(path, error)) << c.name;
    EXPECT_NE(error.find(path), std::string::npos) << c.name << ": " << error;
    EXPECT_NE(error.find(c.expect), std::string::npos) << c.name << ": " << error;
  }
}

TEST(Safetensors, OnlyRegularFiles) {
  SafetensorsFile f;
  std::string error;
  const std::string dir = temp_path("a-folder");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  EXPECT_FALSE(f.open(dir, error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  const std::string fifo = temp_path("a-fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_FALSE(f.open(fifo, error));  // must not block waiting for a writer
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(f.open(temp_path("missing.safetensors"), error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
}

TEST(Safetensors, OtherDtypesAreReadableEntriesButNotFloats) {
  const std::string path = write_temp(
      "ints.safetensors",
      file_of(R"({"i":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0')));
  SafetensorsFile f;
  std::string error;
  ASSERT_TRUE(f.open(path, error)) << error;
  float out[2];
  EXPECT_FALSE(f.read_floats(*f.find("i"), out, error));
  EXPECT_NE(error.find("tensor 'i' has dtype I64"), std::string::npos) << error;
}

// Random damage to a valid file: every open either fails with a message or yields entries whose
// bytes lie inside the file (read them all).
TEST(Safetensors, RandomCorruptionNeverCrashes) {
  const std::string good = known_file();
  std::mt19937 rng(5);
  const std::string path = temp_path("fuzz.safetensors");
  int opened = 0;
  for (int it = 0; it < 3000; ++it) {
    std::string b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % b.size();
      switch (rng() % 4) {
        case 0:
          b[at] = static_cast<char>(rng());
          break;
        case 1:
          b.resize(at);
          break;
        case 2:
          b[at] = "0123456789[]{},:\""[rng() % 17];
          break;
        default:
          b.insert(at, 1, static_cast<char>(rng()));
          break;
      }
      if (b.empty()) break;
    }
    ASSERT_TRUE(write_bytes(path, b));
    SafetensorsFile f;
    std::string error;
    if (!f.open(path, error)) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    ++opened;
    for (const SafetensorsEntry& e : f.entries()) {
      std::vector<float> out(static_cast<size_t>(e.elements()) + 1);
      f.read_floats(e, out.data(), error);
    }
  }
  EXPECT_GT(opened, 0);
}

}  // namespace
}  // namespace attn
