// AppState's trace: recomputed after every edit on the chosen backend, on a worker thread when
// the problem is large so the window keeps drawing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <memory>

#include "backends/backend.h"
#include "backends/compute.h"
#include "gui/app_state.h"

namespace attn {
namespace {

std::unique_ptr<Backend> backend_or_cpu(const std::string& name, std::string& used) {
  std::string error;
  std::unique_ptr<Backend> b = make_backend(name, error);
  if (!b) b = make_cpu_backend();
  used = b->name();
  return b;
}

}  // namespace

std::vector<double> row_entropy_bits(const Matrix& w) {
  std::vector<double> out(w.rows(), 0.0);
  for (Eigen::Index i = 0; i < w.rows(); ++i)
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const double p = w(i, j);
      if (p > 0) out[i] -= p * std::log2(p);
    }
  return out;
}

void AppState::recompute() {
  if (pending_.valid()) {
    recompute_again_ = true;  // picked up in poll() once the running one finishes
    return;
  }
  AttentionProblem p = to_problem(scenario_);
  const size_t cells = static_cast<size_t>(p.input.num_heads()) * p.input.n_q() * p.input.n_k();
  if (cells <= async_threshold) {
    std::unique_ptr<Backend> b = backend_or_cpu(backend_request_, backend_name_);
    trace_ = compute_scenario_trace(scenario_, *b);
    ++trace_serial_;
    clamp_view();
    return;
  }
  // Large problems run on a worker so the window keeps drawing; the old trace stays on screen.
  pending_start_ = frame_time_ = std::chrono::steady_clock::now();
  pending_ = std::async(std::launch::async, [s = scenario_, name = backend_request_] {
    std::string used;
    std::unique_ptr<Backend> b = backend_or_cpu(name, used);
    return compute_scenario_trace(s, *b);
  });
}

double AppState::computing_seconds() const {
  if (!pending_.valid()) return 0;
  return std::max(0.0, std::chrono::duration<double>(frame_time_ - pending_start_).count());
}

bool AppState::poll() {
  frame_time_ = std::chrono::steady_clock::now();
  if (!pending_.valid()) return false;
  if (pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  trace_ = pending_.get();
  ++trace_serial_;
  backend_name_ = trace_.backend.empty() ? backend_name_ : trace_.backend;
  clamp_view();
  if (recompute_again_) {
    recompute_again_ = false;
    recompute();
  }
  return true;
}

void AppState::wait_for_trace() {
  while (pending_.valid()) {
    pending_.wait();
    poll();
  }
}

bool AppState::set_backend(const std::string& name) {
  std::string error;
  if (!make_backend(name, error)) {
    set_message("backend " + name + ": " + error, true);
    return false;
  }
  backend_request_ = name;
  recompute();
  set_message("Computing on " + backend_name_, false);
  return true;
}

}  // namespace attn
