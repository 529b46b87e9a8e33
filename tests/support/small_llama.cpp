// A small Llama-family model folder for the app's tests (see small_llama.h).
#include "small_llama.h"

#include <stdexcept>

#include "lm/model.h"
#include "reference.h"

namespace attn::test {

std::string write_small_llama(const std::string& name, const std::string& text, LmArch arch,
                              uint64_t seed, int window, bool tied) {
  lm::Model m;
  m.tokenizer = lm::learn_bpe(text, 20);
  lm::Config c;
  c.arch = arch;
  c.n_layer = 2;
  c.n_head = 6;
  c.n_kv_head = 2;
  c.n_embd = 24;
  c.head_dim = 8;
  c.n_inner = 32;
  c.n_positions = 64;
  c.vocab_size = m.tokenizer.size() + 5;
  c.sliding_window = window;
  c.tied = tied;
  lm::init_random_llama(m, c, seed, 0.3f);
  const std::string dir = temp_path(name);
  std::string error;
  if (!lm::save_model(m, dir, error)) throw std::runtime_error(dir + ": " + error);
  return dir;
}

}  // namespace attn::test
