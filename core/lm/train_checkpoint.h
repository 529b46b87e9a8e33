// A training run's checkpoint: everything `lm train --resume` needs to continue a stopped run and
// end with the same weights as a run that never stopped — the training weights, AdamW's moments,
// the step, the batches' generator (the data position), the figures so far and the command's own
// description of the run (its options) — as one file, written atomically beside the model.
#pragma once

#include <string>
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

}  // namespace attn::lm
