// The memory a training corpus may take (docs/robustness.md, "Training memory"): the corpus's
// text, its ids and the word counts of BPE, with the model's own training memory, checked against
// one stated limit before anything is read into memory or built.
#pragma once

#include <cstddef>
#include <string>

#include "lm/trainer.h"

namespace attn::lm {

// The most bytes a text corpus (--corpus, or the stories the grammar writes) may have: as any
// other file read whole.
constexpr double kMaxCorpusBytes = 256.0 * 1024 * 1024;
// Bytes of memory per byte of corpus while it becomes training data: the text itself (1), its ids
// (4: at most one token per byte, 4 bytes each) and a tenth held out copied with the word counts
// of BPE's learning (1). The tokenizer reads the text in place (for_each_pretoken), so no other
// copy of it is made.
constexpr double kTrainBytesPerCorpusByte = 6;

// The training memory limit: kMaxTrainBytes, or for tests ATTN_TRAIN_MEMORY_LIMIT_MIB (a
// smaller limit, in MiB, so a test can cross it with a small corpus; docs/robustness.md).
double train_memory_limit();

// "" when a corpus of `corpus_bytes` bytes (named `what`: "--corpus: big.txt", "--stories:
// 1000000 stories") can be trained on with `o` and a vocabulary of at most `vocab_size`: the
// corpus within kMaxCorpusBytes, and its data (kTrainBytesPerCorpusByte per byte) with the
// model's training_bytes within train_memory_limit(). Else why not, with the numbers.
std::string check_corpus_memory(const TrainOptions& o, int vocab_size, double corpus_bytes,
                                const std::string& what);

}  // namespace attn::lm
