// The fuzz targets (see targets.h). Beyond "no crash, no leak, no undefined behaviour", each checks
// what must hold for any input it accepts: a valid scenario traces, narrates the same from one
// row as from the whole trace, and reads back from its own JSON; a model translates.
#include "targets.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attention/engine.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "io/npy.h"
#include "io/scenario_json.h"
#include "io/trace_json.h"
#include "seq2seq/model_io.h"
#include "seq2seq/trainer.h"

namespace attn::fuzz {
namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n%s\n", what, detail.c_str());
  std::abort();
}

std::string bytes_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"scenario_json", scenario_json},
      {"npy", npy},
      {"seq2seq_model", seq2seq_model},
  };
  return all;
}

int scenario_json(const uint8_t* data, size_t size) {
  std::string error;
  const std::optional<Scenario> s = parse_scenario_json(bytes_of(data, size), "fuzz", error);
  if (!s) {
    if (error.empty()) broken("a refused scenario has no error", "");
    return 0;
  }
  // Small problems only: the point is the parser and the masks, not large products.
  const AttentionProblem p = to_problem(*s);
  const long long cells =
      static_cast<long long>(p.input.num_heads()) * p.input.n_q() * p.input.n_k();
  if (cells > 4096 || p.input.d_k() > 64 || p.input.d_v() > 64) return 0;
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  const AttentionTrace whole = compute_scenario_trace(*s, *cpu);
  trace_to_json(whole);
  const int q = p.input.n_q() - 1;
  ExplainRequest r;
  r.query = q;
  std::string e1, e2;
  const std::string a = explain(whole, r, e1);
  const std::string b = explain(compute_scenario_trace_rows(*s, *cpu, q, q + 1), r, e2);
  if (a != b || e1 != e2)
    broken("explain differs between the whole trace and one row", a + "\n---\n" + b);
  // What the app saves must open again.
  const std::string saved = scenario_to_json(*s);
  if (!parse_scenario_json(saved, "saved", error))
    broken("a saved scenario does not reopen", error);
  return 0;
}

int npy(const uint8_t* data, size_t size) {
  const std::string bytes = bytes_of(data, size);
  for (NpyContent content : {NpyContent::kFloat, NpyContent::kMask}) {
    std::string error;
    const std::optional<NpyTensor> t = parse_npy(bytes, "fuzz", content, error);
    if (!t) {
      if (error.rfind("fuzz: ", 0) != 0)
        broken("an .npy error does not start with the name", error);
      continue;
    }
    // What was read writes back and reads again as the same values.
    if (t->heads.empty()) broken("an accepted .npy has no heads", "");
    const std::optional<NpyTensor> back =
        parse_npy(npy_bytes(t->heads, t->rank), "back", NpyContent::kFloat, error);
    if (!back || back->rank != t->rank || back->heads.size() != t->heads.size())
      broken("an .npy does not survive a round trip", error);
    for (size_t h = 0; h < t->heads.size(); ++h) {
      const Matrix &x = t->heads[h], &y = back->heads[h];
      if (x.rows() != y.rows() || x.cols() != y.cols())
        broken("an .npy round trip changed a shape", "");
      for (Eigen::Index i = 0; i < x.size(); ++i)
        if (!(x.data()[i] == y.data()[i] || (std::isnan(x.data()[i]) && std::isnan(y.data()[i]))))
          broken("an .npy round trip changed a value", std::to_string(i));
    }
  }
  return 0;
}

int seq2seq_model(const uint8_t* data, size_t size) {
  // As given (mostly refused by the checksum), and with the checksum made right, so mutations
  // reach the header, the alphabets and the tensor table behind it.
  std::string bytes = bytes_of(data, size);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      if (bytes.size() < 16) break;
      uint64_t h = 1469598103934665603ull;
      for (size_t i = 0; i + 8 < bytes.size(); ++i) {
        h ^= static_cast<unsigned char>(bytes[i]);
        h *= 1099511628211ull;
      }
      for (int i = 0; i < 8; ++i)
        bytes[bytes.size() - 8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
    }
    s2s::Model m;
    std::string error;
    if (!s2s::parse_model(bytes, "fuzz", m, error)) continue;
    if (m.config.hidden > 64 || m.config.embed > 64) continue;  // large but valid: skip the work
    s2s::ForwardCache<float> fc;
    std::string out;
    s2s::translate(m, "1 jan 2000", fc, out, error);
    s2s::predict(m, {"1 jan 2000", "", "\x01"});
    if (serialize_model(m) != bytes)
      broken("a model does not serialize to the bytes it was read from", "");
  }
  return 0;
}

}  // namespace attn::fuzz
