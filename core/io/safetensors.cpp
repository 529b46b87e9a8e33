// The safetensors reader (mapped, validated against the file's real size) and writer.
#include "io/safetensors.h"

#include <Eigen/Core>
#include <algorithm>
#include <climits>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_input.h"

namespace attn {
namespace {

// The format's own limit on the header, so a hostile length cannot make us parse gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A JSON value that is a non-negative integer, as uint64.
bool as_unsigned(const nlohmann::json& j, uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

}  // namespace

int64_t SafetensorsEntry::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int safetensors_dtype_size(const std::string& d) {
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  return 0;
}

float half_to_float(uint16_t h) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h));
}
uint16_t float_to_half(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::half(f)); }
float bf16_to_float(uint16_t b) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(b));
}
uint16_t float_to_bf16(float f) { return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(f)); }

bool SafetensorsFile::open(const std::string& path, std::string& error) {
  entries_.clear();
  metadata_.clear();
  if (!file_.open(path, error)) return false;
  const size_t size = file_.size();
  auto fail = [&](const std::string& why) {
    error = path + ": " + why;
    return false;
  };
  if (size < 8)
    return fail("truncated: " + std::to_string(size) + " bytes, not a safetensors file");
  const uint64_t header_len = read_le64(file_.data());
  if (header_len > size - 8)
    return fail("the header claims " + std::to_string(header_len) +
                " bytes but the file has only " + std::to_string(size - 8) +
                " after the length (truncated or not safetensors)");
  if (header_len > kMaxHeaderBytes)
    return fail("header of " + std::to_string(header_len) + " bytes is larger than 100 MB");
  if (header_len < 2 || file_.data()[8] != '{')
    return fail("the header is not a JSON object (not a safetensors file)");
  data_start_ = 8 + static_cast<size_t>(header_len);
  const uint64_t data_size = size - data_start_;

  nlohmann::json header;
  std::string deep;
  if (!check_json_depth(reinterpret_cast<const char*>(file_.data()) + 8,
                        static_cast<size_t>(header_len), kMaxJsonDepth, deep))
    return fail("the header is not valid JSON: " + deep);
  try {
    header = nlohmann::json::parse(file_.data() + 8, file_.data() + data_start_);
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) return fail("the header is not a JSON object");

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) return fail("__metadata__ is not an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) return fail("__metadata__." + m.key() + " is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (!v.is_object()) return fail(where + "not an object with dtype, shape and data_offsets");
    SafetensorsEntry e;
    e.name = name;
    auto dt = v.find("dtype");
    if (dt == v.end() || !dt->is_string()) return fail(where + "no dtype string");
    e.dtype = dt->get<std::string>();
    const int esize = safetensors_dtype_size(e.dtype);
    if (esize == 0) return fail(where + "unknown dtype '" + e.dtype + "'");
    auto sh = v.find("shape");
    if (sh == v.end() || !sh->is_array()) return fail(where + "no shape array");
    if (sh->size() > 8) return fail(where + "shape has more than 8 dimensions");
    // The byte count must fit in 64 bits; checked as the product grows, so none overflows.
    // Whether the bytes exist is the data_offsets check below.
    const uint64_t max_elements = UINT64_MAX / static_cast<uint64_t>(esize);
    uint64_t elements = 1;
    bool zero = false;
    for (const auto& d : *sh) {
      uint64_t n = 0;
      if (!as_unsigned(d, n)) return fail(where + "shape holds something other than sizes ≥ 0");
      if (n > static_cast<uint64_t>(INT64_MAX))
        return fail(where + "shape " + sh->dump() + " is too large");
      if (n == 0) zero = true;
      if (!zero && n > max_elements / std::max<uint64_t>(elements, 1))
        return fail(where + "shape " + sh->dump() + " is too large");
      elements = zero ? 0 : elements * n;
      e.shape.push_back(static_cast<int64_t>(n));
    }
    auto off = v.find("data_offsets");
    if (off == v.end() || !off->is_array() || off->size() != 2 ||
        !as_unsigned((*off)[0], e.begin) || !as_unsigned((*off)[1], e.end))
      return fail(where + "data_offsets is not [begin, end]");
    if (e.begin > e.end) return fail(where + "data_offsets begin after they end");
    if (e.end > data_size)
      return fail(where + "data_offsets [" + std::to_string(e.begin) + ", " +
                  std::to_string(e.end) + "] run past the end of the file (" +
                  std::to_string(data_size) + " data bytes; truncated?)");
    if (e.end - e.begin != elements * static_cast<uint64_t>(esize))
      return fail(where + std::to_string(e.end - e.begin) + " bytes for shape " + sh->dump() +
                  " of " + e.dtype + "; expected " +
                  std::to_string(elements * static_cast<uint64_t>(esize)));
    entries_.push_back(std::move(e));
  }

  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& e : entries_) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
              return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
            });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      return fail("tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name +
                  "' overlap in the file");
  return true;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

bool SafetensorsFile::read_floats(const SafetensorsEntry& e, float* out, std::string& error) const {
  const uint8_t* p = file_.data() + data_start_ + e.begin;
  const int64_t n = e.elements();
  // memcpy per element: the data need not be aligned in the file.
  if (e.dtype == "F32") {
    std::memcpy(out, p, static_cast<size_t>(n) * 4);
  } else if (e.dtype == "F16" || e.dtype == "BF16") {
    const bool half = e.dtype == "F16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * i, 2);
      out[i] = half ? half_to_float(bits) : bf16_to_float(bits);
    }
  } else {
    error =
        path() + ": tensor '" + e.name + "' has dtype " + e.dtype + "; expected F32, F16 or BF16";
    return false;
  }
  return true;
}

bool SafetensorsFile::read_bf16(const SafetensorsEntry& e, uint16_t* out,
                                std::string& error) const {
  if (e.dtype != "BF16") {
    error = path() + ": tensor '" + e.name + "' has dtype " + e.dtype + "; expected BF16";
    return false;
  }
  std::memcpy(out, file_.data() + data_start_ + e.begin, static_cast<size_t>(e.elements()) * 2);
  return true;
}

std::string safetensors_bytes(const std::vector<SafetensorsTensor>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  // nlohmann's ordered_json keeps the tensors in the order given, as a reader expects.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    const uint64_t bytes = static_cast<uint64_t>(n) * safetensors_dtype_size(t.dtype);
    header[t.name] = {
        {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  for (int i = 0; i < 8; ++i) out += static_cast<char>((text.size() >> (8 * i)) & 0xff);
  out += text;
  for (const auto& t : tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;
    if (t.dtype == "F32") {
      out.append(reinterpret_cast<const char*>(t.data), static_cast<size_t>(n) * 4);
    } else {
      const bool half = t.dtype == "F16";
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t b = half ? float_to_half(t.data[i]) : float_to_bf16(t.data[i]);
        out += static_cast<char>(b & 0xff);
        out += static_cast<char>(b >> 8);
      }
    }
  }
  return out;
}

bool write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata, std::string& error) {
  for (const auto& t : tensors)
    if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16") {
      error = "cannot write '" + path + "': tensor '" + t.name + "' has dtype " + t.dtype +
              "; the writer takes F32, F16 or BF16";
      return false;
    }
  return write_file_atomically(path, safetensors_bytes(tensors, metadata), error);
}

}  // namespace attn
