// The seq2seq panel: pick a trained date model, type an input, see the translation and its
// alignment heatmap; step through the decoder one output character at a time (scores e_tj, the
// chosen formula with its numbers, the softmax α_tj, the context); put two score functions side
// by side; train a small model live and watch its alignment form; compare accuracy by length.
#include "gui/panel_seq2seq.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/chart_widget.h"
#include "gui/heatmap_widget.h"
#include "gui/ui.h"
#include "seq2seq/explain_step.h"

namespace attn {

using namespace attn::s2s;

namespace {

bool model_combo(const char* label, Seq2seqSession& s, int& index, bool allow_none) {
  const std::string preview = index < 0 ? "(none)" : s.name(index);
  bool changed = false;
  if (ImGui::BeginCombo(label, preview.c_str())) {
    if (allow_none && ImGui::Selectable("(none)", index < 0)) {
      index = -1;
      changed = true;
    }
    for (int i = 0; i < s.model_count(); ++i)
      if (ImGui::Selectable(s.name(i).c_str(), i == index)) {
        index = i;
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

// The alignment as a grid of cells in the chosen colour map (weights 0..1), output characters
// down the side and input characters along the top, hatched where a local window hides the
// position, with a colour bar under it. Rows from `conceal_from` on are hidden (a prediction is
// pending). Returns the clicked cell (row, col) or (-1, -1); frames `sel_row` and `sel_col`.
std::pair<int, int> draw_alignment(Ui& ui, const char* id, const std::vector<std::string>& rows,
                                   const std::vector<std::string>& cols, const Mat<float>& w,
                                   const Mat<float>* visible, int sel_row, int sel_col,
                                   int conceal_from = -1) {
  const float fs = ImGui::GetFontSize();
  ImFont* font = ImGui::GetFont();
  const bool light = ui.settings.light_theme;
  const float avail = ImGui::GetContentRegionAvail().x;
  const float label_w = text_width(font, fs, "</s>") + fs * 0.4f;
  // Input characters as large as a column allows (down to 9 px, then every other one). In
  // presentation every one at 16 px at least, which reads from the back of a room: a long input
  // shows a window of its characters around the selected one.
  const float min_label = ui.presentation ? 16.0f : 9.0f;
  const int n_cols = static_cast<int>(cols.size());
  int first = 0, shown = n_cols;
  if (ui.presentation && n_cols > 0) {
    const float least = std::ceil(min_label * 0.8f);  // a character at 16 px and its margin
    shown = std::clamp(static_cast<int>((avail - label_w) / least), 1, n_cols);
    int focus = sel_col;
    if (focus < 0 && sel_row >= 0 && sel_row < w.rows()) {  // the row's strongest input
      focus = 0;
      for (int j = 1; j < n_cols; ++j)
        if (w(sel_row, j) > w(sel_row, focus)) focus = j;
    }
    first = std::clamp(std::max(focus, 0) - shown / 2, 0, n_cols - shown);
  }
  const float cell = std::clamp((avail - label_w) / std::max<float>(1, static_cast<float>(shown)),
                                6.0f, fs * 1.4f);
  // Rows as tall as their labels need (a long input makes narrow columns, not short rows).
  const float ch = std::max(cell, std::min(fs, min_label * 1.15f));
  const float cf = std::clamp(cell * 1.15f, std::min(min_label, fs), fs);
  const int every = std::max(1, static_cast<int>(std::ceil(cf * 0.75f / cell)));
  const float top = cf + fs * 0.3f;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 conceal = light ? IM_COL32(214, 218, 228, 255) : IM_COL32(58, 62, 76, 255);
  // Column j is drawn at x(j); the columns before the window are left of the grid, unseen.
  auto x = [&](int j) { return o.x + label_w + static_cast<float>(j - first) * cell; };
  for (int j = first; j < first + shown; j += every) {
    const std::string c = cols[static_cast<size_t>(j)] == " " ? "_" : cols[static_cast<size_t>(j)];
    const float tw = text_width(font, cf, c);
    draw_text(widgets(ui), dl, font, cf, {x(j) + cell * 0.5f - tw / 2, o.y}, text, c);
  }
  const ColorScale scale{ui.settings.colormap, 0.0f, 1.0f};
  bool any_hidden = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const float y = o.y + top + i * ch;
    const float rf = std::min(fs, std::max(min_label, ch * 1.05f));
    const float tw = text_width(font, rf, rows[i]);
    if (rf <= ch * 1.25f || i % 2 == 0)
      draw_text(widgets(ui), dl, font, rf, {o.x + label_w - tw - fs * 0.2f, y + (ch - rf) / 2},
                text, rows[i]);
    const bool hide_row = conceal_from >= 0 && static_cast<int>(i) >= conceal_from;
    for (int j = first; j < first + shown; ++j) {
      const ImVec2 a{x(j), y}, b{a.x + cell, a.y + ch};
      const bool hidden = visible && (*visible)(static_cast<int>(i), static_cast<int>(j)) == 0.0f;
      any_hidden |= hidden;
      ImU32 c = hidden ? hatch_color(light, 1)
                       : colormap_u32(scale.map, w(static_cast<int>(i), static_cast<int>(j)));
      if (hide_row) c = conceal;
      dl->AddRectFilled(a, b, c);
    }
    if (hide_row) {
      const float qf = std::min(fs, ch);
      const float qw = text_width(font, qf, "?");
      draw_text(widgets(ui), dl, font, qf,
                {o.x + label_w + static_cast<float>(shown) * cell / 2 - qw / 2, y + (ch - qf) / 2},
                text, "?");
    }
  }
  const ImVec2 g0{o.x + label_w, o.y + top};
  const ImVec2 g1{g0.x + static_cast<float>(shown) * cell, g0.y + rows.size() * ch};
  dl->AddRect({g0.x - 1, g0.y - 1}, {g1.x + 1, g1.y + 1}, IM_COL32(128, 128, 128, 255));
  if (sel_row >= 0 && sel_row < static_cast<int>(rows.size()))
    dl->AddRect({g0.x - 2, g0.y + sel_row * ch - 1}, {g1.x + 2, g0.y + (sel_row + 1) * ch + 1},
                IM_COL32(230, 120, 0, 255), 0, 0, 2.0f);
  if (sel_row >= 0 && sel_col >= first && sel_col < first + shown)
    dl->AddRect({x(sel_col), g0.y + sel_row * ch}, {x(sel_col) + cell, g0.y + (sel_row + 1) * ch},
                IM_COL32(230, 120, 0, 255), 0, 0, 2.0f);
  if (shown < n_cols) {  // how much of the input is out of the window, either side
    char side[64];
    std::snprintf(side, sizeof side, "◀ %d   %d ▶", first, n_cols - first - shown);
    draw_text(widgets(ui), dl, font, min_label, {g0.x, g1.y + fs * 0.1f},
              ImGui::GetColorU32(ImGuiCol_TextDisabled), side);
  }
  // The colour bar says what a colour means; the hatch what a local window hides.
  const float bar_w = std::clamp(g1.x - g0.x, fs * 10, std::max(fs * 10, avail - label_w));
  const float window_h = shown < n_cols ? min_label * 1.4f : 0;  // the "◀ N  N ▶" line
  const float bar_y = g1.y + fs * 0.5f + window_h;
  const float bar_h =
      draw_color_bar(widgets(ui), dl, {g0.x, bar_y}, std::min(bar_w, fs * 16), scale);
  float legend_h = 0;
  if (any_hidden) {
    const ImVec2 at{g0.x, bar_y + bar_h + fs * 0.3f};
    dl->AddRectFilled(at, {at.x + fs * 1.3f, at.y + fs * 0.8f}, hatch_color(light, 1));
    draw_text(widgets(ui), dl, font, fs, {at.x + fs * 1.8f, at.y + fs * 0.4f - fs / 2},
              ImGui::GetColorU32(ImGuiCol_TextDisabled), "outside the local window (−∞)");
    legend_h = fs * 1.3f;
  }
  ImGui::InvisibleButton(id, {std::max(1.0f, label_w + static_cast<float>(shown) * cell),
                              std::max(1.0f, top + rows.size() * ch)});
  std::pair<int, int> clicked{-1, -1};
  if (ImGui::IsItemClicked()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = static_cast<int>(std::floor((m.y - g0.y) / ch));
    const int j = first + static_cast<int>(std::floor((m.x - g0.x) / cell));
    if (i >= 0 && j >= first && i < static_cast<int>(rows.size()) && j < first + shown)
      clicked = {i, j};
  }
  ImGui::Dummy({1, fs * 0.5f + window_h + bar_h + legend_h});
  return clicked;
}

// Decoder step `step` of `t` in one sentence: the character it wrote and how sure it was, and
// (scored) the input character it weighed most, and the next one when it has a tenth or more.
std::string step_sentence(const Seq2seqTranslation& t, int step, bool scored) {
  const auto& st = t.fc.steps[static_cast<size_t>(step)];
  char b[160];
  std::snprintf(b, sizeof b, "Step %d writes '%s' (p %.2f)", step,
                t.rows[static_cast<size_t>(step)].c_str(),
                static_cast<double>(st.probs(0, st.out[0])));
  std::string out = b;
  if (!scored || t.fc.src_len == 0) return out + ".";
  std::vector<int> order(static_cast<size_t>(t.fc.src_len));
  for (int j = 0; j < t.fc.src_len; ++j) order[static_cast<size_t>(j)] = j;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int c) { return st.alpha(0, a) > st.alpha(0, c); });
  auto input = [&](int j) {
    const std::string& ch = t.cols[static_cast<size_t>(j)];
    std::snprintf(b, sizeof b, "'%s' at %d (α %.2f)", ch == " " ? "_" : ch.c_str(), j,
                  static_cast<double>(st.alpha(0, j)));
    return std::string(b);
  };
  out += ", reading most " + input(order[0]);
  if (order.size() > 1 && st.alpha(0, order[1]) >= 0.1f) out += ", then " + input(order[1]);
  return out + ".";
}

// Model `index`'s translation of the input with its alignment; `stepping` (model A): the decoder
// step, its question and its scores written out under it.
void draw_translation(Ui& ui, Seq2seqSession& s, int index, bool stepping) {
  const Model& m = *s.model(index);
  const Seq2seqTranslation& t = *s.translation(index);
  // Wrapped, as everything in a stage that a narrow column or large type would cut. The
  // translation over its plot, the score's formula under it: the plot stays near the top.
  const std::string formula = s.name(index) + "  —  " + score_formula(m.config.score);
  if (!t.error.empty()) {
    text_wrapped_at_spaces(formula);
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "input: %s", t.error.c_str());
    return;
  }
  if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
  // On a slide the input is in its field just above: the model and what it wrote.
  text_wrapped_at_spaces(ui.lesson_view.slide.on ? s.name(index) + "  →  " + t.output
                                                 : s.input + "  →  " + t.output);
  if (ui.fonts.bold) ImGui::PopFont();
  const int rows = t.steps();
  if (stepping) s.clamp_step(rows);
  const bool scored = m.config.score != Score::kNone;
  // Predict, then reveal: which input character will this decoder step look at most?
  const bool asking = stepping && s.asking(m);
  const int sel_row = stepping ? s.step : -1;
  const int sel_col = !stepping ? -1 : asking ? s.guess : s.explained_position(m, t);
  const auto clicked = draw_alignment(ui, ("##align-" + s.name(index)).c_str(), t.rows, t.cols,
                                      t.weights, t.visible.size() > 0 ? &t.visible : nullptr,
                                      sel_row, sel_col, asking ? s.step : -1);
  if (asking && clicked.first >= 0) {
    s.guess = clicked.second;
  } else if (stepping && clicked.first >= 0) {
    s.step = clicked.first;
    s.position = clicked.second;
    if (s.predicting) s.revealed = true;
  }
  // On a slide the lesson's words give the formula.
  const bool slide = ui.lesson_view.slide.on;
  if (!slide) text_wrapped_at_spaces(formula);
  if (!stepping || rows == 0) return;

  // On a slide the step is one sentence beside the arrows (a row of the plot picks one too), and
  // the lesson asks its own questions: no predict first.
  if (slide && !asking) {
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && s.step > 0) s.go_to_step(s.step - 1);
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right) && s.step + 1 < rows) s.go_to_step(s.step + 1);
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::AlignTextToFramePadding();
    text_wrapped_at_spaces(step_sentence(t, s.step, scored));
    ImGui::EndGroup();
    return;
  }
  int step = s.step;
  if (slider_int_beside("##step", "decoder step ", &step, 0, rows - 1, ImGui::GetFontSize() * 10))
    s.go_to_step(step);
  same_line_if_fits(ImGui::GetFrameHeight() * 2 + ImGui::GetStyle().ItemSpacing.x);
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && s.step > 0) s.go_to_step(s.step - 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && s.step + 1 < rows) s.go_to_step(s.step + 1);
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Click a cell of the heatmap to write out that score; the orange frame is the "
      "decoder step, the orange cell the input position explained below.");
  if (scored) {
    same_line_if_fits(radio_width("predict first"));
    if (ImGui::Checkbox("predict first", &s.predicting)) s.go_to_step(s.step);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Hide this step's weights and ask which input character it will look at");
  }
  if (asking) {
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextWrapped(
        "Step %d will write '%s'. Which input character will it look at most? "
        "Click it in the hidden row.",
        s.step, t.rows[static_cast<size_t>(s.step)].c_str());
    ImGui::PopFont();
    if (s.guess >= 0)
      ImGui::Text("Your pick: position %d, '%s'", s.guess,
                  t.cols[static_cast<size_t>(s.guess)] == " "
                      ? "_"
                      : t.cols[static_cast<size_t>(s.guess)].c_str());
    if (ImGui::Button("Reveal")) s.revealed = true;
    return;
  }
  if (scored && s.predicting && s.revealed) {
    const Verdict v = s.verdict(t);
    const bool light = ui.settings.light_theme;
    const ImVec4 colour =
        v.grade == Verdict::Grade::kExact
            ? (light ? ImVec4(0.05f, 0.5f, 0.2f, 1) : ImVec4(0.35f, 0.85f, 0.45f, 1))
        : v.grade == Verdict::Grade::kClose
            ? (light ? ImVec4(0.7f, 0.42f, 0, 1) : ImVec4(0.98f, 0.7f, 0.25f, 1))
            : (light ? ImVec4(0.75f, 0.12f, 0.1f, 1) : ImVec4(1, 0.45f, 0.4f, 1));
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextColored(colour, "%s", v.headline.c_str());
    ImGui::PopFont();
    text_wrapped_at_spaces(v.detail);
    if (s.step + 1 < rows && ImGui::Button("Next step")) s.go_to_step(s.step + 1);
  }
  const auto& st = t.fc.steps[static_cast<size_t>(s.step)];
  ImGui::Text("step %d emits '%s' with p = %.4f", s.step,
              t.rows[static_cast<size_t>(s.step)].c_str(),
              static_cast<double>(st.probs(0, st.out[0])));
  if (scored && ImGui::BeginTable("scores", 4,
                                  ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                      ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit,
                                  {0, ImGui::GetTextLineHeightWithSpacing() * 9})) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("j");
    ImGui::TableSetupColumn("char");
    ImGui::TableSetupColumn("e_tj");
    ImGui::TableSetupColumn("alpha_tj");
    ImGui::TableHeadersRow();
    for (int j = 0; j < t.fc.src_len; ++j) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char id[16];
      std::snprintf(id, sizeof id, "%d", j);
      if (ImGui::Selectable(id, j == sel_col, ImGuiSelectableFlags_SpanAllColumns)) s.position = j;
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(
          t.cols[static_cast<size_t>(j)] == " " ? "_" : t.cols[static_cast<size_t>(j)].c_str());
      ImGui::TableNextColumn();
      if (st.valid(0, j) == 0.0f)
        ImGui::TextUnformatted("-inf (window)");
      else
        ImGui::Text("%.3f", static_cast<double>(st.e(0, j)));
      ImGui::TableNextColumn();
      ImGui::Text("%.4f", static_cast<double>(st.alpha(0, j)));
    }
    ImGui::EndTable();
  }
  if (ui.fonts.narration) ImGui::PushFont(ui.fonts.narration);
  for (const auto& line : explain_attention_step(m, t.fc, s.step, std::max(0, sel_col), 4, 3))
    text_wrapped_at_spaces(line);
  if (ui.fonts.narration) ImGui::PopFont();
}

void draw_translate_tab(Ui& ui, Seq2seqSession& s) {
  // Two model pickers on a line when they fit, else one above the other.
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float label_w = ImGui::CalcTextSize("side by side with").x + spacing;
  const float combo_w =
      std::min(ImGui::GetFontSize() * 14, ImGui::GetContentRegionAvail().x - label_w);
  // On a slide the lesson chose the model (its name heads the plot): the pickers give their
  // lines to the plot, unless two models stand side by side.
  if (!ui.lesson_view.slide.on || s.model(s.model_b)) {
    ImGui::SetNextItemWidth(combo_w);
    model_combo("model", s, s.model_a, false);
    same_line_if_fits(combo_w + label_w);
    ImGui::SetNextItemWidth(combo_w);
    model_combo("side by side with", s, s.model_b, true);
  }
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##input", "a date, e.g. tuesday, 22 november 2026", &s.input);
  if (!s.model(s.model_a)) {
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "%s", s.load_error(s.model_a).c_str());
    return;
  }
  if (s.model(s.model_b)) {
    if (ImGui::BeginTable("side", 2, ImGuiTableFlags_BordersInnerV)) {
      ImGui::TableNextColumn();
      draw_translation(ui, s, s.model_a, true);
      ImGui::TableNextColumn();
      draw_translation(ui, s, s.model_b, false);
      ImGui::EndTable();
    }
  } else {
    draw_translation(ui, s, s.model_a, true);
  }
}

void draw_live_tab(Ui& ui, Seq2seqPanel& p) {
  Seq2seqSession& session = p.session;
  const LiveSnapshot s = session.live.snapshot();
  const auto& names = score_names();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::BeginCombo("score", names[static_cast<size_t>(session.live_score)].c_str())) {
    for (int i = 0; i < static_cast<int>(names.size()); ++i)
      if (ImGui::Selectable(names[static_cast<size_t>(i)].c_str(), i == session.live_score))
        session.live_score = i;
    ImGui::EndCombo();
  }
  same_line_if_fits(ImGui::GetFontSize() * 5);
  slider_int_beside("##hidden", "hidden ", &session.live_hidden, 8, 64, ImGui::GetFontSize() * 5);
  session.live_hidden += session.live_hidden % 2;
  same_line_if_fits(ImGui::GetFontSize() * 5);
  slider_int_beside("##epochs", "epochs ", &session.live_epochs, 1, 10, ImGui::GetFontSize() * 5);
  ImGui::SetNextItemWidth(
      std::min(ImGui::GetFontSize() * 22, ImGui::GetContentRegionAvail().x -
                                              ImGui::CalcTextSize("example").x -
                                              ImGui::GetStyle().ItemInnerSpacing.x));
  ImGui::InputText("example", &session.live_example);
  if (!s.running) {
    const bool autostart = p.autostart && !s.finished && !s.cancelled;
    p.autostart = false;
    if (ImGui::Button("Train") || autostart) session.start_live();
  } else {
    if (ImGui::Button(s.paused ? "Resume" : "Pause")) session.live.set_paused(!s.paused);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) session.live.cancel();
  }
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Trains a small model on 8000 dates in the background (two threads). The loss of "
      "every batch is plotted; the example's alignment is redrawn every 10 batches: "
      "uniform at first, then the year, the day and the month find their places.");
  if (!session.live_error.empty())
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "%s", session.live_error.c_str());
  if (!s.error.empty())
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "Training failed: %s", s.error.c_str());
  if (s.batches > 0)
    ImGui::Text("epoch %d/%d, batch %d/%d, loss %.4f%s%s", s.epoch, session.live_epochs, s.batch,
                s.batches, s.batch_loss.empty() ? 0.0 : static_cast<double>(s.batch_loss.back()),
                s.paused ? "  (paused)" : "",
                s.cancelled  ? "  (cancelled)"
                : s.finished ? "  (done)"
                             : "");
  for (size_t e = 0; e < s.epoch_accuracy.size(); ++e)
    ImGui::Text("after epoch %zu: held-out exact match %.1f%%", e + 1,
                100.0 * static_cast<double>(s.epoch_accuracy[e]));
  if (!s.batch_loss.empty()) {
    ChartSpec c;
    c.series.push_back({"", s.batch_loss, IM_COL32(31, 119, 180, 255)});
    c.x_title = "batch";
    c.y_title = "cross-entropy per character (nats)";
    c.size = {0, ImGui::GetFontSize() * 10};
    draw_line_chart(widgets(ui), c);
  }
  if (s.alignment.rows() > 0) {
    ImGui::Text("%s  ->  %s", session.live_example.c_str(), s.output.c_str());
    std::vector<std::string> rows, cols;
    for (char c : s.output) rows.emplace_back(1, c);
    rows.push_back("</s>");
    rows.resize(static_cast<size_t>(s.alignment.rows()), "?");
    for (char c : session.live_example) cols.emplace_back(1, c);
    if (static_cast<int>(cols.size()) == s.alignment.cols())
      draw_alignment(ui, "##live", rows, cols, s.alignment, nullptr, -1, -1);
  }
}

// A bottleneck model's score, which names its column and its line ("bottleneck/bahdanau-max40"
// → "bahdanau"): the words above say they are the models trained on 40 characters at most.
std::string score_name(std::string n) {
  if (n.rfind("bottleneck/", 0) == 0) n.erase(0, 11);
  if (const size_t max = n.find("-max"); max != std::string::npos) n.resize(max);
  return n;
}

void draw_bottleneck_tab(Ui& ui, Seq2seqSession& s) {
  // On a slide the chart is the figure, under one line; the table (the same numbers) gives way.
  const bool slide = ui.lesson_view.slide.on;
  if (slide)
    text_wrapped_at_spaces("Exact match by input length; trained on 40 characters at most.");
  else
    ImGui::TextWrapped(
        "Exact match on held-out dates by input length for the models trained "
        "on inputs of at most 40 characters (the shipped bottleneck/ models): beyond the "
        "training lengths the fixed-context model (none) falls fastest — Figure 2 "
        "of Bahdanau et al.");
  const bool busy = s.compare_job.running();
  if (!busy && ImGui::Button(s.compare_rows.empty() ? "Evaluate" : "Evaluate again"))
    s.start_compare(!s.compare_rows.empty());  // "Evaluate again" evaluates afresh
  if (busy) {
    // A lesson step starts it on opening: the class sees that it is under way and how far.
    char label[128];
    std::snprintf(label, sizeof label, "Evaluating %zu models on %d dates… %.0f s",
                  s.compare_names.size(), Seq2seqSession::kCompareDates,
                  s.compare_job.elapsed_seconds());
    ImGui::ProgressBar(static_cast<float>(s.compare_job.progress()), {-1, 0}, label);
  }
  if (!s.compare_error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "⚠ %s", s.compare_error.c_str());
    ImGui::PopTextWrapPos();
  }
  if (s.compare_rows.empty()) return;
  const size_t buckets = s.compare_rows[0].size();
  // Every model's column within the width: in large type (presentation) the dates' count leaves
  // the table and the shares are whole percents.
  const bool compact = ui.presentation;
  const int columns = static_cast<int>(s.compare_rows.size()) + (compact ? 1 : 2);
  if (!slide &&
      ImGui::BeginTable("acc", columns,
                        ImGuiTableFlags_Borders | (compact ? ImGuiTableFlags_SizingStretchProp
                                                           : ImGuiTableFlags_SizingFixedFit))) {
    ImGui::TableSetupColumn("length");
    if (!compact) ImGui::TableSetupColumn("count");
    for (const std::string& n : s.compare_names) ImGui::TableSetupColumn(score_name(n).c_str());
    ImGui::TableHeadersRow();
    for (size_t r = 0; r < buckets; ++r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.compare_rows[0][r].label.c_str());
      if (!compact) {
        ImGui::TableNextColumn();
        ImGui::Text("%d", s.compare_rows[0][r].count);
      }
      for (const auto& t : s.compare_rows) {
        ImGui::TableNextColumn();
        ImGui::Text(compact ? "%.0f%%" : "%.1f%%", 100.0 * t[r].accuracy());
      }
    }
    ImGui::EndTable();
  }
  // Accuracy against length, one line per model (the "all" row left out).
  const ImU32 colours[] = {IM_COL32(0, 0, 0, 255),      IM_COL32(230, 159, 0, 255),
                           IM_COL32(86, 180, 233, 255), IM_COL32(0, 158, 115, 255),
                           IM_COL32(213, 94, 0, 255),   IM_COL32(204, 121, 167, 255)};
  ChartSpec c;
  const size_t n = buckets - 1;
  for (size_t r = 0; r < n; ++r) c.x_labels.push_back(s.compare_rows[0][r].label);
  for (size_t k = 0; k < s.compare_rows.size(); ++k) {
    ChartSeries line{score_name(s.compare_names[k]), {}, colours[k % 6]};
    if (k == 0 && !ui.settings.light_theme) line.colour = IM_COL32(230, 230, 230, 255);
    for (size_t r = 0; r < n; ++r)
      line.y.push_back(static_cast<float>(s.compare_rows[k][r].accuracy()));
    c.series.push_back(std::move(line));
  }
  c.y_min = 0;
  c.y_max = 1;
  c.y_percent = true;
  c.y_title = "exact match";
  c.x_title = "input length (characters)";
  c.size = {0, slide ? std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().y)
                     : ImGui::GetFontSize() * 14};
  draw_line_chart(widgets(ui), c);
}

}  // namespace

void poll_seq2seq_panel(Ui& ui) {
  if (!ui.seq2seq.state) return;
  Seq2seqSession& s = ui.seq2seq.state->session;
  // A failed run or evaluation is reported once, in the status bar, open or not.
  // One snapshot a frame (it copies the loss curve): the failure and whether it trains.
  const LiveSnapshot live = s.live.snapshot();
  if (const std::string failed = s.take_training_failure(live); !failed.empty())
    ui.state.set_message(failed, true);
  if (const std::string failed = s.poll_compare(); !failed.empty())
    ui.state.set_message(failed, true);
  // Evaluating in the background keeps the window drawing; training wakes it a few times a
  // second (Ui::training); closed or idle, it sleeps.
  ui.seq2seq.busy = ui.seq2seq.open && s.compare_job.running();
  ui.seq2seq.training = ui.seq2seq.open && live.running && !live.paused;
}

void draw_seq2seq_panel(Ui& ui) {
  Seq2seqPanel& p = ui.seq2seq.get();
  p.session.ensure_models();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  // Placed when it opens, and again when the main window changes size or the font does (F11,
  // Ctrl+=, a resize) or View → Reset layout, so it never hangs off the screen.
  const ImVec4 placed{vp->Size.x, vp->Size.y, ImGui::GetFontSize(), 0};
  const bool resized = p.placed_for.x != placed.x || p.placed_for.y != placed.y ||
                       p.placed_for.z != placed.z || ui.layout.reset;
  p.placed_for = placed;
  const ImGuiCond cond = resized ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.08f, vp->Pos.y + vp->Size.y * 0.08f}, cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.84f, vp->Size.y * 0.84f}, cond);
  place_beside_lesson(ui, p.place_beside_lesson);
  const ImGuiWindowFlags staged = place_as_stage(ui, WindowId::kSeq2seq);
  p.shown_tab.clear();
  if (!ImGui::Begin("Seq2seq with attention: dates###seq2seq", &ui.seq2seq.open, staged)) {
    ImGui::End();
    return;
  }
  if (ImGui::BeginTabBar("seq2seq-tabs")) {
    auto flags = [&p](const char* tab) {
      return p.select_tab == tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    if (ImGui::BeginTabItem("Translate", nullptr, flags("translate"))) {
      p.shown_tab = "translate";
      draw_translate_tab(ui, p.session);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Train live", nullptr, flags("live"))) {
      p.shown_tab = "live";
      draw_live_tab(ui, p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Bottleneck", nullptr, flags("bottleneck"))) {
      p.shown_tab = "bottleneck";
      draw_bottleneck_tab(ui, p.session);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
    // As the language model's window: busy from the frame that asks, not the frame after — a tab
    // asked for shows on the tab bar's next frame, and an evaluation started this frame (the
    // button, a lesson step) is polled on the next.
    const bool switching = !p.select_tab.empty() && p.select_tab != p.shown_tab;
    ui.seq2seq.busy = ui.seq2seq.busy || switching || p.session.compare_job.running();
    p.select_tab.clear();
  }
  ImGui::End();
}

}  // namespace attn
