// The table of windows over the stepper (window_registry.h) and what is derived from it.
#include "gui/window_registry.h"

#include <imgui.h>

#include <algorithm>
#include <cstring>

#include "gui/panel_class.h"
#include "gui/panel_experiments.h"
#include "gui/panel_lm.h"
#include "gui/panel_lm_train.h"
#include "gui/panel_seq2seq.h"

namespace attn {
namespace {

WindowFlags& seq2seq_flags(Ui& u) { return u.seq2seq; }
WindowFlags& lm_flags(Ui& u) { return u.lm; }
WindowFlags& lm_train_flags(Ui& u) { return u.lm_train; }
WindowFlags& variant_views_flags(Ui& u) { return u.variant_views; }
WindowFlags& flash_flags(Ui& u) { return u.flash; }
WindowFlags& scores_flags(Ui& u) { return u.scores; }
WindowFlags& sqrt_dk_flags(Ui& u) { return u.sqrt_dk; }
WindowFlags& class_flags(Ui& u) { return u.class_mode; }
WindowFlags& ghost_flags(Ui& u) { return u.ghost; }
WindowFlags& shortcuts_flags(Ui& u) { return u.shortcuts; }
WindowFlags& tour_flags(Ui& u) { return u.tour; }
WindowFlags& about_flags(Ui& u) { return u.about; }
WindowFlags& demo_flags(Ui& u) { return u.imgui_demo; }
WindowFlags& metrics_flags(Ui& u) { return u.imgui_metrics; }

void draw_imgui_demo(Ui& u) { ImGui::ShowDemoWindow(&u.imgui_demo.open); }
void draw_imgui_metrics(Ui& u) { ImGui::ShowMetricsWindow(&u.imgui_metrics.open); }

// --tab lm-VIEW: the language model's tab (lm-sinks: the roles tab on the first-token score,
// with its sink box), on the model --model loads, or without --model on the shipped English
// model (as the window opens on it).
bool open_lm_on(Ui& u, const std::string& view, std::string& error) {
  LmPanel& p = u.lm.get();
  if (!view.empty() && !p.session.has_model() && !p.session.busy() && !open_default_lm_model(p)) {
    error =
        "--tab lm-" + view + ": needs --model (no shipped model '" + kDefaultLmModel + "' to open)";
    return false;
  }
  u.lm.open = true;
  if (view == "sinks") {
    u.lm.state->select_tab = "roles";
    u.lm.state->role = 1;
  } else {
    u.lm.state->select_tab = view;
  }
  return true;
}

// --tab lm-train: training from the first frame (for screenshots of a head forming).
bool open_lm_train_on(Ui& u, const std::string&, std::string&) {
  u.lm_train.open = true;
  u.lm_train.state = std::make_shared<LmTrainPanel>();
  u.lm_train.state->autostart = true;
  return true;
}

// --tab seq2seq-live opens on "Train live" and starts training (the alignment forming).
bool open_seq2seq_on(Ui& u, const std::string& view, std::string&) {
  u.seq2seq.open = true;
  u.seq2seq.state = std::make_shared<Seq2seqPanel>();
  if (view == "live") {
    u.seq2seq.state->select_tab = "live";
    u.seq2seq.state->autostart = true;
  }
  return true;
}

// The variant views come with the Variants tab, whose controls they answer to.
bool open_variant_views_on(Ui& u, const std::string&, std::string&) {
  u.variant_views.open = true;
  u.select_tab = "variants";
  return true;
}

void open_class_window(Ui& u) { u.class_mode.open = true; }
void open_flag(Ui& u, WindowId id) { window_flags(u, id).open = true; }
void open_shortcuts(Ui& u) { open_flag(u, WindowId::kShortcuts); }
void open_ghost(Ui& u) { open_flag(u, WindowId::kGhost); }
void open_about(Ui& u) { open_flag(u, WindowId::kAbout); }
bool never_checked(const Ui&) { return false; }

using W = WindowId;
using M = WindowMenu;
// In drawing order: the model windows first (a stage under the others), the help pages last.
constexpr WindowRow kRows[] = {
    {W::kSeq2seq, "seq2seq", M::kView, "Seq2seq: translate dates with attention", true, true,
     seq2seq_flags, draw_seq2seq_panel, poll_seq2seq_panel, nullptr, nullptr, "live",
     open_seq2seq_on},
    {W::kLm, "lm", M::kView, "Language model: attention inside GPT-2", false, true, lm_flags,
     draw_lm_panel, poll_lm_panel, nullptr, nullptr,
     "heads block next roles sinks circuit kv rollout", open_lm_on},
    {W::kLmTrain, "lm-train", M::kView, "Train a transformer: watch an induction head form", false,
     true, lm_train_flags, draw_lm_train_panel, nullptr, nullptr, nullptr, "", open_lm_train_on},
    {W::kVariantViews, "variant-views", M::kView, "Linformer and Multi-Token Attention views", true,
     false, variant_views_flags, draw_variant_views_panel, nullptr, nullptr, nullptr, "",
     open_variant_views_on},
    {W::kFlash, "flash", M::kView, "FlashAttention: the online softmax, block by block", false,
     false, flash_flags, draw_flash_panel, nullptr, nullptr, nullptr, "", nullptr},
    {W::kScores, "scores", M::kView, "Score functions: additive vs dot product, timed", false,
     false, scores_flags, draw_scores_panel, nullptr, nullptr, nullptr, "", nullptr},
    {W::kSqrtDk, "sqrt-dk", M::kView, "Why divide by √d_k? An experiment", false, false,
     sqrt_dk_flags, draw_sqrt_dk_panel, nullptr, nullptr, nullptr, "", nullptr},
    // Starting it is a second step in its window: nothing listens on the network by accident.
    {W::kClassMode, "class-mode", M::kView, "Class mode: students answer from their own devices…",
     true, false, class_flags, draw_class_window, poll_class_mode, open_class_window, class_mode_on,
     "", nullptr},
    // --tab tour only opens it: a screenshot does not count as the tour seen (open_tour does).
    {W::kTour, "tour", M::kHelp, "Getting started", false, false, tour_flags, draw_tour_window,
     nullptr, open_tour, never_checked, "", nullptr},
    {W::kShortcuts, "shortcuts", M::kHelp, "Keyboard shortcuts", false, false, shortcuts_flags,
     draw_shortcuts_window, nullptr, open_shortcuts, never_checked, "", nullptr},
    {W::kGhost, "ghost", M::kHelp, "Ghost Attention (Llama 2)…", true, false, ghost_flags,
     draw_ghost_help, nullptr, open_ghost, never_checked, "", nullptr},
    {W::kAbout, "about", M::kHelp, "About Attention Lab", true, false, about_flags,
     draw_about_window, nullptr, open_about, never_checked, "", nullptr},
    {W::kImguiDemo, "imgui-demo", M::kDebug, "ImGui demo window", false, false, demo_flags,
     draw_imgui_demo, nullptr, nullptr, nullptr, "", nullptr},
    {W::kImguiMetrics, "imgui-metrics", M::kDebug, "ImGui metrics", false, false, metrics_flags,
     draw_imgui_metrics, nullptr, nullptr, nullptr, "", nullptr},
};
static_assert(sizeof kRows / sizeof kRows[0] == static_cast<size_t>(WindowId::kCount),
              "one row per WindowId");
constexpr bool rows_in_id_order() {
  for (int i = 0; i < static_cast<int>(WindowId::kCount); ++i)
    if (static_cast<int>(kRows[i].id) != i) return false;
  return true;
}
static_assert(rows_in_id_order(), "row i is WindowId i");

// Whether `view` is one of the space-separated words of `views`.
bool has_view(const char* views, const std::string& view) {
  const std::string all = std::string(" ") + views + " ";
  return !view.empty() && view.find(' ') == std::string::npos &&
         all.find(" " + view + " ") != std::string::npos;
}

// The help and debug windows are not `--tab` names (the tour and the shortcuts are, for
// screenshots of them).
bool answers_tab(const WindowRow& r) {
  return r.menu != WindowMenu::kDebug && r.id != WindowId::kClassMode;
}

}  // namespace

const WindowRow* window_rows() { return kRows; }

const WindowRow& window(WindowId id) { return kRows[static_cast<int>(id)]; }

WindowFlags& window_flags(Ui& ui, WindowId id) { return window(id).flags(ui); }

const WindowFlags& window_flags(const Ui& ui, WindowId id) {
  // The accessors take a Ui& to hand out the flags for writing; reading them changes nothing.
  return window(id).flags(const_cast<Ui&>(ui));
}

bool window_open(const Ui& ui, WindowId id) { return window_flags(ui, id).open; }

std::optional<WindowId> window_for_tab(const std::string& tab, std::string& view) {
  for (const WindowRow& r : kRows)
    if (answers_tab(r) && tab == r.name) {
      view.clear();
      return r.id;
    }
  for (const WindowRow& r : kRows) {
    const size_t n = std::strlen(r.name);
    if (answers_tab(r) && tab.size() > n + 1 && tab.compare(0, n, r.name) == 0 && tab[n] == '-' &&
        has_view(r.views, tab.substr(n + 1))) {
      view = tab.substr(n + 1);
      return r.id;
    }
  }
  return std::nullopt;
}

bool open_window_for_tab(Ui& ui, WindowId id, const std::string& view, std::string& error) {
  const WindowRow& r = window(id);
  if (r.open_on) return r.open_on(ui, view, error);
  r.flags(ui).open = true;
  return true;
}

std::string window_tab_names() {
  std::string out;
  for (const WindowRow& r : kRows) {
    if (!answers_tab(r)) continue;
    out += (out.empty() ? "" : ", ") + std::string(r.name);
    std::string views = r.views;
    for (size_t at = 0; at < views.size();) {
      const size_t end = std::min(views.find(' ', at), views.size());
      out += ", " + std::string(r.name) + "-" + views.substr(at, end - at);
      at = end + 1;
    }
  }
  return out;
}

void draw_window_menu_items(Ui& ui, WindowMenu menu) {
  for (const WindowRow& r : kRows) {
    if (r.menu != menu) continue;
    if (r.separator_before) ImGui::Separator();
    if (!r.menu_open)
      ImGui::MenuItem(r.menu_label, nullptr, &r.flags(ui).open);
    else if (ImGui::MenuItem(r.menu_label, nullptr, r.checked && r.checked(ui)))
      r.menu_open(ui);
  }
}

void draw_windows(Ui& ui) {
  const bool was_busy = ui.busy();
  for (const WindowRow& r : kRows) {
    WindowFlags& f = r.flags(ui);
    if (r.poll)
      r.poll(ui);
    else if (!f.open)
      f.busy = f.training = false;  // a closed window has nothing running that wants frames
    if (f.open) r.draw(ui);
  }
  // ImGui settles a window's new size over a frame or two after its work lands.
  if (was_busy && !ui.busy()) ui.frames_wanted = std::max(ui.frames_wanted, 2);
}

std::optional<WindowId> model_stage_window(const Ui& ui) {
  for (const WindowRow& r : kRows)
    if (r.model_stage && window_open(ui, r.id)) return r.id;
  return std::nullopt;
}

bool Ui::busy() const {
  for (const WindowRow& r : kRows)
    if (window_flags(*this, r.id).busy) return true;
  return false;
}

bool Ui::training() const {
  for (const WindowRow& r : kRows)
    if (window_flags(*this, r.id).training) return true;
  return false;
}

}  // namespace attn
