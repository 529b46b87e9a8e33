// The fuzz targets (see targets.h). Beyond "no crash, no leak, no undefined behaviour", each checks
// what must hold for any input it accepts: a valid scenario traces, narrates the same from one
// row as from the whole trace, and reads back from its own JSON; a model translates.
#include "targets.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attention/engine.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "explain/explain.h"
#include "io/gpt2_config.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "io/scenario_json.h"
#include "io/trace_json.h"
#include "lm/forward.h"
#include "lm/hf_tokenizer.h"
#include "lm/model.h"
#include "lm/tokenizer.h"
#include "seq2seq/model_io.h"
#include "seq2seq/trainer.h"

namespace attn::fuzz {
namespace {

// The readers take paths: the bytes become a file of this process (a memfd is a regular file,
// so it passes the input opener) whose /proc path is returned. Closed by the caller.
struct MemFile {
  int fd = -1;
  std::string path;
  MemFile(const std::string& bytes) {
    fd = ::memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0) return;
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~MemFile() {
    if (fd >= 0) ::close(fd);
  }
};

// A folder of this process for the model-folder target, made once and removed at exit.
const char* kFolderFiles[] = {"config.json", "model.safetensors", "vocab.json", "merges.txt"};
std::string g_scratch;
void remove_scratch() {
  for (const char* name : kFolderFiles) std::remove((g_scratch + "/" + name).c_str());
  ::rmdir(g_scratch.c_str());
}
const std::string& scratch_folder() {
  if (g_scratch.empty()) {
    std::string t = "/tmp/attn-fuzz-XXXXXX";
    if (!::mkdtemp(t.data())) broken("cannot make a scratch folder", t);
    g_scratch = t;
    std::atexit(remove_scratch);
  }
  return g_scratch;
}

bool write_whole(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"scenario_json", scenario_json},
      {"npy", npy},
      {"seq2seq_model", seq2seq_model},
      {"safetensors", safetensors},
      {"gpt2_config", gpt2_config},
      {"gpt2_tokenizer", gpt2_tokenizer},
      {"gpt2_folder", gpt2_folder},
      {"hf_tokenizer", hf_tokenizer},
      // The app's own files and lessons (targets_app.cpp).
      {"lesson", lesson},
      {"imgui_ini", imgui_ini},
      {"font", font},
      // Today's model folders (targets_llama.cpp).
      {"lm_config", lm_config},
      {"llama_folder", llama_folder},
      // Training checkpoints (targets_train.cpp).
      {"train_checkpoint", train_checkpoint},
      {"training_history", training_history},
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
      s2s::reseal_model_bytes(bytes);
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

int safetensors(const uint8_t* data, size_t size) {
  const MemFile file(bytes_of(data, size));
  if (file.fd < 0) return 0;
  SafetensorsFile st;
  std::string error;
  if (!st.open(file.path, error)) {
    if (error.empty()) broken("a refused safetensors file has no error", "");
    return 0;
  }
  for (const SafetensorsEntry& e : st.entries()) {
    if (e.elements() > (1 << 20) || safetensors_dtype_size(e.dtype) == 0) continue;
    std::vector<float> values(static_cast<size_t>(e.elements()));
    st.read_floats(e, values.data(), error);
  }
  return 0;
}

int gpt2_config(const uint8_t* data, size_t size) {
  std::string error;
  const std::optional<Gpt2Config> c = parse_gpt2_config(bytes_of(data, size), "fuzz", error);
  if (!c) return 0;
  // What is written back reads back as the same configuration.
  const std::optional<Gpt2Config> back = parse_gpt2_config(gpt2_config_json(*c), "back", error);
  if (!back || back->n_layer != c->n_layer || back->n_head != c->n_head ||
      back->n_embd != c->n_embd || back->n_positions != c->n_positions ||
      back->vocab_size != c->vocab_size || back->mlp_size() != c->mlp_size())
    broken("a config.json does not survive a round trip", error);
  return 0;
}

int gpt2_tokenizer(const uint8_t* data, size_t size) {
  const std::string bytes = bytes_of(data, size);
  const size_t nul = bytes.find('\0');
  if (nul == std::string::npos) return 0;
  lm::Tokenizer t;
  std::string error;
  if (!t.parse(bytes.substr(0, nul), bytes.substr(nul + 1), "vocab", "merges", 1 << 16, error))
    return 0;
  // Byte-level BPE loses nothing: any UTF-8 text decodes back to itself.
  for (const std::string& text :
       {std::string("Attention is all you need, \xc3\xa9t\xc3\xa9 \xe2\x86\x92"),
        bytes.substr(nul + 1, 200)}) {
    if (!lm::valid_utf8(text)) continue;
    if (t.decode(t.encode(text)) != text) broken("the tokenizer does not round-trip", text);
  }
  return 0;
}

int hf_tokenizer(const uint8_t* data, size_t size) {
  const std::string bytes = bytes_of(data, size);
  const size_t nul = bytes.find('\0');
  lm::HfTokenizer t;
  std::string error;
  if (!t.parse(bytes.substr(0, nul), "tokenizer.json", error)) {
    if (error.rfind("tokenizer.json: ", 0) != 0)
      broken("a tokenizer.json error does not start with the file's name", error);
    return 0;
  }
  // Any accepted file encodes any UTF-8 text (or says why not) into ids that have tokens, and
  // decodes them without failing.
  const std::string tail = nul == std::string::npos ? std::string() : bytes.substr(nul + 1, 512);
  for (const std::string& text :
       {std::string("Attention is <s> all you need, \xc3\xa9t\xc3\xa9 12345  \n\xe2\x86\x92"),
        tail}) {
    if (!lm::valid_utf8(text)) continue;
    std::vector<int> ids;
    if (!t.encode(text, ids, error)) {
      if (error.empty()) broken("a failed encode has no error", text);
      continue;
    }
    for (int id : ids)
      if (id < 0 || id >= t.size())
        broken("an id outside the vocabulary",
               std::to_string(id) + " of " + std::to_string(t.size()));
    t.decode(ids);
    t.decode(ids, true);
  }
  return 0;
}

int gpt2_folder(const uint8_t* data, size_t size) {
  const std::string& dir = scratch_folder();
  size_t at = 0;
  for (const char* name : kFolderFiles) {
    uint32_t n = 0;
    if (at + 4 <= size) std::memcpy(&n, data + at, 4);
    at = std::min(size, at + 4);
    const size_t len = std::min<size_t>(n, size - at);
    if (!write_whole(dir + "/" + name, bytes_of(data + at, len))) return 0;
    at += len;
  }
  lm::Model m;
  std::string error;
  if (!lm::load_model(dir, m, error)) {
    if (error.empty()) broken("a refused model folder has no error", "");
    return 0;
  }
  const lm::Config& c = m.config;
  if (c.n_layer > 2 || c.n_embd > 64 || c.vocab_size > 4096 || c.n_positions < 2) return 0;
  const std::vector<int> ids = m.tokenizer.encode("hi");
  if (ids.empty() || static_cast<int>(ids.size()) > c.n_positions) return 0;
  lm::Activations acts;
  lm::ForwardOptions o;
  o.threads = 1;
  lm::gpt_forward(m, ids, 1, static_cast<int>(ids.size()), acts, o);
  return 0;
}

}  // namespace attn::fuzz
