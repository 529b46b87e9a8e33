// The safetensors format (an 8-byte little-endian header length, a JSON header naming every
// tensor's dtype, shape and byte range, then the raw data): a validating reader that maps the
// file instead of copying it, and a writer. Everything the file claims is checked against the
// file itself before it is used.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "io/mapped_file.h"

namespace attn {

// One tensor of the header. begin/end are byte offsets into the data that follows the header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I64", …
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
  int64_t elements() const;  // product of the shape (1 for a scalar)
};

// Bytes per element of a safetensors dtype name; 0 for a name the format does not define.
int safetensors_dtype_size(const std::string& dtype);

class SafetensorsFile {
 public:
  // Maps and validates `path`: the header length fits in the file (and in 100 MB), the header is
  // a JSON object, each tensor has a known dtype, a shape of non-negative integers and
  // data_offsets [begin, end] inside the file whose length is elements × dtype size, and no two
  // tensors' bytes overlap. Errors name the file and the tensor.
  bool open(const std::string& path, std::string& error);

  const std::string& path() const { return file_.path(); }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const SafetensorsEntry* find(const std::string& name) const;

  // Converts a tensor to float32 into `out` (entry.elements() values). Only F32, F16 and BF16
  // convert; any other dtype is refused naming the file and tensor.
  bool read_floats(const SafetensorsEntry& e, float* out, std::string& error) const;
  // Copies a BF16 tensor's raw bits into `out` (entry.elements() values); other dtypes refused.
  bool read_bf16(const SafetensorsEntry& e, uint16_t* out, std::string& error) const;

 private:
  MappedFile file_;
  size_t data_start_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write: float32 values converted to `dtype` (F32, F16 or BF16) on the way out.
struct SafetensorsTensor {
  std::string name;
  std::string dtype = "F32";
  std::vector<int64_t> shape;
  const float* data = nullptr;  // elements() values, row-major
};

// The bytes of a safetensors file holding `tensors` in the given order (the header is padded
// with spaces to a multiple of 8 bytes, as the reference writer does).
std::string safetensors_bytes(const std::vector<SafetensorsTensor>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

// Writes safetensors_bytes(...) atomically.
bool write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata, std::string& error);

// IEEE half and bfloat16 conversions (round to nearest even), shared by the reader and writer.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace attn
