// A training run's checkpoint: everything `lm train --resume` needs to continue a stopped run and
// end with the same weights as a run that never stopped — the training weights, AdamW's moments,
// the step, the batches' generator (the data position), the figures so far and the command's own
// description of the run (its options) — as one file, written atomically beside the model.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "lm/trainer.h"

namespace attn::lm {

// The file's name in the model folder.
constexpr const char* kCheckpointFile = "checkpoint.bin";

struct TrainCheckpoint {
  std::string run;  // the options, as the command writes them (JSON text), read back on resume
  TrainState state;
  std::vector<float> params;  // the training buffer (Model::params.memory)
  std::vector<EvalPoint> history;
};

// The bytes of the file: a first line naming the format and its version, the length of a JSON
// header (step, generator, losses, history, the run, how many floats follow), the header, the
// floats (parameters, then AdamW's m and v; this machine's byte order, as safetensors' little-
// endian on every machine the app builds for) and a 64-bit FNV-1a checksum of all before it.
std::string checkpoint_bytes(const TrainCheckpoint& c);

// Reads checkpoint_bytes' form; false with an error (without the file's name) when the bytes are
// not a complete checkpoint of this version.
bool parse_checkpoint(const std::string& bytes, TrainCheckpoint& out, std::string& error);

// FNV-1a over `bytes` (64 bits): the checkpoint's checksum, and how a run recognises its corpus.
uint64_t fnv1a64(const std::string& bytes);

// Reads j[key] into `out`; an integral `out` takes only an integer JSON number in its range (a
// float such as 1e300 would be undefined behaviour to convert), a float only a number it can
// hold. Throws std::exception otherwise.
template <typename T>
void read_json_field(const nlohmann::json& j, const char* key, T& out) {
  const nlohmann::json& v = j.at(key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!v.is_number_integer()) throw std::out_of_range(std::string(key) + ": not an integer");
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        throw std::out_of_range(std::string(key) + ": out of range");
      out = static_cast<T>(u);
    } else {
      const int64_t i = v.get<int64_t>();
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (i > 0 &&
           static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        throw std::out_of_range(std::string(key) + ": out of range");
      out = static_cast<T>(i);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) throw std::out_of_range(std::string(key) + ": not a number");
    const double d = v.get<double>();
    if (d > static_cast<double>(std::numeric_limits<T>::max()) ||
        d < -static_cast<double>(std::numeric_limits<T>::max()))
      throw std::out_of_range(std::string(key) + ": out of range");
    out = static_cast<T>(d);
  } else {
    v.get_to(out);
  }
}

}  // namespace attn::lm
