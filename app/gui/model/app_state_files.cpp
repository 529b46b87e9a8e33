// AppState's files: opening examples and scenario files, saving, and the recovery file that keeps
// unsaved edits across a crash, in the per-user configuration folder.
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "attention/engine.h"
#include "gui/model/app_state.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "io/scenario_json.h"

namespace attn {

std::string config_dir(bool create) {
  namespace fs = std::filesystem;
  fs::path base;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    base = x;
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = fs::path(h) / ".config";
  else
    return "";
  std::error_code ec;
  fs::path dir = base / "attention-lab";
  if (create) fs::create_directories(dir, ec);
  return ec ? "" : dir.string();
}

bool AppState::load_example(const std::string& name) {
  std::string error;
  std::optional<Scenario> s = attn::load_example(name, error);
  if (!s) {
    set_message(error, true);
    return false;
  }
  if (!load_scenario(std::move(*s), name)) return false;
  file_path_.clear();
  return true;
}

bool AppState::load_file(const std::string& path) {
  std::string error;
  std::optional<Scenario> s = load_scenario_file(path, error);
  if (!s) {
    set_message(error + " (kept the current scenario)", true);
    return false;
  }
  if (!load_scenario(std::move(*s), path)) return false;
  file_path_ = path;
  return true;
}

bool AppState::load_scenario(Scenario s, const std::string& origin) {
  std::string e = validate_scenario(s);
  if (e.empty()) e = check_trace_size(to_problem(s));  // the app keeps the whole trace
  if (!e.empty()) {
    set_message(origin + ": " + e + " (kept the current scenario)", true);
    return false;
  }
  scenario_ = std::move(s);
  origin_scenario_ = scenario_;
  origin_ = origin;
  ++load_serial_;
  edited_ = std::nullopt;  // another scenario: the whole trace
  history_.clear();
  history_.mark_saved();
  gesture_key_.clear();
  dirty_ = false;
  recovery_written_ = true;
  selection_ = {};
  head_ = 0;
  set_message("Opened " + origin, false);
  recompute();  // after the message: its failure or fallback is what shows
  return true;
}

bool AppState::save_file(const std::string& path) {
  std::string error;
  if (!save_scenario_file(scenario_, path, error)) {
    set_message(error, true);
    return false;
  }
  file_path_ = path;
  dirty_ = false;
  history_.mark_saved();
  discard_recovery();
  set_message("Saved " + path, false);
  return true;
}

// ---------------------------------------------------------------- recovery

bool AppState::write_recovery() {
  if (recovery_path.empty() || recovery_written_ || !dirty_ || recovery_pending_) return true;
  std::string error;
  if (!write_file_atomically(recovery_path, scenario_to_json(scenario_), error)) {
    set_message("recovery file: " + error, true);
    return false;
  }
  recovery_written_ = true;
  return true;
}

bool AppState::recovery_available() const {
  std::error_code ec;
  return !recovery_path.empty() && std::filesystem::exists(recovery_path, ec);
}

bool AppState::check_recovery_at_start() {
  recovery_pending_ = recovery_available();
  return recovery_pending_;
}

bool AppState::restore_recovery() {
  recovery_pending_ = false;
  std::string error;
  std::optional<Scenario> s = load_scenario_file(recovery_path, error);
  if (s) {
    error = validate_scenario(*s);
    if (error.empty()) error = check_trace_size(to_problem(*s));
  }
  if (!s || !error.empty()) {
    // Kept for the user under a name of its own, so it is neither lost nor offered again.
    std::string stem = recovery_path;
    if (stem.size() > 5 && stem.compare(stem.size() - 5, 5, ".json") == 0)
      stem.resize(stem.size() - 5);
    const std::string aside = stem + "-unreadable-" + std::to_string(std::time(nullptr)) + ".json";
    std::error_code ec;
    std::filesystem::rename(recovery_path, aside, ec);
    recovery_kept_aside_ = ec ? "" : aside;
    // What happened to the file first: the reason can be long and the status bar cuts it.
    const std::string kept = ec ? "could not be moved aside (" + ec.message() + ")"
                                : "was kept as " + std::filesystem::path(aside).filename().string();
    set_message("Could not restore the last session; the recovery file " + kept + ". " + error,
                true);
    return false;
  }
  if (!load_scenario(std::move(*s), "recovered edits")) return false;
  dirty_ = true;  // recovered work has not been saved anywhere yet
  history_.forget_saved();
  recovery_written_ = true;
  set_message("Recovered the unsaved edits of the last session", false);
  return true;
}

void AppState::discard_recovery() {
  recovery_pending_ = false;
  if (recovery_path.empty()) return;
  std::error_code ec;
  std::filesystem::remove(recovery_path, ec);
  recovery_written_ = true;
}

}  // namespace attn
