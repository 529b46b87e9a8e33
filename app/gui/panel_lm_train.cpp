// The "Train a transformer" window: a small GPT-2 learns the induction task (or short stories) in
// the background while the student watches the loss fall with the phase change marked, every
// head's induction and previous-token scores over time, and the attention of the two heads that
// form the circuit on a fixed repeated sequence, redrawn as it learns: diffuse at first, then the
// line below the diagonal (layer 0) and the stripe of the repeat (layer 1). Pause, resume,
// cancel, save, and open the model to step through its induction head.
#include "gui/panel_lm_train.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/chart_widget.h"
#include "gui/heatmap_widget.h"
#include "gui/panel_lm.h"

namespace attn {

namespace {

const ImVec4 kWarn(0.85f, 0.1f, 0.1f, 1);
const ImVec4 kAccent(0.85f, 0.35f, 0.05f, 1);

std::string head_label(const lm::Config& c, int i) {
  return "L" + std::to_string(i / c.n_head) + "H" + std::to_string(i % c.n_head);
}

// The heads the circuit view draws: the best previous-token head of the first layer and the best
// induction head of the layers after it (of any layer when there is only one).
std::pair<int, int> circuit_heads(const lm::Config& c, const lm::EvalPoint& e) {
  int prev = 0, ind = c.n_layer > 1 ? c.n_head : 0;
  for (int i = 0; i < c.n_head; ++i)
    if (e.heads[static_cast<size_t>(i)].previous > e.heads[static_cast<size_t>(prev)].previous)
      prev = i;
  for (int i = c.n_layer > 1 ? c.n_head : 0; i < c.n_layer * c.n_head; ++i)
    if (e.heads[static_cast<size_t>(i)].induction > e.heads[static_cast<size_t>(ind)].induction)
      ind = i;
  return {prev, ind};
}

// SameLine, or a new line when the next item (`width` wide) would not fit: the controls wrap in a
// narrow window or at presentation font sizes instead of running off the edge.
void next_on_line(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

// The width of a labelled widget whose field is `field` wide.
float labelled(float field, const char* label) {
  return field + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
}

float button_width(const char* label) {
  return ImGui::CalcTextSize(label, nullptr, true).x + ImGui::GetStyle().FramePadding.x * 2;
}

// The settings' header: what the model and its training are, readable while they are folded away.
std::string settings_summary(const LmTrainPanel& p) {
  const lm::TrainOptions& o = p.session.setup.train;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "Settings: %s · %d layers × %d heads · width %d · context %d · %ld steps"
                "###lm-train-settings",
                p.session.task() == LmTrainSession::kInduction ? "induction task" : "short stories",
                o.n_layer, o.n_head, o.n_embd, o.context, o.steps);
  return buf;
}

void draw_settings(LmTrainPanel& p, bool idle) {
  const float fs = ImGui::GetFontSize();
  lm::TrainOptions& o = p.session.setup.train;
  if (p.collapse_settings) {
    ImGui::SetNextItemOpen(false);
    p.collapse_settings = false;
  }
  if (!ImGui::CollapsingHeader(settings_summary(p).c_str(), ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (!idle) ImGui::BeginDisabled();
  const char* tasks[] = {"Induction task: random letters, a segment repeated",
                         "Short stories (text written by a grammar)"};
  // As wide as the longest choice, so neither is cut off.
  ImGui::SetNextItemWidth(
      std::max(ImGui::CalcTextSize(tasks[0]).x, ImGui::CalcTextSize(tasks[1]).x) +
      ImGui::GetFrameHeight() + ImGui::GetStyle().FramePadding.x * 2);
  int task = p.session.task();
  if (ImGui::Combo("##task", &task, tasks, 2))
    p.session.choose_task(static_cast<LmTrainSession::Task>(task));
  auto slider = [fs](const char* label, int* v, int lo, int hi) {
    next_on_line(labelled(fs * 5, label));
    ImGui::SetNextItemWidth(fs * 5);
    ImGui::SliderInt(label, v, lo, hi);
  };
  slider("layers", &o.n_layer, 1, 4);
  slider("heads", &o.n_head, 1, 8);
  int width = o.n_embd;
  slider("width", &width, 16, 128);
  o.n_embd = std::max(o.n_head, width / o.n_head * o.n_head);  // a multiple of the heads
  slider("context", &o.context, 16, 64);
  int steps = static_cast<int>(o.steps);
  next_on_line(labelled(fs * 7, "steps"));
  ImGui::SetNextItemWidth(fs * 7);
  if (ImGui::SliderInt("steps", &steps, 100, 10000)) o.steps = steps;
  float lr = static_cast<float>(o.lr);
  next_on_line(labelled(fs * 7, "learning rate"));
  ImGui::SetNextItemWidth(fs * 7);
  if (ImGui::SliderFloat("learning rate", &lr, 1e-4f, 1e-2f, "%.4f", ImGuiSliderFlags_Logarithmic))
    o.lr = lr;
  next_on_line(labelled(ImGui::GetFrameHeight(), "attention-only"));
  ImGui::Checkbox("attention-only", &o.attention_only);
  int seed = static_cast<int>(o.seed);
  next_on_line(labelled(fs * 4, "seed"));
  ImGui::SetNextItemWidth(fs * 4);
  if (ImGui::InputInt("seed", &seed, 0)) o.seed = static_cast<uint64_t>(std::max(0, seed));
  if (!idle) ImGui::EndDisabled();
}

void draw_controls(LmTrainPanel& p, const lm::LiveSnapshot& s) {
  const bool idle = !s.running;
  draw_settings(p, idle);
  if (idle) {
    const bool autostart = p.autostart;
    p.autostart = false;
    if ((ImGui::Button(s.finished || s.cancelled ? "Train again" : "Train") || autostart) &&
        p.session.start())
      p.collapse_settings = true;
  } else {
    if (ImGui::Button(s.paused ? "Resume" : "Pause")) p.session.live.set_paused(!s.paused);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) p.session.live.cancel();
  }
  const bool has_model = p.session.live.model() != nullptr;
  if (!has_model) ImGui::BeginDisabled();
  next_on_line(button_width("Save…"));
  if (ImGui::Button("Save…")) p.show_save = true;
  next_on_line(button_width("Open in the model view"));
  if (ImGui::Button("Open in the model view")) p.open_requested = true;
  if (!has_model) ImGui::EndDisabled();
  ImGui::SameLine();
  help_marker(
      "Trains a small GPT-2 on your computer, on two threads. The induction task shows sequences "
      "of random letters in which a segment appears twice: the first time nothing can predict "
      "the letters, the second time a model that copies can. Somewhere in training two heads "
      "learn to work together to copy — an induction head forms — and the loss drops suddenly: "
      "the phase change. Save writes a model folder any GPT-2 loader reads.");
}

void draw_status(LmTrainPanel& p, const lm::LiveSnapshot& s) {
  const LmTrainSession& t = p.session;
  if (!t.error.empty()) ImGui::TextColored(kWarn, "%s", t.error.c_str());
  if (!s.error.empty()) ImGui::TextColored(kWarn, "Training failed: %s", s.error.c_str());
  if (!t.status.empty()) ImGui::TextDisabled("%s", t.status.c_str());
  if (s.history.empty()) {
    if (!s.running)
      ImGui::TextWrapped(
          "Press Train. The curves and the attention patterns below fill in as the model "
          "learns, every 25 steps.");
    return;
  }
  const lm::EvalPoint& e = s.history.back();
  const lm::Config& c = s.config;
  const char* state = s.paused      ? "  (paused)"
                      : s.cancelled ? "  (cancelled)"
                      : s.finished  ? "  (done)"
                                    : "";
  // One piece per figure, each kept whole: wrapping the line as one text could break a number
  // after its decimal point ("0." at the end of a line, "38" on the next).
  char buf[5][96];
  std::snprintf(buf[0], sizeof buf[0], "step %ld of %ld", s.step, s.steps);
  std::snprintf(buf[1], sizeof buf[1], "held-out loss %.3f", e.heldout_loss);
  std::snprintf(buf[2], sizeof buf[2], "in-context accuracy %.0f %%", 100 * e.icl_accuracy);
  std::snprintf(buf[3], sizeof buf[3], "best induction head %s %.2f",
                head_label(c, e.best_induction).c_str(),
                e.heads[static_cast<size_t>(e.best_induction)].induction);
  std::snprintf(buf[4], sizeof buf[4], "best previous-token head %s %.2f  ·  %.0f s%s",
                head_label(c, e.best_previous).c_str(),
                e.heads[static_cast<size_t>(e.best_previous)].previous, e.seconds, state);
  for (int i = 0; i < 5; ++i) {
    // "·" between figures on a line; a figure that starts a new line goes without it.
    const std::string piece = std::string("·  ") + buf[i];
    if (i) ImGui::SameLine();
    const bool fits = i && ImGui::GetContentRegionAvail().x >= ImGui::CalcTextSize(piece.c_str()).x;
    if (i && !fits) ImGui::NewLine();
    ImGui::TextUnformatted(fits ? piece.c_str() : buf[i]);
  }
  if (s.phase.found) {
    char phase[64];
    std::snprintf(phase, sizeof phase, "Phase change: steps %ld–%ld", s.phase.start, s.phase.end);
    next_on_line(ImGui::CalcTextSize(phase).x + ImGui::GetFontSize());
    ImGui::TextColored(kAccent, "%s", phase);
  }
}

void draw_charts(Ui& ui, const lm::LiveSnapshot& s, float width, float height) {
  const lm::Config& c = s.config;
  const float h = std::max(ImGui::GetFontSize() * 6, height / 3 - ImGui::GetStyle().ItemSpacing.y);
  auto base = [&](const char* title) {
    lm::PhaseChange ph = s.phase;
    ChartSpec ch;
    ch.size = {width, h};
    ch.y_min = 0;
    ch.y_max = 1;
    ch.title = title;
    ch.x_max = static_cast<float>(s.steps);
    ch.band = ph.found;
    ch.band_from = static_cast<float>(ph.start);
    ch.band_to = static_cast<float>(ph.end);
    ch.band_label = ph.found ? "phase change" : "";
    // Room for the widest label any of the three may show, so their step axes line up.
    ch.label_room = ImGui::CalcTextSize("in-context").x;
    ch.value_room = ImGui::CalcTextSize("0.00").x;
    return ch;
  };
  {
    ChartSpec ch = base("Loss: every batch (grey) and held out (blue)");
    ChartSeries batch, held;
    batch.colour = IM_COL32(150, 150, 150, 200);
    batch.thickness = 1.0f;
    for (size_t i = 0; i < s.step_loss.size(); ++i)
      batch.points.push_back({static_cast<float>(i + 1), s.step_loss[i]});
    held.colour = IM_COL32(31, 119, 180, 255);
    held.thickness = 2.5f;
    held.end_label = "held out";
    float top = 1;
    for (const lm::EvalPoint& e : s.history) {
      held.points.push_back({static_cast<float>(e.step), static_cast<float>(e.heldout_loss)});
      top = std::max(top, static_cast<float>(e.heldout_loss));
    }
    ch.y_max = std::ceil(top);
    ch.series = {batch, held};
    draw_line_chart(widgets(ui), ch);
  }
  for (int kind = 0; kind < 2; ++kind) {
    ChartSpec ch = base(kind == 0 ? "Induction score of every head; in-context accuracy (black)"
                                  : "Previous-token score of every head");
    for (int i = 0; i < c.n_layer * c.n_head; ++i) {
      ChartSeries l;
      l.colour = lm_head_color(i);
      l.thickness = 2.0f;
      for (const lm::EvalPoint& e : s.history) {
        const lm::HeadScores& hs = e.heads[static_cast<size_t>(i)];
        l.points.push_back({static_cast<float>(e.step),
                            static_cast<float>(kind == 0 ? hs.induction : hs.previous)});
      }
      if (!l.points.empty() && l.points.back().y >= 0.2f) l.end_label = head_label(c, i);
      ch.series.push_back(std::move(l));
    }
    if (kind == 0) {
      ChartSeries acc;
      acc.colour = ImGui::GetColorU32(ImGuiCol_Text);
      acc.thickness = 2.5f;
      acc.end_label = "in-context";
      for (const lm::EvalPoint& e : s.history)
        acc.points.push_back({static_cast<float>(e.step), static_cast<float>(e.icl_accuracy)});
      ch.series.push_back(std::move(acc));
    }
    draw_line_chart(widgets(ui), ch);
  }
}

void draw_probe_heatmaps(Ui& ui, LmTrainPanel& p, const lm::LiveSnapshot& s, float width) {
  const lm::Config& c = s.config;
  const int T = static_cast<int>(s.probe_tokens.size());
  if (s.history.empty() || s.probe_att.size() != static_cast<size_t>(c.n_layer) * c.n_head * T * T)
    return;
  const lm::EvalPoint& e = s.history.back();
  const auto [prev, ind] = circuit_heads(c, e);
  Matrix* mats = p.probe_weights;
  const float fs = ImGui::GetFontSize();
  // Room for the two titles and about four lines of explanation below the maps.
  const float side =
      std::max(fs * 9, std::min(width / 2 - fs, ImGui::GetContentRegionAvail().y -
                                                    ImGui::GetTextLineHeightWithSpacing() * 6));
  for (int k = 0; k < 2; ++k) {
    const int head = k == 0 ? prev : ind;
    mats[k] =
        Eigen::Map<const Matrix>(s.probe_att.data() + static_cast<size_t>(head) * T * T, T, T);
    if (k) ImGui::SameLine();
    ImGui::BeginGroup();
    const lm::HeadScores& hs = e.heads[static_cast<size_t>(head)];
    // The head, then its score kept whole on the same line or the next (wrapping the title as
    // one text could split "0.54" after its point).
    char score[48];
    std::snprintf(score, sizeof score, "%s %.2f", k == 0 ? "previous token" : "induction",
                  k == 0 ? hs.previous : hs.induction);
    const std::string name = head_label(c, head) + " ·";
    ImGui::TextUnformatted(name.c_str());
    ImGui::SameLine();
    if (ImGui::CalcTextSize(name.c_str()).x + ImGui::GetStyle().ItemSpacing.x +
            ImGui::CalcTextSize(score).x >
        side)
      ImGui::NewLine();
    ImGui::TextUnformatted(score);
    HeatmapSpec sp;
    sp.id = k == 0 ? "lm-train-prev" : "lm-train-ind";
    sp.serial = static_cast<uint64_t>(s.probe_serial) * 2 + static_cast<uint64_t>(k) + 1;
    sp.m = &mats[k];
    sp.matrix_name = stage_name(StageId::kWeights);
    sp.hidden_are_zero = true;
    sp.row_labels = s.probe_tokens;
    sp.col_labels = s.probe_tokens;
    sp.scale = {ui.settings.colormap, 0.0f, 1.0f};
    sp.color_bar = false;
    sp.size = {side, side};
    draw_heatmap(widgets(ui), sp);
    ImGui::EndGroup();
  }
  const int n = T / 2;
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(
      "Both heatmaps show the same fixed sequence: a segment of letters, then the same segment "
      "again. Rows are the tokens reading (queries), columns the tokens they may read (keys).");
  const double p0 = e.heads[static_cast<size_t>(prev)].previous;
  const double i1 = e.heads[static_cast<size_t>(ind)].induction;
  if (p0 < 0.4 && i1 < 0.3 && e.icl_accuracy >= 0.2) {
    ImGui::Text(
        "Now: the model already copies (%.0f %% in-context accuracy), but neither head has the "
        "textbook pattern yet: the copying is spread over several keys, not one stripe.",
        100 * e.icl_accuracy);
  } else if (p0 < 0.4 && i1 < 0.3) {
    ImGui::TextUnformatted(
        "Now: diffuse. Every token spreads its attention over the tokens before it; nothing can "
        "be copied yet.");
  } else {
    ImGui::Text(
        "Left: the line just below the diagonal — each token looks at the one before it (%.0f %% "
        "of its attention on average) and copies it into its own position.",
        100 * p0);
    if (i1 >= 0.3)
      ImGui::Text(
          "Right: the stripe %d below the diagonal in the second half — each repeated token looks "
          "at the token that FOLLOWED its first occurrence (%.0f %% of its attention) and "
          "predicts it. That is the induction head.",
          n - 1, 100 * i1);
    else
      ImGui::TextUnformatted(
          "Right: the induction stripe has not formed yet; watch the in-context accuracy.");
  }
  ImGui::PopTextWrapPos();
}

void draw_save_popup(LmTrainPanel& p, const lm::LiveSnapshot& s) {
  if (p.show_save) {
    ImGui::OpenPopup("Save the trained model");
    p.show_save = false;
  }
  if (!ImGui::BeginPopupModal("Save the trained model", nullptr, ImGuiWindowFlags_AlwaysAutoResize))
    return;
  const bool has_model = p.session.live.model() != nullptr;
  ImGui::TextUnformatted("Folder (config.json, model.safetensors, vocab.json, merges.txt):");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 24);
  ImGui::InputText("##folder", &p.session.save_folder);
  if (has_model && !s.history.empty())
    ImGui::TextDisabled("The model after step %ld.", s.history.back().step);
  if (ImGui::Button("Save") && has_model && p.session.save(s)) ImGui::CloseCurrentPopup();
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
  if (!p.session.error.empty()) ImGui::TextColored(kWarn, "%s", p.session.error.c_str());
  ImGui::EndPopup();
}

}  // namespace

void open_trained_model(Ui& ui) {
  LmTrainPanel& p = *ui.lm_train.state;
  const auto model = p.session.live.model();
  if (!model) return;
  LmPanel& lp = ui.lm.get();
  const lm::LiveSnapshot s = p.session.live.snapshot();
  lp.text_buffer = s.probe_text;
  lp.text_initialised = true;
  lp.session.set_text(s.probe_text);  // before adopt, so the model runs on this sentence
  lp.session.adopt(model);
  lp.select_tab = "circuit";
  ui.lm.open = true;
  ui.lm_train.open = false;
}

void draw_lm_train_panel(Ui& ui) {
  LmTrainPanel& p = ui.lm_train.get();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.02f, vp->Pos.y + top + vp->Size.y * 0.02f},
                          ImGuiCond_Appearing);
  ImGui::SetNextWindowSize({vp->Size.x * 0.96f, vp->Size.y * 0.94f - top * 2}, ImGuiCond_Appearing);
  const lm::LiveSnapshot s = p.session.live.snapshot();
  ui.lm_train.training = s.running && !s.paused;
  if (const auto failure = p.session.new_failure(s))
    ui.state.set_message("Training failed: " + *failure, true);
  const ImGuiWindowFlags staged = place_as_stage(ui, WindowId::kLmTrain);
  if (!ImGui::Begin("Train a transformer: watch an induction head form###lm-train",
                    &ui.lm_train.open, ImGuiWindowFlags_NoCollapse | staged)) {
    ImGui::End();
    return;
  }
  draw_controls(p, s);
  draw_status(p, s);
  ImGui::Separator();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float left_w = std::round(avail.x * 0.42f);
  ImGui::BeginChild("lm-train-charts", {left_w, 0}, false);
  if (!s.history.empty())
    draw_charts(ui, s, ImGui::GetContentRegionAvail().x, ImGui::GetContentRegionAvail().y);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("lm-train-heads", {0, 0}, false);
  draw_probe_heatmaps(ui, p, s, ImGui::GetContentRegionAvail().x);
  if (!s.history.empty()) {
    ImGui::Spacing();
    if (ImGui::Button("Explain the circuit on your own sentence…")) p.open_requested = true;
    ImGui::SameLine();
    ImGui::TextDisabled("opens this model in the language-model window");
  }
  ImGui::EndChild();
  draw_save_popup(p, s);
  ImGui::End();
  if (p.open_requested) {
    p.open_requested = false;
    open_trained_model(ui);
  }
}

}  // namespace attn
