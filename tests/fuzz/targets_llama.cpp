// Fuzz targets for today's model folders: config.json with the Llama family's keys, and a whole
// sharded folder (the shard index, a shard, config.json and tokenizer.json).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/llama_config.h"
#include "lm/forward.h"
#include "lm/generate.h"
#include "lm/model.h"
#include "targets.h"

namespace attn::fuzz {
namespace {

const char* kParts[] = {"config.json", "model.safetensors.index.json",
                        "model-00001-of-00001.safetensors", "tokenizer.json"};
std::string g_folder;

void remove_folder() {
  for (const char* name : kParts) std::remove((g_folder + "/" + name).c_str());
  ::rmdir(g_folder.c_str());
}

const std::string& folder() {
  if (g_folder.empty()) {
    std::string t = "/tmp/attn-fuzz-llama-XXXXXX";
    if (!::mkdtemp(t.data())) broken("cannot make a scratch folder", t);
    g_folder = t;
    std::atexit(remove_folder);
  }
  return g_folder;
}

}  // namespace

int lm_config(const uint8_t* data, size_t size) {
  std::string error;
  const std::optional<LmConfig> c = parse_lm_config(bytes_of(data, size), "fuzz", error);
  if (!c) {
    if (error.empty()) broken("a refused config.json has no error", "");
    return 0;
  }
  if (!c->llama_family()) return 0;
  if (c->n_head % c->kv_heads() != 0 || c->head_size() % 2 != 0)
    broken("an accepted config cannot be computed", std::to_string(c->n_head));
  const std::optional<LmConfig> back = parse_lm_config(llama_config_json(*c), "back", error);
  if (!back || back->arch != c->arch || back->n_layer != c->n_layer || back->n_head != c->n_head ||
      back->kv_heads() != c->kv_heads() || back->head_size() != c->head_size() ||
      back->mlp_size() != c->mlp_size() || back->vocab_size != c->vocab_size ||
      back->window(0) != c->window(0) || back->tied != c->tied ||
      back->rope_scaling.type != c->rope_scaling.type)
    broken("a Llama-family config.json does not survive a round trip", error);
  return 0;
}

int llama_folder(const uint8_t* data, size_t size) {
  const std::string& dir = folder();
  size_t at = 0;
  for (const char* name : kParts) {
    uint32_t n = 0;
    if (at + 4 <= size) std::memcpy(&n, data + at, 4);
    at = std::min(size, at + 4);
    const size_t len = std::min<size_t>(n, size - at);
    FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data + at, 1, len, f);
    std::fclose(f);
    at += len;
  }
  lm::Model m;
  std::string error;
  if (!lm::load_model(dir, m, error)) {
    if (error.empty()) broken("a refused model folder has no error", "");
    return 0;
  }
  const lm::Config& c = m.config;
  if (c.n_layer > 2 || c.n_embd > 64 || c.mlp_size() > 256 || c.vocab_size > 4096 ||
      c.q_dim() > 256 || c.n_positions < 4)
    return 0;
  std::vector<int> ids;
  if (!m.tokenizer.encode("hi there", ids, error) || ids.empty() ||
      static_cast<int>(ids.size()) + 2 > c.n_positions)
    return 0;
  lm::Activations acts;
  lm::ForwardOptions o;
  o.threads = 1;
  (void)lm::checked_forward(m, ids, 1, static_cast<int>(ids.size()), acts, o);
  lm::Generator g(m, 1);
  if (g.feed(ids).empty()) (void)g.feed({0});
  return 0;
}

}  // namespace attn::fuzz
