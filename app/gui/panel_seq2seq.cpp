// The seq2seq panel: pick a trained date model, type an input, see the translation and its
// alignment heatmap; step through the decoder one output character at a time (scores e_tj, the
// chosen formula with its numbers, the softmax α_tj, the context); put two score functions side
// by side; train a small model live and watch its alignment form; compare accuracy by length.
#include "gui/panel_seq2seq.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>

#include "gui/ui.h"
#include "io/shipped.h"
#include "seq2seq/explain_step.h"

namespace attn {

using namespace attn::s2s;

namespace {

// The shipped models by short name, then gui --model's file when it is not one of them; selects
// that file, or bahdanau.
void find_models(Seq2seqPanel& p) {
  p.files.clear();
  p.names.clear();
  for (const ShippedItem& item : list_shipped(kSeq2seqModels)) {
    p.files.push_back(item.path);
    p.names.push_back(item.name);
  }
  const std::string& want = p.open_model;
  if (!want.empty() && std::find(p.files.begin(), p.files.end(), want) == p.files.end()) {
    const size_t slash = want.rfind('/');
    p.files.push_back(want);
    p.names.push_back(slash == std::string::npos ? want : want.substr(slash + 1));
  }
  for (int i = 0; i < static_cast<int>(p.files.size()); ++i)
    if (want.empty() ? p.names[static_cast<size_t>(i)] == "bahdanau"
                     : p.files[static_cast<size_t>(i)] == want)
      p.model_a = i;
}

const std::string& name_of(const Seq2seqPanel& p, int index) {
  return p.names[static_cast<size_t>(index)];
}

const Model* get_model(Seq2seqPanel& p, int index) {
  if (index < 0 || index >= static_cast<int>(p.files.size())) return nullptr;
  const std::string& f = p.files[static_cast<size_t>(index)];
  auto it = p.models.find(f);
  if (it != p.models.end()) return &it->second;
  if (p.load_errors.count(f)) return nullptr;
  Model m;
  std::string error;
  if (!load_model(f, m, error)) {
    p.load_errors[f] = error;
    return nullptr;
  }
  return &(p.models[f] = std::move(m));
}

bool model_combo(const char* label, Seq2seqPanel& p, int& index, bool allow_none) {
  const std::string preview = index < 0 ? "(none)" : name_of(p, index);
  bool changed = false;
  if (ImGui::BeginCombo(label, preview.c_str())) {
    if (allow_none && ImGui::Selectable("(none)", index < 0)) {
      index = -1;
      changed = true;
    }
    for (int i = 0; i < static_cast<int>(p.files.size()); ++i)
      if (ImGui::Selectable(name_of(p, i).c_str(), i == index)) {
        index = i;
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

ImU32 grey(float w, float alpha = 1.0f) {
  const float g = std::clamp(w, 0.0f, 1.0f);
  return ImGui::ColorConvertFloat4ToU32({g, g, g, alpha});
}

// The alignment as a grid of grey cells (white = 1), output characters down the side and input
// characters along the top; blue where a local window hides the position. Returns the clicked
// cell (row, col) or (-1, -1); draws a frame around `sel_row`.
std::pair<int, int> draw_alignment(const char* id, const std::vector<std::string>& rows,
                                   const std::vector<std::string>& cols, const Mat<float>& w,
                                   const Mat<float>* visible, int sel_row, int sel_col) {
  const float avail = ImGui::GetContentRegionAvail().x;
  const float label_w = ImGui::CalcTextSize("</s>").x + 8;
  const float cell = std::clamp((avail - label_w) / std::max<float>(1, cols.size()), 6.0f,
                                ImGui::GetFontSize() * 1.4f);
  const float top = ImGui::GetTextLineHeight() + 4;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  for (size_t j = 0; j < cols.size(); ++j) {
    const std::string c = cols[j] == " " ? "_" : cols[j];
    const float tw = ImGui::CalcTextSize(c.c_str()).x;
    if (cell >= tw) dl->AddText({o.x + label_w + (j + 0.5f) * cell - tw / 2, o.y}, text, c.c_str());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const float y = o.y + top + i * cell;
    const float tw = ImGui::CalcTextSize(rows[i].c_str()).x;
    dl->AddText({o.x + label_w - tw - 4, y + (cell - ImGui::GetTextLineHeight()) / 2}, text,
                rows[i].c_str());
    for (size_t j = 0; j < cols.size(); ++j) {
      const ImVec2 a{o.x + label_w + j * cell, y}, b{a.x + cell, a.y + cell};
      const bool hidden = visible && (*visible)(static_cast<int>(i), static_cast<int>(j)) == 0.0f;
      dl->AddRectFilled(
          a, b,
          hidden ? IM_COL32(28, 40, 96, 255) : grey(w(static_cast<int>(i), static_cast<int>(j))));
    }
  }
  const ImVec2 g0{o.x + label_w, o.y + top};
  const ImVec2 g1{g0.x + cols.size() * cell, g0.y + rows.size() * cell};
  dl->AddRect({g0.x - 1, g0.y - 1}, {g1.x + 1, g1.y + 1}, IM_COL32(128, 128, 128, 255));
  if (sel_row >= 0 && sel_row < static_cast<int>(rows.size()))
    dl->AddRect({g0.x - 2, g0.y + sel_row * cell - 1}, {g1.x + 2, g0.y + (sel_row + 1) * cell + 1},
                IM_COL32(230, 120, 0, 255), 0, 0, 2.0f);
  if (sel_row >= 0 && sel_col >= 0)
    dl->AddRect({g0.x + sel_col * cell, g0.y + sel_row * cell},
                {g0.x + (sel_col + 1) * cell, g0.y + (sel_row + 1) * cell},
                IM_COL32(230, 120, 0, 255), 0, 0, 2.0f);
  ImGui::InvisibleButton(
      id, {std::max(1.0f, label_w + cols.size() * cell), std::max(1.0f, top + rows.size() * cell)});
  std::pair<int, int> clicked{-1, -1};
  if (ImGui::IsItemClicked()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = static_cast<int>(std::floor((m.y - g0.y) / cell));
    const int j = static_cast<int>(std::floor((m.x - g0.x) / cell));
    if (i >= 0 && j >= 0 && i < static_cast<int>(rows.size()) && j < static_cast<int>(cols.size()))
      clicked = {i, j};
  }
  return clicked;
}

struct Translated {
  ForwardCache<float> fc;
  std::string output, error;
  std::vector<std::string> rows, cols;
  Mat<float> weights, visible;
};

Translated run(const Model& m, const std::string& input) {
  Translated t;
  if (!translate(m, input, t.fc, t.output, t.error)) return t;
  const int rows =
      std::min(static_cast<int>(t.fc.steps.size()), static_cast<int>(t.output.size()) + 1);
  t.weights = Mat<float>::Zero(rows, static_cast<int>(input.size()));
  if (uses_window(m.config.score)) t.visible.resize(rows, t.weights.cols());
  for (int i = 0; i < rows; ++i) {
    t.rows.push_back(m.out_vocab.label(t.fc.steps[static_cast<size_t>(i)].out[0]));
    if (m.config.score == Score::kNone)
      t.weights(i, t.weights.cols() - 1) = 1.0f;  // the only context: the last state
    else
      t.weights.row(i) = t.fc.steps[static_cast<size_t>(i)].alpha.row(0);
    if (t.visible.size() > 0) t.visible.row(i) = t.fc.steps[static_cast<size_t>(i)].valid.row(0);
  }
  for (char c : input) t.cols.emplace_back(1, c);
  return t;
}

void draw_translation(Ui& ui, Seq2seqPanel& p, const Model& m, const std::string& name,
                      bool stepping) {
  const Translated t = run(m, p.input);
  if (stepping) p.last_output = t.error.empty() ? t.output : "";
  ImGui::TextUnformatted((name + "  —  " + score_formula(m.config.score)).c_str());
  if (!t.error.empty()) {
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "input: %s", t.error.c_str());
    return;
  }
  if (ui.font_bold) ImGui::PushFont(ui.font_bold);
  ImGui::Text("%s  ->  %s", p.input, t.output.c_str());
  if (ui.font_bold) ImGui::PopFont();
  const int rows = static_cast<int>(t.rows.size());
  if (stepping) p.step = std::clamp(p.step, 0, std::max(0, rows - 1));
  const int sel_row = stepping ? p.step : -1;
  int sel_col = -1;
  if (stepping && m.config.score != Score::kNone && rows > 0) {
    const auto& st = t.fc.steps[static_cast<size_t>(p.step)];
    Eigen::Index best = 0;
    st.alpha.row(0).maxCoeff(&best);
    sel_col = p.position >= 0 && p.position < static_cast<int>(t.cols.size())
                  ? p.position
                  : static_cast<int>(best);
  }
  const auto clicked =
      draw_alignment(("##align-" + name).c_str(), t.rows, t.cols, t.weights,
                     t.visible.size() > 0 ? &t.visible : nullptr, sel_row, sel_col);
  if (stepping && clicked.first >= 0) {
    p.step = clicked.first;
    p.position = clicked.second;
  }
  if (!stepping || rows == 0) return;

  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
  if (ImGui::SliderInt("decoder step", &p.step, 0, rows - 1)) p.position = -1;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && p.step > 0) --p.step, p.position = -1;
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && p.step + 1 < rows) ++p.step, p.position = -1;
  ImGui::SameLine();
  help_marker(
      "Click a cell of the heatmap to write out that score; the orange frame is the "
      "decoder step, the orange cell the input position explained below.");
  const auto& st = t.fc.steps[static_cast<size_t>(p.step)];
  ImGui::Text("step %d emits '%s' with p = %.4f", p.step,
              t.rows[static_cast<size_t>(p.step)].c_str(),
              static_cast<double>(st.probs(0, st.out[0])));
  if (m.config.score != Score::kNone &&
      ImGui::BeginTable("scores", 4,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_SizingFixedFit,
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
      if (ImGui::Selectable(id, j == sel_col, ImGuiSelectableFlags_SpanAllColumns)) p.position = j;
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
  if (ui.font_narration) ImGui::PushFont(ui.font_narration);
  const int j = std::max(0, sel_col);
  for (const auto& line : explain_attention_step(m, t.fc, p.step, j, 4, 3))
    ImGui::TextWrapped("%s", line.c_str());
  if (ui.font_narration) ImGui::PopFont();
}

void draw_translate_tab(Ui& ui, Seq2seqPanel& p) {
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  model_combo("model", p, p.model_a, false);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  model_combo("side by side with", p, p.model_b, true);
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##input", "a date, e.g. tuesday, 22 november 2026", p.input,
                           sizeof p.input);
  const Model* a = get_model(p, p.model_a);
  if (!a) {
    ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "%s",
                       p.files.empty()
                           ? no_shipped_message(kSeq2seqModels).c_str()
                           : p.load_errors[p.files[static_cast<size_t>(p.model_a)]].c_str());
    return;
  }
  const Model* b = get_model(p, p.model_b);
  if (b) {
    if (ImGui::BeginTable("side", 2, ImGuiTableFlags_BordersInnerV)) {
      ImGui::TableNextColumn();
      draw_translation(ui, p, *a, name_of(p, p.model_a), true);
      ImGui::TableNextColumn();
      draw_translation(ui, p, *b, name_of(p, p.model_b), false);
      ImGui::EndTable();
    }
  } else {
    draw_translation(ui, p, *a, name_of(p, p.model_a), true);
  }
}

void draw_live_tab(Seq2seqPanel& p) {
  const LiveSnapshot s = p.live.snapshot();
  const auto& names = score_names();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  if (ImGui::BeginCombo("score", names[static_cast<size_t>(p.live_score)].c_str())) {
    for (int i = 0; i < static_cast<int>(names.size()); ++i)
      if (ImGui::Selectable(names[static_cast<size_t>(i)].c_str(), i == p.live_score))
        p.live_score = i;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  ImGui::SliderInt("hidden", &p.live_hidden, 8, 64);
  p.live_hidden += p.live_hidden % 2;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  ImGui::SliderInt("epochs", &p.live_epochs, 1, 10);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
  ImGui::InputText("example", p.live_example, sizeof p.live_example);
  if (!s.running) {
    const bool autostart = p.autostart && !s.finished && !s.cancelled;
    p.autostart = false;
    if (ImGui::Button("Train") || autostart) {
      LiveTrainingSetup setup;
      setup.score = static_cast<Score>(p.live_score);
      setup.hidden = p.live_hidden;
      setup.train.epochs = p.live_epochs;
      setup.train.train_size = 8000;
      setup.train.heldout_size = 300;
      setup.train.threads = 2;
      setup.example = p.live_example;
      p.live.set_paused(false);
      if (!p.live.start(setup, p.live_error))
        p.live_error = "example: " + p.live_error;
      else
        p.live_error.clear();
    }
  } else {
    if (ImGui::Button(s.paused ? "Resume" : "Pause")) p.live.set_paused(!s.paused);
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) p.live.cancel();
  }
  ImGui::SameLine();
  help_marker(
      "Trains a small model on 8000 dates in the background (two threads). The loss of "
      "every batch is plotted; the example's alignment is redrawn every 10 batches: "
      "uniform at first, then the year, the day and the month find their places.");
  if (!p.live_error.empty()) ImGui::TextColored({0.85f, 0.1f, 0.1f, 1}, "%s", p.live_error.c_str());
  if (s.batches > 0)
    ImGui::Text("epoch %d/%d, batch %d/%d, loss %.4f%s%s", s.epoch, p.live_epochs, s.batch,
                s.batches, s.batch_loss.empty() ? 0.0 : static_cast<double>(s.batch_loss.back()),
                s.paused ? "  (paused)" : "",
                s.cancelled  ? "  (cancelled)"
                : s.finished ? "  (done)"
                             : "");
  for (size_t e = 0; e < s.epoch_accuracy.size(); ++e)
    ImGui::Text("after epoch %zu: held-out exact match %.1f%%", e + 1,
                100.0 * static_cast<double>(s.epoch_accuracy[e]));
  if (!s.batch_loss.empty())
    ImGui::PlotLines(
        "##loss", s.batch_loss.data(), static_cast<int>(s.batch_loss.size()), 0,
        "cross-entropy per character, every batch", 0.0f, FLT_MAX,
        {std::max(100.0f, ImGui::GetContentRegionAvail().x), ImGui::GetFontSize() * 6});
  if (s.alignment.rows() > 0) {
    ImGui::Text("%s  ->  %s", p.live_example, s.output.c_str());
    std::vector<std::string> rows, cols;
    for (char c : s.output) rows.emplace_back(1, c);
    rows.push_back("</s>");
    rows.resize(static_cast<size_t>(s.alignment.rows()), "?");
    for (char c : std::string(p.live_example)) cols.emplace_back(1, c);
    if (static_cast<int>(cols.size()) == s.alignment.cols())
      draw_alignment("##live", rows, cols, s.alignment, nullptr, -1, -1);
  }
}

void draw_bottleneck_tab(Seq2seqPanel& p) {
  ImGui::TextWrapped(
      "Exact match on 1000 held-out dates by input length for the models trained "
      "on inputs of at most 40 characters (the shipped bottleneck/ models): beyond the "
      "training lengths the fixed-context model (none) falls fastest — Figure 2 "
      "of Bahdanau et al.");
  const bool busy = p.compare_job.valid();
  if (!busy && ImGui::Button(p.compare_rows.empty() ? "Evaluate" : "Evaluate again")) {
    std::vector<std::pair<std::string, const Model*>> chosen;
    for (int i = 0; i < static_cast<int>(p.files.size()); ++i)
      if (name_of(p, i).rfind("bottleneck/", 0) == 0)
        if (const Model* m = get_model(p, i)) chosen.emplace_back(name_of(p, i), m);
    p.compare_names.clear();
    std::vector<Model> copies;
    for (auto& c : chosen) {
      p.compare_names.push_back(c.first);
      copies.push_back(*c.second);
    }
    p.compare_job = std::async(std::launch::async, [copies] {
      const auto data = heldout_dates(1000);
      std::vector<std::vector<LengthBucket>> out;
      for (const auto& m : copies) out.push_back(accuracy_by_length(m, data, 2));
      return out;
    });
  }
  if (busy) {
    ImGui::TextUnformatted("evaluating…");
    if (p.compare_job.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      p.compare_rows = p.compare_job.get();
  }
  if (p.compare_rows.empty()) return;
  const size_t buckets = p.compare_rows[0].size();
  if (ImGui::BeginTable("acc", static_cast<int>(p.compare_rows.size()) + 2,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("length");
    ImGui::TableSetupColumn("count");
    for (const auto& n : p.compare_names) ImGui::TableSetupColumn(n.c_str());
    ImGui::TableHeadersRow();
    for (size_t r = 0; r < buckets; ++r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(p.compare_rows[0][r].label.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%d", p.compare_rows[0][r].count);
      for (const auto& t : p.compare_rows) {
        ImGui::TableNextColumn();
        ImGui::Text("%.1f%%", 100.0 * t[r].accuracy());
      }
    }
    ImGui::EndTable();
  }
  // Accuracy against length, one line per model (the "all" row left out).
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float w = std::max(200.0f, ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 12);
  const float h = ImGui::GetFontSize() * 12;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRect(o, {o.x + w, o.y + h}, IM_COL32(128, 128, 128, 255));
  const ImU32 colours[] = {IM_COL32(0, 0, 0, 255),      IM_COL32(230, 159, 0, 255),
                           IM_COL32(86, 180, 233, 255), IM_COL32(0, 158, 115, 255),
                           IM_COL32(213, 94, 0, 255),   IM_COL32(204, 121, 167, 255)};
  const size_t n = buckets - 1;
  for (size_t k = 0; k < p.compare_rows.size(); ++k) {
    const ImU32 c = colours[k % 6];
    for (size_t r = 0; r + 1 < n; ++r) {
      auto pt = [&](size_t i) {
        return ImVec2{o.x + w * (n > 1 ? static_cast<float>(i) / (n - 1) : 0.5f),
                      o.y + h * (1.0f - static_cast<float>(p.compare_rows[k][i].accuracy()))};
      };
      dl->AddLine(pt(r), pt(r + 1), c, 2.5f);
    }
    dl->AddLine({o.x + w + 10, o.y + 10 + 18 * k}, {o.x + w + 30, o.y + 10 + 18 * k}, c, 2.5f);
    dl->AddText({o.x + w + 36, o.y + 2 + 18 * k}, ImGui::GetColorU32(ImGuiCol_Text),
                p.compare_names[k].c_str());
  }
  ImGui::Dummy({w, h});
  ImGui::TextUnformatted("input length: 6-10 (left) … 71+ characters (right); accuracy 0 to 100%");
}

}  // namespace

void draw_seq2seq_panel(Ui& ui) {
  if (!ui.seq2seq) ui.seq2seq = std::make_shared<Seq2seqPanel>();
  if (!ui.seq2seq->scanned) {
    ui.seq2seq->scanned = true;
    find_models(*ui.seq2seq);
  }
  Seq2seqPanel& p = *ui.seq2seq;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.08f, vp->Pos.y + vp->Size.y * 0.08f},
                          ImGuiCond_Appearing);
  ImGui::SetNextWindowSize({vp->Size.x * 0.84f, vp->Size.y * 0.84f}, ImGuiCond_Appearing);
  if (p.place_beside_lesson && ui.lesson_rect.z > 0) {
    // Left of the lesson window, so the step's text stays readable beside the alignment.
    const float x0 = vp->Pos.x, y0 = ui.lesson_rect.y;
    ImGui::SetNextWindowPos({x0, y0}, ImGuiCond_Always);
    ImGui::SetNextWindowSize({std::max(320.0f, ui.lesson_rect.x - x0), ui.lesson_rect.w},
                             ImGuiCond_Always);
    ImGui::SetNextWindowFocus();
    p.place_beside_lesson = false;
  }
  p.shown_tab.clear();
  if (!ImGui::Begin("Seq2seq with attention: dates###seq2seq", &ui.show_seq2seq)) {
    ImGui::End();
    return;
  }
  if (ImGui::BeginTabBar("seq2seq-tabs")) {
    auto flags = [&p](const char* tab) {
      return p.select_tab == tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    if (ImGui::BeginTabItem("Translate", nullptr, flags("translate"))) {
      p.shown_tab = "translate";
      draw_translate_tab(ui, p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Train live", nullptr, flags("live"))) {
      p.shown_tab = "live";
      draw_live_tab(p);
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Bottleneck", nullptr, flags("bottleneck"))) {
      p.shown_tab = "bottleneck";
      draw_bottleneck_tab(p);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
    p.select_tab.clear();
  }
  ImGui::End();
}

}  // namespace attn
