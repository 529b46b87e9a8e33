// The work loop of parallel.h: a shared counter hands items to the threads.
#include "attention/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attn {
namespace {

thread_local WorkControl* current_control = nullptr;

}  // namespace

WorkScope::WorkScope(WorkControl* control) : previous_(current_control) {
  current_control = control;
}

WorkScope::~WorkScope() { current_control = previous_; }

void parallel_items(int count, const std::function<void(int)>& item, int threads) {
  if (count <= 0) return;
  // The helper threads do not see this thread's scope: they report to the control found here.
  WorkControl* control = current_control;
  if (control) control->total += count;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, count);
  std::atomic<int> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (int k = next++; k < count; k = next++) {
        if (control && control->cancel) throw WorkCancelled{};
        item(k);
        if (control) ++control->done;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace attn
