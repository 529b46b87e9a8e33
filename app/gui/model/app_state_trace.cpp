// AppState's trace: recomputed after every edit on the chosen backend, on a worker thread when
// the problem is large so the window keeps drawing — and then, after an edit of some heads' Q, K
// or V values, only those heads.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <type_traits>
#include <utility>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "backends/backend.h"
#include "backends/compute.h"
#include "backends/head_patch.h"
#include "gui/model/app_state.h"

namespace attn {
namespace {

// Runs `compute` (a whole trace or a head patch) on `b`, the backend the user chose (null when it
// could not be made: `error` says why). When that backend cannot run the trace, or fails at it (an
// OpenCL device out of memory), it runs on the CPU instead and `fallback` says why, for the status
// bar; the CPU's own failures propagate.
template <typename Compute>
auto on_backend_or_cpu(Backend* b, const std::string& error, const AttentionProblem& p,
                       std::string& fallback, const Compute& compute)
    -> decltype(compute(std::declval<Backend&>())) {
  if (!b) {
    fallback = error + "; computed on the CPU";
  } else if (b->name() == "cpu") {
    return compute(*b);
  } else if (!b->supports_trace(p)) {
    fallback = b->name() + " cannot compute this trace (size or variant); computed on the CPU";
  } else {
    try {
      auto result = compute(*b);
      // "auto" falls back to the CPU inside its backend: said here too.
      if constexpr (std::is_same_v<decltype(result), AttentionTrace>)
        if (result.backend == "cpu")
          fallback = b->name() + " could not compute this trace; computed on the CPU";
      return result;
    } catch (const WorkCancelled&) {
      throw;
    } catch (const std::exception& e) {
      fallback = b->name() + " failed: " + e.what() + "; computed on the CPU";
    }
  }
  std::unique_ptr<Backend> cpu = make_cpu_backend();
  return compute(*cpu);
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

std::shared_ptr<Backend> AppState::backend() {
  if (!backend_) {
    std::string error;
    std::unique_ptr<Backend> b = backend_factory ? backend_factory(backend_request_, error)
                                                 : make_backend(backend_request_, error);
    backend_error_ = b ? "" : "backend " + backend_request_ + ": " + error;
    backend_ = std::move(b);
  }
  return backend_;
}

void AppState::recompute() {
  if (pending_.running()) {
    // The running one is out of date: it stops at its next block, and poll() starts this one.
    pending_.cancel();
    if (pending_control_) pending_control_->cancel = true;
    recompute_again_ = true;
    return;
  }
  // The problem's shape, without a copy of a plain scenario's inputs (3 MB at 4096 × 4 heads).
  int H = 0, n_q = 0, n_k = 0;
  if (scenario_.use_projection) {
    const AttentionProblem p = to_problem(scenario_);
    H = p.input.num_heads();
    n_q = p.input.n_q();
    n_k = p.input.n_k();
  } else {
    H = scenario_.qkv.num_heads();
    n_q = scenario_.qkv.n_q();
    n_k = scenario_.qkv.n_k();
  }
  std::shared_ptr<Backend> b = backend();
  // What changed since the scenario the trace on screen (or a computation now superseded)
  // started from; edits from here on collect anew.
  job_edited_ = edited_;
  edited_ = std::vector<int>{};
  const size_t cells = static_cast<size_t>(H) * n_q * n_k;
  if (cells <= async_threshold) {
    // Small: computed here, and a failure (the CPU itself throwing) is a message, never the end.
    std::string fallback;
    try {
      AttentionTrace t =
          on_backend_or_cpu(b.get(), backend_error_, to_problem(scenario_), fallback,
                            [&](Backend& be) { return compute_scenario_trace(scenario_, be); });
      took_trace(std::move(t), scenario_, backend_request_, fallback);
    } catch (const std::exception& e) {
      edited_ = merge_edited_heads(job_edited_, edited_);
      set_message(std::string("The trace could not be computed: ") + e.what(), true);
    }
    return;
  }
  // An edit of some heads' values: only those heads are computed, and moved into the trace on
  // screen when they land (one head's memory more, not a second whole trace).
  std::optional<std::vector<int>> heads;
  if (has_trace() && !force_whole_ && trace_backend_request_ == backend_request_ &&
      patchable(scenario_.options))
    heads = job_edited_;
  force_whole_ = false;
  if (heads && heads->empty()) return;  // nothing the trace shows has changed
  if (heads && static_cast<int>(heads->size()) == H) heads.reset();  // every head: the whole
  // Large problems run on a worker so the window keeps drawing; the old trace stays on screen.
  pending_start_ = frame_time_ = std::chrono::steady_clock::now();
  pending_control_ = std::make_shared<WorkControl>();
  recomputed_heads_ = heads ? static_cast<int>(heads->size()) : H;
  pending_.start([s = scenario_, name = backend_request_, control = pending_control_, heads,
                  base = trace_serial_, b, error = backend_error_](JobControl&) mutable {
    WorkScope scope(control.get());
    Recomputed r;
    const AttentionProblem p = to_problem(s);
    if (heads)
      r.patch = on_backend_or_cpu(b.get(), error, p, r.fallback,
                                  [&](Backend& be) { return compute_head_patch(p, *heads, be); });
    else
      r.whole = on_backend_or_cpu(b.get(), error, p, r.fallback,
                                  [&](Backend& be) { return compute_scenario_trace(s, be); });
    r.base_serial = base;
    r.scenario = std::move(s);
    r.backend_request = name;
    return r;
  });
}

void AppState::took_trace(AttentionTrace t, Scenario s, const std::string& request,
                          const std::string& fallback) {
  trace_ = std::move(t);
  trace_scenario_ = std::move(s);
  trace_backend_request_ = request;
  ++trace_serial_;
  head_serials_.assign(static_cast<size_t>(trace_.num_heads), trace_serial_);
  if (!trace_.backend.empty()) backend_name_ = trace_.backend;
  if (!fallback.empty()) set_message(fallback, true);
  clamp_view();
}

double AppState::computing_progress() const {
  return pending_.running() && pending_control_ ? pending_control_->fraction() : 0.0;
}

double AppState::computing_seconds() const {
  if (!pending_.running()) return 0;
  return std::max(0.0, std::chrono::duration<double>(frame_time_ - pending_start_).count());
}

bool AppState::poll() {
  frame_time_ = std::chrono::steady_clock::now();
  std::optional<JobResult<Recomputed>> done = pending_.poll();
  if (!done) return false;
  bool changed = false;
  if (done->ok()) {
    Recomputed& r = *done->value;
    if (!r.patch) {
      took_trace(std::move(r.whole), std::move(r.scenario), r.backend_request, r.fallback);
      changed = true;
    } else if (r.base_serial == trace_serial_ && apply_head_patch(trace_, *r.patch)) {
      trace_scenario_ = std::move(r.scenario);
      trace_backend_request_ = std::move(r.backend_request);
      ++trace_serial_;
      for (int h : r.patch->heads)
        if (static_cast<size_t>(h) < head_serials_.size())
          head_serials_[static_cast<size_t>(h)] = trace_serial_;
      if (!r.fallback.empty()) set_message(r.fallback, true);
      clamp_view();
      changed = true;
    } else {
      // The trace it was meant for has gone, or it did not fit: compute the whole.
      recompute_again_ = force_whole_ = true;
      edited_ = std::nullopt;
    }
  } else {
    // Cancelled by a newer edit, or failed: the trace on screen still lacks what it was for.
    edited_ = merge_edited_heads(job_edited_, edited_);
    // The old trace stays on screen; the message says why it did not change.
    if (!done->cancelled) set_message("The trace could not be computed: " + done->error, true);
  }
  // A cancelled one was superseded by a newer edit (recompute_again_ is set): the old trace stays
  // until that one lands.
  pending_control_.reset();
#ifdef __GLIBC__
  // What the worker freed (the replaced head's stages, its blocks' scratch) goes back to the
  // system now: glibc keeps a thread's freed heap for reuse, and after a few edits at 4096
  // tokens that was tens of MB more on top of the trace.
  malloc_trim(0);
#endif
  if (recompute_again_) {
    recompute_again_ = false;
    recompute();
  }
  return changed;
}

void AppState::wait_for_trace() {
  while (pending_.running()) {
    pending_.wait();
    poll();
  }
}

bool AppState::set_backend(const std::string& name) {
  // The one place a backend is replaced (an OpenCL backend compiles its kernels when made).
  std::string error;
  std::unique_ptr<Backend> b =
      backend_factory ? backend_factory(name, error) : make_backend(name, error);
  if (!b) {
    set_message("backend " + name + ": " + error, true);
    return false;
  }
  backend_ = std::move(b);
  backend_error_.clear();
  backend_request_ = name;
  const int before = message_serial_;
  recompute();
  // A fallback to the CPU has said so already.
  if (message_serial_ == before) set_message("Computing on " + backend_name_, false);
  return true;
}

}  // namespace attn
