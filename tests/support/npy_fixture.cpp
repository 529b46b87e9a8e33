// Hand-built .npy bytes for tests: every byte placed explicitly, sharing no code with the engine.
#include "npy_fixture.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attn::test {
namespace {

void put_le(std::string& out, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}

}  // namespace

std::string npy_file(int major, const std::string& header, const std::string& data) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  put_le(out, header.size(), major == 1 ? 2 : 4);
  return out + header + data;
}

std::string npy_header(const std::string& descr, const std::vector<long long>& shape,
                       bool fortran_order, int major) {
  std::ostringstream s;
  s << "{'descr': '" << descr << "', 'fortran_order': " << (fortran_order ? "True" : "False")
    << ", 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) s << ",";
  s << "), }";
  std::string h = s.str();
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  return h + "\n";
}

std::string npy_data(const std::string& descr, const std::vector<double>& values) {
  std::string out;
  for (double x : values) {
    if (descr == "<f4") {
      float f = static_cast<float>(x);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put_le(out, bits, 4);
    } else if (descr == "<f8") {
      uint64_t bits;
      std::memcpy(&bits, &x, 8);
      put_le(out, bits, 8);
    } else if (descr == "|b1") {
      out += static_cast<char>(x != 0 ? 1 : 0);
    } else if (descr.size() == 3 && (descr[1] == 'i' || descr[1] == 'u')) {
      const int bytes = descr[2] - '0';
      put_le(out, static_cast<uint64_t>(static_cast<int64_t>(x)), bytes);
    } else {
      throw std::invalid_argument("npy_data: unknown dtype " + descr);
    }
  }
  return out;
}

std::string npy_fixture(const std::string& descr, const std::vector<long long>& shape,
                        const std::vector<double>& values, int major) {
  return npy_file(major, npy_header(descr, shape, false, major), npy_data(descr, values));
}

bool write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace attn::test
