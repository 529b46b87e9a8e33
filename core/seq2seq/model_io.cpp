// Model file format (see model_io.h). Layout, all little-endian:
//   "ATLS2SM\n" | u32 version | u32 score, in_vocab, out_vocab, embed, hidden, window |
//   str in_chars | str out_chars | str info | u32 tensor count | per tensor: str name, u32 rows,
//   u32 cols, f32 data[rows·cols] | u64 FNV-1a of every byte before it.
// (str = u32 length + bytes.) The tensors must be exactly those the configuration implies.
#include "seq2seq/model_io.h"

#include <cmath>
#include <cstring>

#include "io/atomic_file.h"

namespace attn::s2s {

namespace {

constexpr char kMagic[8] = {'A', 'T', 'L', 'S', '2', 'S', 'M', '\n'};
constexpr uint32_t kMaxString = 1u << 20;

uint64_t fnv1a(const char* data, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

void put_u32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_str(std::string& s, const std::string& v) {
  put_u32(s, static_cast<uint32_t>(v.size()));
  s += v;
}

struct Reader {
  const std::string& bytes;
  size_t pos = 0;
  size_t end;  // checksum excluded
  std::string error;

  bool need(size_t n, const char* what) {
    if (end - pos < n) {
      error =
          std::string("truncated: file ends inside ") + what + " at byte " + std::to_string(pos);
      return false;
    }
    return true;
  }
  bool u32(uint32_t& v, const char* what) {
    if (!need(4, what)) return false;
    v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[pos + i])) << (8 * i);
    pos += 4;
    return true;
  }
  bool str(std::string& v, const char* what) {
    uint32_t n = 0;
    if (!u32(n, what)) return false;
    if (n > kMaxString) {
      error = std::string(what) + " is " + std::to_string(n) + " bytes long (corrupted length)";
      return false;
    }
    if (!need(n, what)) return false;
    v = bytes.substr(pos, n);
    pos += n;
    return true;
  }
};

}  // namespace

Model new_date_model(Score score, int hidden, int embed, int window, uint64_t seed) {
  Model m;
  m.in_vocab = default_input_vocab();
  m.out_vocab = default_output_vocab();
  m.config.score = score;
  m.config.in_vocab = m.in_vocab.size();
  m.config.out_vocab = m.out_vocab.size();
  m.config.hidden = hidden;
  m.config.embed = embed;
  m.config.window = window;
  m.params = init_params(m.config, seed);
  return m;
}

std::string serialize_model(const Model& m) {
  std::string s(kMagic, sizeof kMagic);
  put_u32(s, kModelFormatVersion);
  const ModelConfig& c = m.config;
  for (int v : {static_cast<int>(c.score), c.in_vocab, c.out_vocab, c.embed, c.hidden, c.window})
    put_u32(s, static_cast<uint32_t>(v));
  put_str(s, m.in_vocab.chars);
  put_str(s, m.out_vocab.chars);
  put_str(s, m.info);
  uint32_t count = 0;
  m.params.visit([&count](const char*, const Mat<float>&) { ++count; });
  put_u32(s, count);
  m.params.visit([&s](const char* name, const Mat<float>& t) {
    put_str(s, name);
    put_u32(s, static_cast<uint32_t>(t.rows()));
    put_u32(s, static_cast<uint32_t>(t.cols()));
    const size_t n = static_cast<size_t>(t.size()) * sizeof(float);
    const size_t at = s.size();
    s.resize(at + n);
    std::memcpy(&s[at], t.data(), n);  // x86 and ARM Linux are little-endian
  });
  const uint64_t h = fnv1a(s.data(), s.size());
  put_u32(s, static_cast<uint32_t>(h & 0xFFFFFFFFu));
  put_u32(s, static_cast<uint32_t>(h >> 32));
  return s;
}

bool parse_model(const std::string& bytes, const std::string& source, Model& out,
                 std::string& error) {
  auto fail = [&](const std::string& why) {
    error = "'" + source + "': " + why;
    return false;
  };
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return fail(
        "not an Attention Lab seq2seq model (bad magic; expected a file written by "
        "'seq2seq train')");
  if (bytes.size() < sizeof kMagic + 4 + 8)
    return fail("truncated: only " + std::to_string(bytes.size()) + " bytes");
  Reader r{bytes, sizeof kMagic, bytes.size() - 8, {}};
  uint32_t version = 0;
  r.u32(version, "version");
  if (version != kModelFormatVersion)
    return fail("model format version " + std::to_string(version) + " is not supported (this " +
                "build reads version " + std::to_string(kModelFormatVersion) + ")");
  // The checksum covers every byte, so nothing the file declares (sizes, shapes, alphabets) is
  // trusted, or allocated for, before it matches.
  uint32_t lo = 0, hi = 0;
  {
    Reader tail{bytes, bytes.size() - 8, bytes.size(), {}};
    tail.u32(lo, "checksum");
    tail.u32(hi, "checksum");
  }
  const uint64_t stored = (static_cast<uint64_t>(hi) << 32) | lo;
  if (stored != fnv1a(bytes.data(), bytes.size() - 8))
    return fail("checksum mismatch (the file is corrupted or truncated)");

  uint32_t f[6];
  const char* names[6] = {"score", "in_vocab", "out_vocab", "embed", "hidden", "window"};
  for (int i = 0; i < 6; ++i)
    if (!r.u32(f[i], names[i])) return fail(r.error);
  Model m;
  if (!r.str(m.in_vocab.chars, "input alphabet") || !r.str(m.out_vocab.chars, "output alphabet") ||
      !r.str(m.info, "info"))
    return fail(r.error);
  if (f[0] >= score_names().size())
    return fail("field score: unknown score id " + std::to_string(f[0]));
  m.config.score = static_cast<Score>(f[0]);
  m.in_vocab.specials = 1;
  m.out_vocab.specials = 2;
  if (f[1] != static_cast<uint32_t>(m.in_vocab.size()) ||
      f[2] != static_cast<uint32_t>(m.out_vocab.size()))
    return fail("field in_vocab/out_vocab does not match the stored alphabets");
  for (const Vocab* v : {&m.in_vocab, &m.out_vocab}) {
    std::string why;
    if (!check_alphabet(*v, why))
      return fail(std::string(v == &m.in_vocab ? "input" : "output") + " alphabet: " + why);
  }
  m.config.in_vocab = static_cast<int>(f[1]);
  m.config.out_vocab = static_cast<int>(f[2]);
  if (f[3] < 1 || f[3] > 4096 || f[4] < 2 || f[4] > 4096 || f[4] % 2 != 0 || f[5] > 1000 ||
      (uses_window(m.config.score) && f[5] < 1))
    return fail("fields embed/hidden/window out of range (embed " + std::to_string(f[3]) +
                ", hidden " + std::to_string(f[4]) + ", window " + std::to_string(f[5]) + ")");
  m.config.embed = static_cast<int>(f[3]);
  m.config.hidden = static_cast<int>(f[4]);
  m.config.window = static_cast<int>(f[5]);

  // The tensors the configuration implies, checked against the bytes really present before any
  // is allocated: a small file cannot make this allocate gigabytes.
  const std::vector<ParamShape> shapes = param_shapes(m.config);
  uint64_t needed = 4;  // tensor count
  for (const ParamShape& t : shapes)
    needed += 4 + std::strlen(t.name) + 8 + static_cast<uint64_t>(t.rows * t.cols) * sizeof(float);
  const uint64_t present = r.end - r.pos;
  if (needed != present) {
    const std::string what = "a " + score_name(m.config.score) + " model of hidden " +
                             std::to_string(m.config.hidden) + ", embed " +
                             std::to_string(m.config.embed) + " needs " + std::to_string(needed) +
                             " bytes of tensors";
    return fail(present > needed
                    ? std::to_string(present - needed) + " unexpected bytes after the tensors (" +
                          what + ")"
                    : "truncated: " + what + " but the file holds " + std::to_string(present));
  }
  uint32_t count = 0;
  if (!r.u32(count, "tensor count")) return fail(r.error);
  if (count != shapes.size())
    return fail("holds " + std::to_string(count) + " tensors; a " + score_name(m.config.score) +
                " model has " + std::to_string(shapes.size()));
  for (const ParamShape& t : shapes) {
    std::string got;
    uint32_t rows = 0, cols = 0;
    if (!r.str(got, "tensor name") || !r.u32(rows, "tensor rows") || !r.u32(cols, "tensor cols"))
      return fail(r.error);
    if (got != t.name || rows != t.rows || cols != t.cols)
      return fail("tensor '" + got + "' (" + std::to_string(rows) + "x" + std::to_string(cols) +
                  ") where '" + t.name + "' (" + std::to_string(t.rows) + "x" +
                  std::to_string(t.cols) + ") was expected");
    r.pos += static_cast<size_t>(t.rows * t.cols) * sizeof(float);  // sizes checked above
  }
  // Every header matched: now allocate and copy.
  m.params = make_params<float>(m.config);
  r.pos = r.end - (needed - 4);
  bool ok = true;
  m.params.visit([&](const char* name, Mat<float>& t) {
    if (!ok) return;
    r.pos += 4 + std::strlen(name) + 8;
    const size_t n = static_cast<size_t>(t.size()) * sizeof(float);
    std::memcpy(t.data(), bytes.data() + r.pos, n);  // x86 and ARM Linux are little-endian
    r.pos += n;
    for (Eigen::Index i = 0; i < t.size(); ++i)
      if (!std::isfinite(t.data()[i])) {
        ok = fail("tensor '" + std::string(name) + "' element " + std::to_string(i) +
                  " is not finite");
        return;
      }
  });
  if (!ok) return false;
  out = std::move(m);
  return true;
}

void reseal_model_bytes(std::string& bytes) {
  if (bytes.size() < 8) return;
  const uint64_t h = fnv1a(bytes.data(), bytes.size() - 8);
  for (int i = 0; i < 8; ++i)
    bytes[bytes.size() - 8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
}

bool save_model(const Model& m, const std::string& path, std::string& error) {
  return write_file_atomically(path, serialize_model(m), error);
}

bool load_model(const std::string& path, Model& out, std::string& error) {
  std::string bytes;
  if (!read_input_file(path, kMaxSeq2seqModelBytes, bytes, error)) return false;
  return parse_model(bytes, path, out, error);
}

}  // namespace attn::s2s
