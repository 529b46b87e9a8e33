// Hand-built .npy bytes for tests, assembled byte by byte (independently of core/npy.cpp's writer)
// so reader tests and CLI tests can make valid and malformed files alike.
#pragma once

#include <string>
#include <vector>

namespace attn::test {

// A complete file: magic, version major.0, the header length (2 bytes for version 1, else 4,
// little-endian), `header` exactly as given (no padding added), then `data`.
std::string npy_file(int major, const std::string& header, const std::string& data);

// The header dict numpy writes: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
// padded with spaces and a final '\n' so the data starts at a multiple of 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<long long>& shape,
                       bool fortran_order = false, int major = 1);

// Little-endian encodings of values as the given dtype: "<f4", "<f8", "|b1", "<i1", "|u1", "<i2",
// "<u2", "<i4", "<u4", "<i8", "<u8" (integers are truncated towards zero).
std::string npy_data(const std::string& descr, const std::vector<double>& values);

// A valid file of the given dtype, shape and values (row-major).
std::string npy_fixture(const std::string& descr, const std::vector<long long>& shape,
                        const std::vector<double>& values, int major = 1);

// Writes bytes to path (binary); returns false on failure.
bool write_bytes(const std::string& path, const std::string& bytes);
bool file_exists(const std::string& path);
std::string read_bytes(const std::string& path);

}  // namespace attn::test
