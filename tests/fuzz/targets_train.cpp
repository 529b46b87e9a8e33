// Fuzz targets for what lm train writes and other commands read back: the training checkpoint
// (lm train --resume): checkpoint.bin's bytes as given and with their checksum made right, so
// mutations reach the header and the sizes behind it; and training.json's history (lm curve).
#include <cmath>
#include <cstring>
#include <string>

#include "lm/train_checkpoint.h"
#include "lm/training_history.h"
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

int training_history(const uint8_t* data, size_t size) {
  lm::TrainingHistory h;
  std::string error;
  if (!lm::parse_training_history(bytes_of(data, size), "training.json", h, error)) {
    if (error.empty()) broken("a refused training.json has no error", "");
    return 0;
  }
  // What lm curve draws: one finite value of each line per step, the steps increasing.
  if (h.steps.empty() || h.train_loss.size() != h.steps.size() ||
      h.heldout_loss.size() != h.steps.size())
    broken("an accepted history's lines do not have one value per step", "");
  for (size_t i = 0; i < h.steps.size(); ++i) {
    if (h.steps[i] < 0 || (i > 0 && h.steps[i] <= h.steps[i - 1]))
      broken("an accepted history's steps do not increase", std::to_string(h.steps[i]));
    if (!std::isfinite(h.train_loss[i]) || !std::isfinite(h.heldout_loss[i]))
      broken("an accepted history holds a value that is not finite", std::to_string(i));
  }
  return 0;
}

}  // namespace attn::fuzz
