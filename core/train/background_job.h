// One kind of background work for the app: a worker thread that hands the UI a value or an error
// message, with progress, elapsed time and a cancel flag, and never lets an exception end the
// program.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace attn {

// What the work function sees: the cancel flag to poll and where to report its progress.
class JobControl {
 public:
  bool cancelled() const { return cancel_.load(); }
  void cancel() { cancel_.store(true); }
  // 0..1; clamped, so a rough estimate never shows more than done.
  void set_progress(double fraction) {
    progress_.store(fraction < 0 ? 0.0 : fraction > 1 ? 1.0 : fraction);
  }
  double progress() const { return progress_.load(); }
  // The flag itself, for engine loops that poll a std::atomic<bool>.
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }

 private:
  std::atomic<bool> cancel_{false};
  std::atomic<double> progress_{0.0};
};

// What a finished job hands back: the value, or the message of what it threw. `cancelled` says
// the job was asked to stop before it finished (its value, if any, may be out of date).
template <typename T>
struct JobResult {
  std::optional<T> value;
  std::string error;
  bool cancelled = false;
  bool ok() const { return value.has_value(); }
};

// Runs one work function at a time on its own thread. The UI calls poll() once per frame and gets
// the result exactly once; destroying the job cancels it and waits for the thread.
template <typename T>
class BackgroundJob {
 public:
  using Work = std::function<T(JobControl&)>;

  BackgroundJob() = default;
  ~BackgroundJob() {
    cancel();
    join();
  }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  // Starts `work` on a new thread. A job still running is cancelled and waited for first, and its
  // result dropped.
  void start(Work work) {
    cancel();
    join();
    control_ = std::make_shared<JobControl>();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      result_.reset();
    }
    started_ = true;
    start_time_ = std::chrono::steady_clock::now();
    thread_ = std::thread([this, work = std::move(work), control = control_] {
      JobResult<T> r;
      // Everything is caught here: an exception leaving a thread would call std::terminate.
      try {
        r.value.emplace(work(*control));
      } catch (const std::exception& e) {
        r.error = e.what();
        if (r.error.empty()) r.error = "unknown error";
      } catch (...) {
        r.error = "unknown error";
      }
      r.cancelled = control->cancelled();
      std::lock_guard<std::mutex> lock(mutex_);
      result_ = std::move(r);
    });
  }

  // Started and its result not yet taken.
  bool running() const { return started_; }
  // Finished, with a result waiting for poll().
  bool ready() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return result_.has_value();
  }
  // The result once the work has finished (then the job is idle again); nullopt before.
  std::optional<JobResult<T>> poll() {
    if (!started_ || !ready()) return std::nullopt;
    join();
    started_ = false;
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<JobResult<T>> r = std::move(result_);
    result_.reset();
    return r;
  }
  // Blocks until the work has finished; its result stays for poll().
  void wait() { join(); }
  // Asks the work to stop: it sees control.cancelled() at its next check.
  void cancel() {
    if (control_) control_->cancel();
  }
  double progress() const { return control_ ? control_->progress() : 0.0; }
  // Seconds since start() (0 when idle).
  double elapsed_seconds() const {
    if (!started_) return 0;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
  }

 private:
  void join() {
    if (thread_.joinable()) thread_.join();
  }

  std::thread thread_;
  std::shared_ptr<JobControl> control_;
  mutable std::mutex mutex_;
  std::optional<JobResult<T>> result_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_time_;
};

}  // namespace attn
