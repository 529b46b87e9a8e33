// libFuzzer's entry point for one target, chosen at compile time (ATTN_FUZZ_TARGET, set by
// tests/fuzz/CMakeLists.txt).
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return attn::fuzz::ATTN_FUZZ_TARGET(data, size);
}
