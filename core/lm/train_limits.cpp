// The training corpus's memory check; see train_limits.h.
#include "lm/train_limits.h"

#include <cstdio>
#include <cstdlib>

namespace attn::lm {

double train_memory_limit() {
  if (const char* v = std::getenv("ATTN_TRAIN_MEMORY_LIMIT_MIB")) {
    char* end = nullptr;
    const double mib = std::strtod(v, &end);
    // Only ever lowers the limit: a test's setting cannot allow more than the stated one.
    if (end != v && *end == '\0' && mib > 0 && mib * 1048576.0 < kMaxTrainBytes)
      return mib * 1048576.0;
  }
  return kMaxTrainBytes;
}

std::string check_corpus_memory(const TrainOptions& o, int vocab_size, double corpus_bytes,
                                const std::string& what) {
  char buf[512];
  if (corpus_bytes > kMaxCorpusBytes) {
    std::snprintf(buf, sizeof buf,
                  "%s: %.0f bytes (%.1f MiB) of text, more than the %.0f MiB a corpus may have",
                  what.c_str(), corpus_bytes, corpus_bytes / 1048576.0,
                  kMaxCorpusBytes / 1048576.0);
    return buf;
  }
  const double data = corpus_bytes * kTrainBytesPerCorpusByte;
  const double model = training_bytes(o, vocab_size);
  const double limit = train_memory_limit();
  if (data + model <= limit) return "";
  std::snprintf(buf, sizeof buf,
                "%s: training would need %.0f bytes (%.1f MiB): %.0f for the corpus's %.0f bytes "
                "(%.0f per byte: the text, its ids, the held-out part and the word counts) and "
                "%.0f for the model; at most %.0f bytes (%.1f MiB) are allowed "
                "(docs/robustness.md)",
                what.c_str(), data + model, (data + model) / 1048576.0, data, corpus_bytes,
                kTrainBytesPerCorpusByte, model, limit, limit / 1048576.0);
  return buf;
}

}  // namespace attn::lm
