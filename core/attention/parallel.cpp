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

void run_workers(int workers, const std::function<void(int, const std::atomic<bool>&)>& body) {
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&](int w) {
    try {
      body(w, stop);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  bool all_started = true;
  try {
    for (int w = 1; w < workers; ++w) pool.emplace_back(run, w);
  } catch (...) {  // no thread to be had: the error, once the ones started have finished
    std::lock_guard<std::mutex> lock(failure_mutex);
    failure = std::current_exception();
    stop = true;
    all_started = false;
  }
  // The calling thread's share runs whatever the helpers did meanwhile (a body sees `stop` if it
  // wants to end early), so every started share has run to its end or its throw when this
  // returns, however the threads were scheduled.
  if (all_started) run(0);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

void parallel_items(int count, const std::function<void(int)>& item, int threads) {
  if (count <= 0) return;
  // The helper threads do not see this thread's scope: they report to the control found here.
  WorkControl* control = current_control;
  if (control) control->total += count;
  std::atomic<int> next{0};
  run_workers(std::min(thread_count(threads), count), [&](int, const std::atomic<bool>& stop) {
    for (int k = next++; k < count && !stop; k = next++) {
      if (control && control->cancel) throw WorkCancelled{};
      item(k);
      if (control) ++control->done;
    }
  });
}

}  // namespace attn
