// AppState's files: opening examples and scenario files, saving, and the recovery file that keeps
// unsaved edits across a crash, in the per-user configuration folder.
#include <cstdlib>
#include <filesystem>

#include "gui/app_state.h"
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
  if (std::string e = validate_scenario(s); !e.empty()) {
    set_message(origin + ": " + e + " (kept the current scenario)", true);
    return false;
  }
  scenario_ = std::move(s);
  origin_scenario_ = scenario_;
  origin_ = origin;
  ++load_serial_;
  undo_.clear();
  redo_.clear();
  gesture_key_.clear();
  dirty_ = false;
  recovery_written_ = true;
  selection_ = {};
  head_ = 0;
  recompute();
  set_message("Opened " + origin, false);
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
  discard_recovery();
  set_message("Saved " + path, false);
  return true;
}

// ---------------------------------------------------------------- recovery

bool AppState::write_recovery() {
  if (recovery_path.empty() || recovery_written_ || !dirty_) return true;
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

bool AppState::restore_recovery() {
  std::string error;
  std::optional<Scenario> s = load_scenario_file(recovery_path, error);
  if (!s) {
    set_message("recovery file: " + error, true);
    return false;
  }
  if (!load_scenario(std::move(*s), "recovered edits")) return false;
  dirty_ = true;  // recovered work has not been saved anywhere yet
  recovery_written_ = true;
  set_message("Recovered the unsaved edits of the last session", false);
  return true;
}

void AppState::discard_recovery() {
  if (recovery_path.empty()) return;
  std::error_code ec;
  std::filesystem::remove(recovery_path, ec);
  recovery_written_ = true;
}

}  // namespace attn
