// Fuzz target for the training checkpoint (lm train --resume reads it): checkpoint.bin's bytes as
// given and with their checksum made right, so mutations reach the header and the sizes behind it.
#include <cstring>
#include <string>

#include "lm/train_checkpoint.h"
#include "targets.h"

namespace attn::fuzz {
namespace {

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

}  // namespace

int train_checkpoint(const uint8_t* data, size_t size) {
  std::string bytes = bytes_of(data, size);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // the last 8 bytes: FNV-1a of the rest
      if (bytes.size() < 8) break;
      const uint64_t sum = lm::fnv1a64(bytes.substr(0, bytes.size() - 8));
      std::memcpy(&bytes[bytes.size() - 8], &sum, sizeof sum);
    }
    lm::TrainCheckpoint c;
    std::string error;
    if (!lm::parse_checkpoint(bytes, c, error)) {
      if (error.empty()) broken("a refused checkpoint has no error", "");
      continue;
    }
    // An accepted checkpoint written again reads back the same.
    lm::TrainCheckpoint back;
    if (!lm::parse_checkpoint(lm::checkpoint_bytes(c), back, error))
      broken("a checkpoint written from an accepted one is refused", error);
    if (!same_bytes(back.params, c.params) || !same_bytes(back.state.opt.m, c.state.opt.m) ||
        !same_bytes(back.state.opt.v, c.state.opt.v) || back.state.step != c.state.step ||
        back.state.rng.state() != c.state.rng.state() || back.run != c.run ||
        back.history.size() != c.history.size())
      broken("a checkpoint does not survive being written and read again", "");
  }
  return 0;
}

}  // namespace attn::fuzz
