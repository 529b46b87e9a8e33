// The model the desktop app's panels read and edit: the scenario, its trace, the current stage,
// head and selection, every edit (validated, undoable), files and the recovery file. No ImGui here,
// so the logic is unit-testable without a window.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/parallel.h"
#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/head_patch.h"
#include "explain/explain.h"
#include "gui/model/scenario_history.h"
#include "train/background_job.h"

namespace attn {

// The tensors a user can edit by hand (direct mode: Q/K/V; projection mode: X, X_kv and the Ws).
enum class Tensor { kQ, kK, kV, kX, kXkv, kWq, kWk, kWv, kWo };
const char* tensor_name(Tensor t);

// Which side of the attention a token list belongs to.
enum class Side { kQuery, kKey };

struct Selection {
  int query = -1;  // -1 = nothing selected
  int key = -1;    // -1 = the whole row
  bool active() const { return query >= 0; }
};

// Keeps a scenario's variants (attention/variants.h) fitting its shapes after an edit: Linformer's
// E and F follow n_k (redrawn), per-head kernels fall back to one shared kernel, and head mixing
// whose groups no longer divide H is turned off.
void fit_variants(Scenario& s);

class AppState {
 public:
  AppState();
  ~AppState();
  AppState(const AppState&) = delete;
  AppState& operator=(const AppState&) = delete;

  // ---- loading (each keeps the current scenario and sets message() on failure) ----
  bool load_example(const std::string& name);
  bool load_file(const std::string& path);
  bool load_scenario(Scenario s, const std::string& origin);  // origin: example name or file
  bool save_file(const std::string& path);                    // atomic; clears the dirty flag
  void reset_to_origin();         // the example or file as first loaded (undoable)
  void randomise(unsigned seed);  // random inputs of the current shapes (undoable)

  const Scenario& scenario() const { return scenario_; }
  const std::string& file_path() const { return file_path_; }
  const std::string& origin() const { return origin_; }
  bool dirty() const { return dirty_; }
  // Changes whenever another scenario is opened (not on edits), so views can tell the two apart.
  uint64_t load_serial() const { return load_serial_; }

  // ---- the trace (recomputed after every edit; large ones off the UI thread) ----
  const AttentionTrace& trace() const { return trace_; }
  bool has_trace() const { return !trace_.steps.empty(); }
  // Changes whenever the trace does, so views can cache what they derive from it (textures).
  uint64_t trace_serial() const { return trace_serial_; }
  // Changes whenever query head h's stages do (after an edit of other heads it stays): views of
  // every head, like the heads grid, redraw only what changed.
  uint64_t head_serial(int h) const {
    return h >= 0 && static_cast<size_t>(h) < head_serials_.size()
               ? head_serials_[static_cast<size_t>(h)]
               : trace_serial_;
  }
  bool computing() const { return pending_.running(); }
  // Seconds the background computation has run, as of this frame's poll(): every panel that
  // shows it in one frame shows the same number.
  double computing_seconds() const;
  // How far the background computation is, 0..1 (its blocks of rows done).
  double computing_progress() const;
  // Picks up a finished background computation and reads the frame's clock; call once per frame.
  // Returns true when the trace changed.
  bool poll();
  void wait_for_trace();  // blocks until no computation is pending (tests, screenshots)
  // Problems larger than this many score cells (H·n_q·n_k) are computed on a worker thread.
  size_t async_threshold = 256 * 256;
  // The query heads the latest background computation recomputed: all of them, or, after an
  // edit of some heads' Q, K or V values, only those (backends/head_patch.h).
  int recomputed_heads() const { return recomputed_heads_; }
  const std::string& backend_name() const { return backend_name_; }
  bool set_backend(const std::string& name);  // "cpu", "opencl", "auto"
  // Creates the backend a trace is computed on (make_backend when empty), once, and again only
  // when set_backend() asks for another. A test puts one here that fails (then calls
  // set_backend) to see the app report it and keep going.
  using BackendFactory =
      std::function<std::unique_ptr<Backend>(const std::string& name, std::string& error)>;
  BackendFactory backend_factory;

  // ---- navigation ----
  // The pipeline strip for the current trace: the inputs, then its stages (attention/stage.h),
  // titled as the trace's variants show them.
  std::vector<StageInfo> stages() const;
  int stage_index() const { return stage_; }
  const StageInfo current_stage() const;
  bool set_stage(StageId id);  // q, k, v or x open the inputs stage, head_contrib projected
  void next_stage();
  void prev_stage();
  void first_stage();
  void last_stage();
  bool playing = false;
  double play_interval = 1.5;  // seconds per stage
  // Advances the clock by dt seconds; returns true when the stage changed.
  bool tick(double dt);

  int head() const { return head_; }
  void set_head(int h);

  const Selection& selection() const { return selection_; }
  void select_cell(int query, int key);
  void select_row(int query);
  void clear_selection() {
    selection_ = {};
    succeeded();
  }
  // The narration request for the selection and the current stage (nullopt without selection).
  std::optional<ExplainRequest> narration_request() const;
  std::string narration(std::string& error) const;
  int precision = 4;

  // ---- edits: validated, recomputed, undoable ----
  Matrix* tensor(Tensor t, int head);  // null when the tensor does not exist in this mode
  const Matrix* tensor(Tensor t, int head) const;
  int tensor_heads(Tensor t) const;
  // Parses a typed value; refuses non-numbers, NaN and ±∞ (message() says why, value kept).
  bool set_value_text(Tensor t, int head, int row, int col, const std::string& text);
  // A dragged value; consecutive changes with the same gesture coalesce into one undo step.
  bool set_value(Tensor t, int head, int row, int col, float value, bool gesture = false);
  void end_gesture() { gesture_key_.clear(); }

  bool rename_token(Side side, int index, const std::string& name);
  bool add_token(Side side);  // appends a token (zeros)
  bool remove_token(Side side, int index);
  bool set_d_k(int d_k);
  bool set_d_v(int d_v);
  bool set_d_model(int d_model);  // projection mode only
  bool set_heads(int num_heads, int num_kv_heads);
  bool set_projection_mode(bool on);  // derives X/W from Q/K/V or freezes Q/K/V
  bool set_cross_attention(bool on);  // separate key tokens (and X_kv in projection mode)
  bool cross_attention() const;

  bool set_causal(CausalAlign a);
  bool set_key_length(std::optional<int> length);
  bool set_window(std::optional<int> window);
  bool set_global(std::vector<int> positions);
  bool toggle_global(int position);
  bool toggle_custom_cell(int query, int key);  // creates an all-visible custom mask first
  bool clear_custom_mask();
  bool set_scale(std::optional<float> scale);
  bool set_temperature(float t);

  // ---- variants beyond masks (app_state_variants.cpp) ----
  // Linformer with k virtual keys and random E, F ~ N(0, 1/k) drawn from linformer_seed; nullopt
  // turns it off.
  bool set_linformer(std::optional<int> k);
  bool reseed_linformer();  // new E and F with the next seed, same k
  uint64_t linformer_seed = 1;
  // The key–query convolution: one kernel θ (c_q, c_k) shared by every head; empty turns it off.
  bool set_kq_conv(const Matrix& kernel);
  // Head mixing in groups of c_h heads (0 = off): M = (1 − s)·I + s/c_h, s the strength.
  bool set_head_mix(int group, float strength);

  bool can_undo() const { return history_.can_undo(); }
  bool can_redo() const { return history_.can_redo(); }
  bool undo();
  bool redo();
  size_t undo_depth() const { return history_.undo_depth(); }
  const ScenarioHistory& history() const { return history_; }

  // ---- messages for the status bar ----
  // An error stays until the next action that works (an edit, a step, a selection) replaces or
  // clears it.
  const std::string& message() const { return message_; }
  bool message_is_error() const { return message_error_; }
  void set_message(const std::string& m, bool error);
  int message_serial() const { return message_serial_; }

  // ---- recovery file: written shortly after edits, removed on save or clean exit ----
  std::string recovery_path;  // empty = no recovery file
  // Writes the recovery file when there are unsaved edits not yet written; returns false on error.
  // Never overwrites a recovery file the user has not answered about yet (recovery_pending).
  bool write_recovery();
  bool recovery_available() const;
  // At start: whether the last session left a recovery file; if so it stays pending (kept on
  // disk, whatever happens) until restore_recovery() or discard_recovery() answers it.
  bool check_recovery_at_start();
  bool recovery_pending() const { return recovery_pending_; }
  // Loads the recovery file. One that cannot be loaded is reported and renamed aside (see
  // recovery_kept_aside), never deleted and never tried again at the next start.
  bool restore_recovery();
  void discard_recovery();
  // Where an unreadable recovery file was moved ("" when none was).
  const std::string& recovery_kept_aside() const { return recovery_kept_aside_; }
  // Whether the app may remove the recovery file when it exits: no unsaved edits, and no
  // question about it left unanswered.
  bool recovery_removable_at_exit() const { return !dirty_ && !recovery_pending_; }

 private:
  // `heads`: the query heads the edit changed when it changed only values of Q, K or V (then
  // only those are recomputed), else nullopt.
  bool apply(Scenario next, const std::string& what, const std::string& gesture = "",
             EditedHeads heads = std::nullopt);
  // The backend the user chose, created once (a CPU backend when it cannot be; `backend_error_`
  // says why).
  std::shared_ptr<Backend> backend();
  void recompute();
  // Puts a whole trace on screen; `fallback` (why it ran on the CPU) goes to the status bar.
  void took_trace(AttentionTrace t, Scenario s, const std::string& request,
                  const std::string& fallback);
  void clamp_view();
  // After an edit, undo or redo: unsaved unless the history is back at the saved state (then the
  // recovery file goes too).
  void became_dirty_or_clean();
  // A step that worked (navigation, a selection): an error message from an earlier input has
  // been read and leaves the status bar.
  void succeeded();

  Scenario scenario_;
  Scenario origin_scenario_;
  std::string origin_, file_path_;
  bool dirty_ = false;
  bool recovery_written_ = true;
  bool recovery_pending_ = false;
  std::string recovery_kept_aside_;
  AttentionTrace trace_;
  uint64_t trace_serial_ = 0;
  std::string backend_request_ = "cpu", backend_name_ = "cpu";
  std::shared_ptr<Backend> backend_;  // made for backend_request_ on first use
  std::string backend_error_;         // why backend_ is not the one asked for ("" when it is)
  // The heads edited since the scenario the latest computation started from (nullopt: anything
  // may have changed), and those the running computation was started for, given back to
  // edited_ when it does not land.
  EditedHeads edited_;
  EditedHeads job_edited_;
  // What a background computation returns: the whole trace, or the heads an edit changed, to
  // move into the trace it started from (base_serial).
  struct Recomputed {
    AttentionTrace whole;
    std::optional<HeadPatch> patch;
    uint64_t base_serial = 0;
    Scenario scenario;  // what it computed
    std::string backend_request;
    std::string fallback;  // why it ran on the CPU instead of the requested backend ("" if not)
  };
  BackgroundJob<Recomputed> pending_;
  // The scenario and backend the trace on screen was computed from: an edit is compared with them
  // to find the heads it changed.
  Scenario trace_scenario_;
  std::string trace_backend_request_;
  int recomputed_heads_ = 0;
  std::vector<uint64_t> head_serials_;  // per query head: the trace serial it last changed at
  bool force_whole_ = false;  // a patch did not fit: the next computation is the whole trace
  // The running computation's progress and cancel flag: an edit made while it runs cancels it
  // (it stops at its next block of rows) and the newest scenario is computed next.
  std::shared_ptr<WorkControl> pending_control_;
  std::chrono::steady_clock::time_point pending_start_, frame_time_;
  uint64_t load_serial_ = 0;
  bool recompute_again_ = false;

  int stage_ = 0;
  StageId stage_id_ = StageId::kInputs;  // kept across recomputes so a stage survives edits
  double play_clock_ = 0;
  int head_ = 0;
  Selection selection_;

  ScenarioHistory history_;
  std::string gesture_key_;
  std::string message_;
  bool message_error_ = false;
  int message_serial_ = 0;
};

// Parses a user-typed number: accepts "0.5", "-1e-3", "+2", "−0.5" (Unicode minus); refuses
// anything else, NaN and infinities, with a message saying why.
std::optional<float> parse_user_number(const std::string& text, std::string& error);

// The per-user configuration folder ($XDG_CONFIG_HOME/attention-lab or ~/.config/attention-lab),
// created when missing if `create`; "" when there is no home (or it cannot be created).
std::string config_dir(bool create = true);

// Shannon entropy (bits) of each weights row of head h; hidden keys contribute nothing.
std::vector<double> row_entropy_bits(const Matrix& weights);

}  // namespace attn
