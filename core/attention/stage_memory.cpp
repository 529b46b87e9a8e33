// Sizing large stages for writing (stage_memory.h): Eigen's resize, then madvise(MADV_HUGEPAGE)
// on the whole 2 MB pages inside the buffer where the system has it.
#include "attention/stage_memory.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attn {
namespace {

void advise_huge_pages(void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;  // small stages gain nothing
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  // Advice only: a system without transparent huge pages refuses it and nothing changes.
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

template <typename M>
void resize_untouched(M& m, Eigen::Index rows, Eigen::Index cols) {
  if (m.rows() == rows && m.cols() == cols) return;
  m.resize(rows, cols);
  advise_huge_pages(m.data(), static_cast<size_t>(m.size()) * sizeof(typename M::Scalar));
}

}  // namespace

void resize_for_writing(Matrix& m, Eigen::Index rows, Eigen::Index cols) {
  resize_untouched(m, rows, cols);
}

void resize_for_writing(ReasonMatrix& m, Eigen::Index rows, Eigen::Index cols) {
  resize_untouched(m, rows, cols);
}

}  // namespace attn
