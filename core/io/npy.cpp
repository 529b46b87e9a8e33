// The .npy reader (a small parser for the header's Python dict literal plus checked decoding of
// the data) and the float32 writer. Every malformed input gets an error naming what is wrong.
#include "io/npy.h"

#include <cassert>
#include <cctype>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "attention/format.h"
#include "io/atomic_file.h"

namespace attn {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// Nested tuples deeper than this are not a .npy header; the limit keeps recursion bounded.
constexpr int kMaxDepth = 16;

// A literal of the header dict: only the kinds .npy headers use.
struct PyValue {
  enum class Kind { kString, kBool, kNone, kInt, kSequence } kind = Kind::kNone;
  std::string text;            // kString
  bool flag = false;           // kBool
  bool negative = false;       // kInt
  bool huge = false;           // kInt: more than 2^62
  uint64_t magnitude = 0;      // kInt
  std::vector<PyValue> items;  // kSequence (tuple or list)
};

const char* kind_name(PyValue::Kind k) {
  switch (k) {
    case PyValue::Kind::kString:
      return "a string";
    case PyValue::Kind::kBool:
      return "a boolean";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kSequence:
      return "a tuple or list";
  }
  return "a value";
}

// Recursive-descent parser for the header, e.g. {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Accepts both quote styles, trailing commas and Python 2's "3L" integers.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& s) : s_(s) {}

  bool parse(std::map<std::string, PyValue>& dict, std::string& error) {
    skip_space();
    if (!eat('{')) return fail("expected '{' at the start", error);
    skip_space();
    while (!eat('}')) {
      std::string key;
      if (peek() != '\'' && peek() != '"') return fail("expected a quoted key", error);
      if (!parse_string(key, error)) return false;
      skip_space();
      if (!eat(':')) return fail("expected ':' after key '" + key + "'", error);
      PyValue value;
      if (!parse_value(value, 0, error)) return false;
      if (dict.count(key)) return fail("key '" + key + "' appears twice", error);
      dict[key] = std::move(value);
      skip_space();
      if (eat(',')) {
        skip_space();
        continue;
      }
      if (peek() != '}') return fail("expected ',' or '}'", error);
    }
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected text after the closing '}'", error);
    return true;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void skip_space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool fail(const std::string& what, std::string& error) const {
    std::ostringstream s;
    s << "header is not a valid Python dict literal: " << what << " at offset " << pos_
      << " of the header";
    error = s.str();
    return false;
  }

  bool parse_string(std::string& out, std::string& error) {
    const char quote = s_[pos_++];
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (!eat(quote)) return fail("unterminated string", error);
    return true;
  }

  bool parse_int(PyValue& v, std::string& error) {
    v.kind = PyValue::Kind::kInt;
    if (eat('-'))
      v.negative = true;
    else
      eat('+');
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return fail("expected a digit", error);
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      if (v.magnitude > (uint64_t{1} << 62) / 10)
        v.huge = true;
      else
        v.magnitude = v.magnitude * 10 + static_cast<uint64_t>(s_[pos_] - '0');
      ++pos_;
    }
    if (v.magnitude > (uint64_t{1} << 62)) v.huge = true;
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long literal
    return true;
  }

  bool parse_sequence(PyValue& v, int depth, std::string& error) {
    const char close = s_[pos_] == '(' ? ')' : ']';
    ++pos_;
    v.kind = PyValue::Kind::kSequence;
    skip_space();
    while (!eat(close)) {
      PyValue item;
      if (!parse_value(item, depth + 1, error)) return false;
      v.items.push_back(std::move(item));
      skip_space();
      if (eat(',')) {
        skip_space();
        continue;
      }
      if (peek() != close) return fail(std::string("expected ',' or '") + close + "'", error);
    }
    return true;
  }

  bool parse_word(const char* word) {
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    const char after = pos_ + n < s_.size() ? s_[pos_ + n] : '\0';
    if (std::isalnum(static_cast<unsigned char>(after)) || after == '_') return false;
    pos_ += n;
    return true;
  }

  bool parse_value(PyValue& v, int depth, std::string& error) {
    if (depth > kMaxDepth) return fail("values nested too deeply", error);
    skip_space();
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::kString;
      return parse_string(v.text, error);
    }
    if (c == '(' || c == '[') return parse_sequence(v, depth, error);
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c)))
      return parse_int(v, error);
    if (parse_word("True") || parse_word("False")) {
      v.kind = PyValue::Kind::kBool;
      v.flag = s_[pos_ - 4] == 'T';  // "True" is 4 letters, "False" 5
      return true;
    }
    if (parse_word("None")) {
      v.kind = PyValue::Kind::kNone;
      return true;
    }
    return fail(c == '\0' ? "unexpected end" : "unexpected character '" + std::string(1, c) + "'",
                error);
  }

  const std::string& s_;
  size_t pos_ = 0;
};

// The element types a file may hold.
enum class Elem { kF4, kF8, kBool, kInt, kUInt };

struct Dtype {
  Elem elem = Elem::kF4;
  size_t size = 4;
};

bool parse_dtype(const std::string& descr, NpyContent content, Dtype& out, std::string& error) {
  const std::string expected = content == NpyContent::kFloat
                                   ? "expected '<f4' (float32) or '<f8' (float64)"
                                   : "expected bool ('|b1'), a little-endian integer ('<i4', "
                                     "'|u1', ...) or float ('<f4', '<f8')";
  const std::string bad = "unsupported dtype '" + descr + "'; " + expected;
  if (descr.size() < 3) {
    error = bad;
    return false;
  }
  const char order = descr[0], kind = descr[1];
  const std::string digits = descr.substr(2);
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    error = bad;
    return false;
  }
  if (digits != "1" && digits != "2" && digits != "4" && digits != "8") {
    error = bad;
    return false;
  }
  out.size = static_cast<size_t>(digits[0] - '0');
  // '|' means "byte order not applicable", which numpy only writes for one-byte types; '=' is
  // native order, accepted as little-endian (numpy itself always writes '<' or '>').
  if (order == '>' && out.size > 1) {
    error = "big-endian dtype '" + descr + "' is not supported; " + expected +
            " (e.g. save with arr.astype('<f4'))";
    return false;
  }
  if (order == '|' && out.size > 1) {
    error = bad;
    return false;
  }
  if (kind == 'f' && (out.size == 4 || out.size == 8)) {
    out.elem = out.size == 4 ? Elem::kF4 : Elem::kF8;
    return true;
  }
  if (content == NpyContent::kMask) {
    if (kind == 'b' && out.size == 1) {
      out.elem = Elem::kBool;
      return true;
    }
    if (kind == 'i' || kind == 'u') {
      out.elem = kind == 'i' ? Elem::kInt : Elem::kUInt;
      return true;
    }
  }
  error = bad;
  return false;
}

uint64_t load_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t b = 0; b < n; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

// Decodes one element as float. Returns false (with a message) for a float64 outside float32's
// range, which would otherwise silently become infinity.
bool decode(const unsigned char* p, const Dtype& t, float& out, std::string& what) {
  switch (t.elem) {
    case Elem::kF4: {
      const uint32_t bits = static_cast<uint32_t>(load_le(p, 4));
      std::memcpy(&out, &bits, 4);
      return true;
    }
    case Elem::kF8: {
      const uint64_t bits = load_le(p, 8);
      double d;
      std::memcpy(&d, &bits, 8);
      if (std::isfinite(d) && std::abs(d) > static_cast<double>(FLT_MAX)) {
        what = format_value(d) + " is outside float32's range";
        return false;
      }
      out = static_cast<float>(d);
      return true;
    }
    case Elem::kBool:
      out = p[0] != 0 ? 1.0f : 0.0f;
      return true;
    case Elem::kUInt:
      out = load_le(p, t.size) != 0 ? 1.0f : 0.0f;
      return true;
    case Elem::kInt: {
      // Sign-extend, then keep the value (a mask's nonzero means "may attend").
      uint64_t v = load_le(p, t.size);
      const unsigned shift = static_cast<unsigned>(64 - 8 * t.size);
      const int64_t s = static_cast<int64_t>(v << shift) >> shift;
      out = s == 0 ? 0.0f : (s > 0 ? 1.0f : -1.0f);
      return true;
    }
  }
  return false;
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < dims.size(); ++i) s << (i ? ", " : "") << dims[i];
  if (dims.size() == 1) s << ",";
  s << ")";
  return s.str();
}

// The magic string, the format version and the header's length: the header's bytes, and where
// the data starts.
bool read_preamble(const std::string& bytes, std::string& header, uint64_t& data_start,
                   std::string& error) {
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicLen || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0) {
    error = bytes.size() < kMagicLen
                ? "not a .npy file: only " + std::to_string(bytes.size()) + " bytes long"
                : "not a .npy file: it does not start with the magic string \\x93NUMPY";
    return false;
  }
  if (bytes.size() < 8) {
    error = "truncated .npy file: the format version is missing";
    return false;
  }
  const int major = u[6], minor = u[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + "; expected 1.0, 2.0 or 3.0";
    return false;
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t prefix = 8 + len_bytes;
  if (bytes.size() < prefix) {
    error = "truncated .npy file: the header length is missing";
    return false;
  }
  const uint64_t header_len = load_le(u + 8, len_bytes);
  if (header_len > bytes.size() - prefix) {
    error = "truncated header: it should be " + std::to_string(header_len) + " bytes but only " +
            std::to_string(bytes.size() - prefix) + " bytes follow";
    return false;
  }
  header = bytes.substr(prefix, static_cast<size_t>(header_len));
  if (header.find('\0') != std::string::npos) {
    error = "header is not a valid Python dict literal: it contains a NUL byte";
    return false;
  }
  data_start = prefix + header_len;
  return true;
}

// The header's dict: exactly 'descr' (a plain dtype string), 'fortran_order' (False) and 'shape'.
bool read_header_dict(const std::string& header, std::string& descr_out, const PyValue*& shape_out,
                      std::map<std::string, PyValue>& dict, std::string& error) {
  if (!HeaderParser(header).parse(dict, error)) return false;
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!dict.count(key)) {
      error = std::string("header has no '") + key +
              "' key; expected 'descr', 'fortran_order' and 'shape'";
      return false;
    }
  for (const auto& kv : dict)
    if (kv.first != "descr" && kv.first != "fortran_order" && kv.first != "shape") {
      error = "header has an unexpected key '" + kv.first +
              "'; expected only 'descr', 'fortran_order' and 'shape'";
      return false;
    }
  const PyValue& descr = dict["descr"];
  const PyValue& fortran = dict["fortran_order"];
  const PyValue& shape = dict["shape"];
  if (descr.kind != PyValue::Kind::kString) {
    error = std::string("'descr' is ") + kind_name(descr.kind) +
            " (a structured dtype?); expected a plain dtype string such as '<f4'";
    return false;
  }
  if (fortran.kind != PyValue::Kind::kBool) {
    error =
        std::string("'fortran_order' is ") + kind_name(fortran.kind) + "; expected True or False";
    return false;
  }
  if (fortran.flag) {
    error =
        "fortran_order is True (column-major data) which is not supported; save a C-order "
        "array, e.g. np.save(path, np.ascontiguousarray(a))";
    return false;
  }
  if (shape.kind != PyValue::Kind::kSequence) {
    error = std::string("'shape' is ") + kind_name(shape.kind) + "; expected a tuple of integers";
    return false;
  }
  descr_out = descr.text;
  shape_out = &shape;
  return true;
}

// The shape's entries: non-negative integers that fit an int.
bool read_dims(const PyValue& shape, std::vector<uint64_t>& dims, std::string& error) {
  for (size_t i = 0; i < shape.items.size(); ++i) {
    const PyValue& d = shape.items[i];
    if (d.kind != PyValue::Kind::kInt) {
      error = "'shape' entry " + std::to_string(i) + " is " + kind_name(d.kind) +
              "; expected a non-negative integer";
      return false;
    }
    if (d.negative && d.magnitude != 0) {
      error = "'shape' entry " + std::to_string(i) + " is negative (-" +
              std::to_string(d.magnitude) + ")";
      return false;
    }
    if (d.huge || d.magnitude > static_cast<uint64_t>(INT_MAX)) {
      error = "'shape' entry " + std::to_string(i) + " is too large (at most " +
              std::to_string(INT_MAX) + ")";
      return false;
    }
    dims.push_back(d.magnitude);
  }
  return true;
}

// The shape against what this program reads (rank 2 or 3, no zero dimension, a bounded number of
// heads) and the data's size against the bytes after the header, before anything is allocated.
bool check_size(const std::vector<uint64_t>& dims, const Dtype& dtype, const std::string& descr,
                uint64_t found, std::string& error) {
  if (dims.size() != 2 && dims.size() != 3) {
    error = "has rank " + std::to_string(dims.size()) + ", shape " + shape_text(dims) +
            "; expected rank 2 (n, d) or 3 (H, n, d)";
    return false;
  }
  for (uint64_t d : dims)
    if (d == 0) {
      error = "shape " + shape_text(dims) + " has a zero dimension; every dimension must be >= 1";
      return false;
    }
  // The size is compared with the bytes present before anything is allocated; three dimensions
  // below 2^31 can overflow 64 bits, so the product saturates.
  uint64_t expected = dtype.size;
  bool overflow = false;
  for (uint64_t d : dims) {
    if (expected > UINT64_MAX / d)
      overflow = true;
    else
      expected *= d;
  }
  if (overflow || found < expected) {
    error = "truncated data: shape " + shape_text(dims) + " of '" + descr + "' needs " +
            (overflow ? "more than " + std::to_string(UINT64_MAX) : std::to_string(expected)) +
            " bytes after the header, found " + std::to_string(found);
    return false;
  }
  if (found > expected) {
    error = "trailing garbage: " + std::to_string(found - expected) +
            " bytes after the data (shape " + shape_text(dims) + " of '" + descr + "' needs " +
            std::to_string(expected) + ")";
    return false;
  }
  // Each head is a matrix of its own: a (2^28, 1, 1) file of 1 GB would become 2^28 allocations.
  if (dims.size() == 3 && dims[0] > static_cast<uint64_t>(kMaxNpyHeads)) {
    error = "shape " + shape_text(dims) + " has " + std::to_string(dims[0]) + " heads; at most " +
            std::to_string(kMaxNpyHeads) + " are supported";
    return false;
  }

  return true;
}

bool parse_impl(const std::string& bytes, NpyContent content, NpyTensor& out, std::string& error) {
  std::string header, descr;
  uint64_t data_start = 0;
  if (!read_preamble(bytes, header, data_start, error)) return false;
  std::map<std::string, PyValue> dict;
  const PyValue* shape = nullptr;
  if (!read_header_dict(header, descr, shape, dict, error)) return false;
  std::vector<uint64_t> dims;
  if (!read_dims(*shape, dims, error)) return false;
  Dtype dtype;
  if (!parse_dtype(descr, content, dtype, error)) return false;
  if (!check_size(dims, dtype, descr, bytes.size() - data_start, error)) return false;
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t heads = dims.size() == 3 ? static_cast<size_t>(dims[0]) : 1;
  const Eigen::Index rows = static_cast<Eigen::Index>(dims[dims.size() - 2]);
  const Eigen::Index cols = static_cast<Eigen::Index>(dims[dims.size() - 1]);
  out.rank = static_cast<int>(dims.size());
  out.heads.assign(heads, Matrix());
  const unsigned char* p = u + data_start;
  for (size_t h = 0; h < heads; ++h) {
    Matrix& m = out.heads[h];
    m.resize(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
      for (Eigen::Index j = 0; j < cols; ++j, p += dtype.size) {
        std::string what;
        if (!decode(p, dtype, m(i, j), what)) {
          std::ostringstream s;
          s << "element [";
          if (dims.size() == 3) s << h << ", ";
          s << i << ", " << j << "] = " << what;
          error = s.str();
          return false;
        }
      }
  }
  return true;
}

void append_le32(std::string& out, uint32_t v) {
  for (int b = 0; b < 4; ++b) out += static_cast<char>((v >> (8 * b)) & 0xff);
}

}  // namespace

std::optional<NpyTensor> parse_npy(const std::string& bytes, const std::string& name,
                                   NpyContent content, std::string& error) {
  NpyTensor t;
  std::string what;
  if (!parse_impl(bytes, content, t, what)) {
    error = name + ": " + what;
    return std::nullopt;
  }
  return t;
}

std::optional<NpyTensor> read_npy(const std::string& path, NpyContent content, std::string& error) {
  std::string bytes, why;
  if (!read_input_file(path, kMaxNpyFileBytes, bytes, why)) {
    // read_text_file says "cannot read '<path>': <reason>"; keep the path first like every
    // other error of this reader.
    const std::string prefix = "cannot read '" + path + "': ";
    if (why.compare(0, prefix.size(), prefix) == 0) why = why.substr(prefix.size());
    error = path + ": cannot read: " + why;
    return std::nullopt;
  }
  return parse_npy(bytes, path, content, error);
}

std::string npy_header(const std::vector<size_t>& shape) {
  // numpy writes (n,) for rank 1 and (a, b, ...) otherwise.
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so magic (6) + version (2) + length (2) + header ends on a 64-byte boundary,
  // the last byte being '\n' as numpy writes it.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  return out;
}

std::string npy_header(int rank, size_t heads, Eigen::Index rows, Eigen::Index cols) {
  assert((rank == 2 && heads == 1) || (rank == 3 && heads >= 1));
  const auto r = static_cast<size_t>(rows), c = static_cast<size_t>(cols);
  return npy_header(rank == 3 ? std::vector<size_t>{heads, r, c} : std::vector<size_t>{r, c});
}

std::string npy_data(const Matrix& m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Row-major float32 in memory is already the file's '<f4' C-order bytes: one copy, not a
  // call per value (a long sequence's weights are millions of them).
  std::string out(static_cast<size_t>(m.size()) * 4, '\0');
  if (m.size()) std::memcpy(out.data(), m.data(), out.size());
  return out;
#else
  std::string out;
  out.reserve(static_cast<size_t>(m.size()) * 4);
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      uint32_t bits;
      const float x = m(i, j);
      std::memcpy(&bits, &x, 4);
      append_le32(out, bits);
    }
  return out;
#endif
}

std::string_view npy_data_view(const Matrix& m, std::string& scratch) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  (void)scratch;
  return {reinterpret_cast<const char*>(m.data()), static_cast<size_t>(m.size()) * 4};
#else
  scratch = npy_data(m);
  return scratch;
#endif
}

std::string npy_bytes(const HeadStack& heads, int rank) {
  assert((rank == 2 && heads.size() == 1) || (rank == 3 && !heads.empty()));
  const Eigen::Index rows = heads.empty() ? 0 : heads[0].rows();
  const Eigen::Index cols = heads.empty() ? 0 : heads[0].cols();
  std::string out = npy_header(rank, heads.size(), rows, cols);
  out.reserve(out.size() + heads.size() * static_cast<size_t>(rows * cols) * 4);
  for (const Matrix& m : heads) {
    assert(m.rows() == rows && m.cols() == cols);
    out += npy_data(m);
  }
  return out;
}

bool write_npy(const std::string& path, const HeadStack& heads, int rank, std::string& error) {
  if (!((rank == 2 && heads.size() == 1) || (rank == 3 && !heads.empty()))) {
    error = "cannot write '" + path + "': rank " + std::to_string(rank) + " with " +
            std::to_string(heads.size()) + " heads";
    return false;
  }
  for (const Matrix& m : heads)
    if (m.rows() != heads[0].rows() || m.cols() != heads[0].cols() || m.size() == 0) {
      error = "cannot write '" + path + "': heads differ in shape or are empty";
      return false;
    }
  return write_file_atomically(path, npy_bytes(heads, rank), error);
}

std::string npy_array_bytes(const std::vector<size_t>& shape, const float* data) {
  size_t count = 1;
  for (size_t d : shape) count *= d;
  std::string out = npy_header(shape);
  out.reserve(out.size() + count * 4);
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, data + i, 4);
    append_le32(out, bits);
  }
  return out;
}

}  // namespace attn
