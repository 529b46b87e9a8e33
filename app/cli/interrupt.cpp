// SIGINT as a stop request (see interrupt.h).
#include "cli/interrupt.h"

#include <csignal>

namespace attn::cli {
namespace {

std::atomic<bool> g_interrupted{false};
// The action from before the guard: the default, or the handler that removes temporary files.
void (*g_previous)(int) = SIG_DFL;

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, g_previous);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted.store(false);
  previous_ = g_previous = std::signal(SIGINT, on_sigint);
}

InterruptGuard::~InterruptGuard() { std::signal(SIGINT, previous_); }

const std::atomic<bool>* InterruptGuard::flag() const { return &g_interrupted; }

}  // namespace attn::cli
