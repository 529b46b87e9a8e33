// The stage being taught: its title, why it exists, its formula, and its heatmap (Q, K and V side
// by side for the inputs stage). Clicking a cell or a query token asks the narration for it.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "gui/heatmap_widget.h"
#include "gui/model/index_notation.h"
#include "gui/model/stage_motion.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"

namespace attn {
namespace {

std::vector<std::string> index_labels(int n, const char* prefix) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

void handle_click(Ui& ui, StageId stage, const HeatmapEvent& ev) {
  if (!ev.clicked) return;
  AppState& st = ui.state;
  if (ui.editor.custom_mask && is_query_key(stage) && ev.col >= 0) {
    st.toggle_custom_cell(ev.row, ev.col);
    return;
  }
  if (is_query_key(stage) && ev.col >= 0)
    st.select_cell(ev.row, ev.col);
  else
    st.select_row(ev.row);
}

// The stage's formula in index notation (Einstein summation), with the hovered cell's indices put
// in, and the shapes behind each index letter in a section that opens on demand.
void draw_index_form(Ui& ui, StageId id, int h, int g, bool room) {
  // Presentation mode keeps the height for the cells (the numbers must stay readable).
  if (room) return;
  const AttentionTrace& t = ui.state.trace();
  const HeatmapViewport& v = ui.views["main"];
  const IndexForm f = index_form(id, t.num_heads > 1, h, g, v.hover_row, v.hover_col);
  if (f.general.empty()) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("index form: %s", f.general.c_str());
  // Always a line, so the heatmap does not jump as the pointer enters and leaves it.
  if (!f.cell.empty())
    ImGui::TextColored(ImVec4(0.85f, 0.35f, 0.05f, 1), "this cell: %s", f.cell.c_str());
  else if (id != StageId::kInputs && id != StageId::kConcat)
    ImGui::TextDisabled("%s", "hover a cell to see its indices");
  ImGui::PopTextWrapPos();
  if (ImGui::TreeNode("Shapes and index letters")) {
    const ImGuiTableFlags tf =
        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("shapes", 3, tf)) {
      ImGui::TableSetupColumn("tensor");
      ImGui::TableSetupColumn("indices");
      ImGui::TableSetupColumn("shape");
      ImGui::TableHeadersRow();
      for (const ShapeRow& r :
           shapes_table(t.num_heads > 1, t.num_heads, t.num_kv_heads, t.n_q, t.n_k, t.d_k, t.d_v)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.tensor.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.indices.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.shape.c_str());
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("%s", "A letter repeated on the right of = is summed over (Einstein).");
    ImGui::TreePop();
  }
}

}  // namespace

namespace {

// The stage's title, which head it shows (and which K/V head it uses, unless a question asks),
// and the recompute's progress.
void draw_heatmap_heading(Ui& ui, const StageInfo& stage, int h, int g, bool room) {
  const AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  auto flow = [&](const std::string& text) {  // on this line when it fits, else the next
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x +
            ImGui::CalcTextSize(text.c_str()).x <=
        right)
      ImGui::SameLine();
  };
  ImGui::PushFont(ui.fonts.title);
  ImGui::TextUnformatted(stage.title);
  ImGui::PopFont();
  if (!room) {  // presentation has no pointer to hover with: the narration says why
    same_line_if_fits(ImGui::CalcTextSize("(?)").x);
    help_marker(stage.why);
  }
  const bool per_head = stage.id != StageId::kConcat && stage.id != StageId::kProjected;
  if (t.num_heads > 1 && per_head) {
    // Which key/value head it uses, unless a lesson question asks that.
    const std::string head_text =
        "head " + std::to_string(h) +
        (ui.secret.shape ? "" : " of " + std::to_string(t.num_heads)) +
        (ui.secret.kv_map || ui.secret.shape ? "" : " · uses key/value head " + std::to_string(g));
    flow(head_text);
    ImGui::TextDisabled("%s", head_text.c_str());
  }
  if (st.computing()) {
    char buf[96];
    const int heads = st.recomputed_heads();
    // After an edit of some heads, only those are computed: say so.
    const std::string which =
        heads > 0 && heads < t.num_heads
            ? " " + std::to_string(heads) + " of " + std::to_string(t.num_heads) + " heads"
            : "";
    std::snprintf(buf, sizeof buf, "computing%s… %d%%  %.1f s", which.c_str(),
                  static_cast<int>(st.computing_progress() * 100), st.computing_seconds());
    flow(buf);
    ImGui::TextColored(ImVec4(0.85f, 0.45f, 0.05f, 1), "%s", buf);
  }
}

// The formula, large: the one line a student copies down (wrapped, never cut); for the inputs
// Q's, K's and V's. In presentation beside the title when it fits.
void draw_stage_formula(Ui& ui, const StageInfo& stage, bool room) {
  const AttentionTrace& t = ui.state.trace();
  const float fs = ImGui::GetFontSize();
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::PushFont(ui.fonts.mono);
  ImGui::PushTextWrapPos(0);
  if (stage.id == StageId::kInputs) {
    const TraceStep* q = t.find(StageId::kQ);
    const TraceStep* k = t.find(StageId::kK);
    const TraceStep* v = t.find(StageId::kV);
    if (q && k && v && q->formula.find('=') != std::string::npos) {
      // Three formulas, each whole on its line: the next follows on the line when it fits.
      const std::string f[3] = {formula_for_wrapping(q->formula), formula_for_wrapping(k->formula),
                                formula_for_wrapping(v->formula)};
      for (int i = 0; i < 3; ++i) {
        if (i > 0 &&
            ImGui::GetItemRectMax().x + fs * 1.5f + ImGui::CalcTextSize(f[i].c_str()).x <= right)
          ImGui::SameLine(0, fs * 1.5f);
        ImGui::TextWrapped("%s", f[i].c_str());
      }
    } else
      ImGui::TextWrapped("Q (%d × %d)   K (%d × %d)   V (%d × %d): one row per token", t.n_q, t.d_k,
                         t.n_k, t.d_k, t.n_k, t.d_v);
  } else if (const TraceStep* s = t.find(stage.id)) {
    // Presentation: beside the title when it fits there (its baseline on the title's), keeping
    // the height for the cells.
    // A formula's remark ("(each row sums to 1)") is left out when the line would wrap.
    std::string formula = s->formula;
    const size_t remark = formula.find("   (");
    if (room && remark != std::string::npos &&
        ImGui::CalcTextSize(formula.c_str()).x > ImGui::GetContentRegionAvail().x)
      formula.resize(remark);
    if (room && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x * 3 +
                        ImGui::CalcTextSize(formula.c_str()).x <=
                    right) {
      const float title_h = ImGui::GetItemRectSize().y;
      ImGui::SameLine(0, ImGui::GetStyle().ItemSpacing.x * 3);
      ImGui::SetCursorPosY(ImGui::GetCursorPosY() + (title_h - ImGui::GetFontSize()) * 0.75f);
    }
    ImGui::TextWrapped("%s", formula.c_str());
    if (stage.id == StageId::kScaled && !ui.secret.hides_scale())
      ImGui::TextDisabled("scale = %s = %.4f", t.scale_overridden ? "chosen" : "1/√d_k", t.scale);
    if (stage.id == StageId::kWeights && t.temperature != 1.0f)
      ImGui::TextDisabled("temperature T = %.3g", t.temperature);
  }
  ImGui::PopTextWrapPos();
  ImGui::PopFont();
}

// The rope stage's angles: what a row, a column and a cell are.
void draw_rope_intro(const AttentionTrace& t) {
  const float fs = ImGui::GetFontSize();
  const std::vector<double>& f = t.rope.inv_freq;
  const int half = static_cast<int>(f.size());
  ImGui::PushTextWrapPos(0);
  if (ImGui::GetContentRegionAvail().x < fs * 34)  // a projector's large type: the short form
    ImGui::TextWrapped("Cell: p·θᵢ radians, pair i (dimensions i, i + %d) at position p.", half);
  else
    ImGui::TextWrapped(
        "A row per position p, a column per pair i (p%d is dimensions %d and %d): the cell is "
        "p·θᵢ, the angle in radians that pair turns by. θ_0 = %.4g turns fastest, θ_%d = %.3g "
        "slowest.",
        half - 1, half - 1, 2 * half - 1, f.front(), half - 1, f.back());
  ImGui::PopTextWrapPos();
}

// Q, K and V side by side (or Q above K and V), with one cell size for all three so K and V,
// which share their rows (the keys), line up; a click selects a query's row or a key.
void draw_qkv_inputs(Ui& ui, int h, int g, bool room) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const Selection sel = st.selection();
  const float fs = ImGui::GetFontSize();
  const TraceStep& q = t.step(StageId::kQ);
  const TraceStep& k = t.step(StageId::kK);
  const TraceStep& v = t.step(StageId::kV);
  const Matrix* mats[3] = {&q.heads[h], &k.heads[g], &v.heads[g]};
  const char* names[3] = {"Q", "K", "V"};
  const StageId ids[3] = {StageId::kQ, StageId::kK, StageId::kV};
  // A head of a grouped-query model: its K and V are shared; a line says with whom.
  const std::string kv_text = lm_open_head_kv_text(ui);
  if (!kv_text.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("K and V: %s.", kv_text.c_str());
    ImGui::PopTextWrapPos();
  }
  // One cell size for all three, so K and V (which share their rows, the keys) line up and
  // V needs no labels of its own.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float pad = fs * 0.5f;
  // On a slide the tokens alone set the label columns (their axis titles go: the cells
  // need the width for their numbers).
  auto widest = [&](const std::vector<std::string>& v, const char* axis) {
    float w = ui.lesson_view.slide.on ? 0.0f : ImGui::CalcTextSize(axis).x * 0.85f;
    for (size_t i = 0; i < std::min<size_t>(v.size(), 4096); ++i)
      w = std::max(w, ImGui::CalcTextSize(v[i].c_str()).x);
    return std::min(w, avail.x * 0.2f);
  };
  const float lq = widest(t.query_tokens, "queries ↓") + pad * 2,
              lk = widest(t.key_tokens, "keys ↓") + pad * 2;
  const float gap = fs * 1.5f;
  const float block = fs * 8.2f;  // name, axis titles, key labels and colour bar of one heatmap
  // Each heatmap's name over it: its width counts as well as the cells'.
  std::string titles[3];
  float title_w[3];
  ImGui::PushFont(ui.fonts.bold);
  for (int i = 0; i < 3; ++i) {
    titles[i] = i == 1 && !kv_text.empty()
                    ? "K  (shared)"
                    : std::string(names[i]) +
                          (i == 0 ? (t.num_heads > 1 ? "  (query head)" : "")
                                  : (i == 1 && t.num_kv_heads > 1 ? "  (key/value head)" : ""));
    title_w[i] = ImGui::CalcTextSize(titles[i].c_str()).x;
  }
  ImGui::PopFont();
  const float label_w[3] = {lq, lk, pad};
  const int dims[3] = {t.d_k, t.d_k, t.d_v};
  // The width of Q, of K and V together, at a cell size (V's name stands over V's cells).
  auto q_w = [&](float c) { return std::max(title_w[0], lq + c * dims[0]); };
  auto kv_w = [&](float c) {
    return std::max(title_w[1], lk + c * dims[1]) + std::max(title_w[2], pad + c * dims[2]);
  };
  // The largest cell at which `w(c)` fits the width (the widths grow with the cell).
  auto widest_cell = [&](auto w, float room_w, float hi) {
    float lo = 1, c = hi;
    for (int k = 0; k < 24; ++k, c = (lo + hi) / 2) (w(c) <= room_w ? lo : hi) = c;
    return lo;
  };
  // Side by side [Q] [K][V], or Q above [K][V]: whichever gives the larger cells.
  const float big = fs * 8;
  const float smallest = std::max(t.n_q, t.n_k) <= 64 ? fs * 0.9f : 2.0f;
  auto side_by_side = [&](float c) { return q_w(c) + gap + kv_w(c); };
  if (widest_cell(side_by_side, avail.x, big) < smallest * 1.5f) {
    // Too narrow for the heads' names in the titles: the letters alone ("head 0" is above).
    ImGui::PushFont(ui.fonts.bold);
    for (int i = 0; i < 3; ++i) {
      titles[i] = names[i];
      title_w[i] = ImGui::CalcTextSize(names[i]).x;
    }
    ImGui::PopFont();
  }
  // Half a letter to spare: the colour bars' end labels may stand past their cells.
  const float side_w = widest_cell(side_by_side, avail.x - fs * 0.5f, big);
  const float side_h = (avail.y - block) / std::max(1, std::max(t.n_q, t.n_k));
  const float stack_w = std::min(widest_cell(q_w, avail.x, big), widest_cell(kv_w, avail.x, big));
  const float stack_h = (avail.y - 2 * block) / std::max(1, t.n_q + t.n_k);
  const bool stacked = std::min(stack_w, stack_h) > std::min(side_w, side_h);
  const float fit = stacked ? std::min(stack_w, stack_h) : std::min(side_w, side_h);
  // Never smaller than a line of text for a teaching-sized matrix: the panel scrolls instead.
  const float cell = std::clamp(fit, smallest, fs * (room ? 8.0f : 4.5f));
  for (int i = 0; i < 3; ++i) {
    if (i == 1 && !stacked) ImGui::SameLine(0, gap);
    if (i == 2) ImGui::SameLine(0, 0);
    ImGui::BeginGroup();
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextUnformatted(titles[i].c_str());
    ImGui::PopFont();
    HeatmapSpec sp;
    sp.id = std::string("qkv-") + names[i];
    sp.texture_key = sp.id + "-" + std::to_string(i == 0 ? h : g);
    sp.m = mats[i];
    sp.matrix_name = names[i];
    sp.row_labels = i == 0                       ? t.query_tokens
                    : t.input_key_tokens.empty() ? t.key_tokens
                                                 : t.input_key_tokens;
    sp.row_labels_shown = i != 2;
    sp.row_axis = ui.lesson_view.slide.on ? "" : i == 0 ? "queries ↓" : i == 1 ? "keys ↓" : "";
    if (ui.lesson_view.slide.on) sp.min_number_px = 16;  // the slide rule's least, as on the stages
    // The axis title where it fits over the cells (a 2-dimension head has no room for it).
    const bool axis_fits =
        ImGui::CalcTextSize("dims →").x * 0.85f <= cell * static_cast<float>(mats[i]->cols());
    if (axis_fits) sp.col_axis = "dims →";
    sp.col_labels = index_labels(static_cast<int>(mats[i]->cols()), "");
    sp.scale = color_scale_for(ui.settings, ids[i], *mats[i]);
    sp.selected_row = i == 0 ? sel.query : sel.key;
    sp.cell = cell;
    sp.size = {label_w[i] + cell * mats[i]->cols(), cell * mats[i]->rows() + fs * 6.2f};
    HeatmapEvent ev = draw_heatmap(widgets(ui), sp);
    if (ev.clicked) {
      if (i == 0)
        st.select_row(ev.row);
      else if (sel.active())
        st.select_cell(sel.query, ev.row);
    }
    ImGui::EndGroup();
  }
}

// The main heatmap's labels and axis titles: queries or virtual keys down, keys, dimensions,
// heads · dimensions or RoPE's pairs across.
void label_main_heatmap(HeatmapSpec& sp, const AttentionTrace& t, StageId id, const Matrix& m) {
  // Linformer's projected keys and values: one row per virtual key.
  const bool projected = stage_kind(id) == StageKind::kKeySide;
  sp.row_labels = projected ? t.key_tokens : t.query_tokens;
  if (id == StageId::kRope)  // a row per position: its number before its token
    for (size_t p = 0; p < sp.row_labels.size(); ++p)
      sp.row_labels[p] =
          std::to_string(t.rope.q_position0 + static_cast<int>(p)) + " " + sp.row_labels[p];
  const bool scores = is_query_key(id);
  const bool concat = id == StageId::kConcat && t.d_v > 0 && m.cols() == t.num_heads * t.d_v;
  const bool rope = id == StageId::kRope;
  if (scores)
    sp.col_labels = t.key_tokens;
  else if (concat)
    for (int j = 0; j < m.cols(); ++j)
      sp.col_labels.push_back("h" + std::to_string(j / t.d_v) + " d" + std::to_string(j % t.d_v));
  else  // RoPE's angles have a column per pair of dimensions (i, i + d_k/2)
    sp.col_labels = index_labels(static_cast<int>(m.cols()), rope ? "p" : "d");
  sp.row_axis = projected ? "virtual keys ↓" : rope ? "positions ↓" : "queries ↓";
  sp.col_axis = scores   ? "keys →"
                : concat ? "heads · dimensions →"
                : rope   ? "pairs of dimensions →"
                         : "dimensions →";
}

// Presentation: the matrix takes exactly the room left under the heading, however large the text
// (it never scrolls); elsewhere readable cells even in a cramped panel, which scrolls rather than
// shrink them below a line.
void size_main_heatmap(HeatmapSpec& sp, const Matrix& m, bool room) {
  const float fs = ImGui::GetFontSize();
  if (room) {
    sp.max_cell = 0;  // cells as large as the room allows
    sp.cells_first = true;
  }
  if (room) {
    // Presentation: the matrix takes exactly the room left under the heading, however large the
    // text; the layout sizes the cells and their numbers to it (it never scrolls).
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    sp.size = {std::max(avail.x, fs * 4), std::max(avail.y, fs * 4)};
  } else if (m.rows() <= 64 && m.cols() <= 64) {
    // Readable cells even in a cramped panel: it scrolls rather than shrink them below a line.
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    sp.size = {std::max(avail.x, fs * (0.9f * m.cols() + 8)),
               std::max(avail.y, fs * (0.9f * m.rows() + 7))};
  }
}

}  // namespace

void draw_heatmap_panel(Ui& ui) {
  AppState& st = ui.state;
  const bool room = ui.presentation && !ui.panels_shown;  // presentation: the heatmap fills it
  // The heatmaps fit the panel; only when the panel is too small for readable cells (a small
  // window with large text) does it scroll instead of shrinking them further.
  // A slide's figure is laid out to its width and never scrolls sideways (the projector audit
  // checks that no text is cut).
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoScrollWithMouse |
      (ui.lesson_view.slide.on ? 0 : ImGuiWindowFlags_HorizontalScrollbar) |
      (room ? ImGuiWindowFlags_NoTitleBar : 0);
  if (!ImGui::Begin("Heatmap###heatmap", nullptr, flags)) {
    ImGui::End();
    return;
  }
  const AttentionTrace& t = st.trace();
  const StageInfo stage = st.current_stage();
  const int h = std::clamp(st.head(), 0, std::max(0, t.num_heads - 1));
  const int g = t.kv_head_of.empty() ? 0 : t.kv_head_of[h];
  draw_heatmap_heading(ui, stage, h, g, room);
  draw_stage_formula(ui, stage, room);
  draw_index_form(ui, stage.id, h, g, room);
  if (ui.editor.custom_mask)
    ImGui::TextColored(ImVec4(0.8f, 0.3f, 0.05f, 1), "%s",
                       "Custom mask: click a cell to hide or show that key for that query.");

  // One line that is always there, so the heatmap does not jump: what a stage change is doing,
  // else the question being asked, else the buttons that ask one.
  const bool moving = ui.motion.transition.active(ui.now) && ui.motion.transition.to == stage.id;
  AnimatedFrame frame;
  const bool animated = moving && st.has_trace() &&
                        animate_stage(t, ui.motion.transition.from, stage.id, h,
                                      ui.motion.transition.progress(ui.now), frame);
  // In presentation mode the narration panel shows them instead, leaving the height to the cells.
  ui.motion.caption = animated ? frame.caption : "";
  if (!room) {
    if (animated) {
      ImGui::TextColored(ImVec4(0.85f, 0.35f, 0.05f, 1), "▶ %s", frame.caption.c_str());
    } else if (ui.predict.active() && !ui.predict.revealed()) {
      ImGui::TextColored(ImVec4(0.85f, 0.35f, 0.05f, 1), "%s",
                         "? Predict, then reveal: the question is in the panel on the right.");
    } else {
      draw_predict_toolbar(ui);
    }
  }
  ImGui::Spacing();

  const Selection sel = st.selection();
  if (!st.has_trace()) {
    ImGui::End();
    return;
  }
  if (stage.id == StageId::kRope && t.rope.enabled()) {
    // Three views of the rotation: its angles (the stage's matrix, below), one query's and one
    // key's pairs before and after it, and the score that depends on the distance only.
    const int view = draw_rope_tabs(ui);
    if (view != kRopeAngles) {
      draw_rope_view(ui, view, h, g, room);
      ui.probes.main_step = stage.id;
      ImGui::End();
      return;
    }
    draw_rope_intro(t);
  }
  if (stage.id == StageId::kInputs) {
    draw_qkv_inputs(ui, h, g, room);
    ui.probes.main_step = StageId::kInputs;
    ImGui::End();
    return;
  }

  const TraceStep* step = t.find(stage.id);
  if (!step) {
    ImGui::End();
    return;
  }
  const int idx = std::min<int>(h, step->num_heads() - 1);
  const Matrix& m = t.head(*step, idx);
  HeatmapSpec sp;
  sp.id = "main";
  sp.texture_key = std::string("main-") + stage.name + "-" + std::to_string(idx);
  sp.m = &m;
  sp.matrix_name = stage.name;
  sp.hidden_are_zero = stage.id == StageId::kWeights || stage.id == StageId::kPreMix;
  label_main_heatmap(sp, t, stage.id, m);
  if (hides_keys(stage.id) && t.has_reasons(h)) sp.hidden = &t.hidden_of(h);
  sp.scale = color_scale_cached(ui, sp.texture_key, stage.id, m);
  sp.selected_row = sel.query;
  sp.selected_col = is_query_key(stage.id) ? sel.key : -1;
  sp.row_stats = stage.id == StageId::kWeights;
  size_main_heatmap(sp, m, room);
  // The lesson's overlays: hidden cells of a question, cells an edit changed, a stage change.
  Prediction& pred = ui.predict;
  const bool asking = pred.active() && !pred.revealed();
  const QuestionSecret& secret = ui.secret;
  if (asking || secret.conceals_stage(stage.id))
    sp.concealed = [&pred, &secret, id = stage.id, idx](int i, int j) {
      return pred.conceals(id, idx, i, j) || secret.conceals(id, idx, i, j);
    };
  if (secret.hides_anything())
    sp.hides_label = [&secret](const std::string& label) { return secret.tells(label); };
  if (ui.motion.changes.active(ui.now))
    sp.flash = [&ui, id = stage.id, idx](int i, int j) {
      return ui.motion.changes.strength(id, idx, i, j, ui.now);
    };
  if (animated) {
    sp.anim = &frame;
    const Matrix* from = nullptr;
    if (const TraceStep* fs_step = t.find(ui.motion.transition.from))
      from = &t.head(*fs_step, std::min(idx, fs_step->num_heads() - 1));
    if (from) sp.anim_from_scale = color_scale_for(ui.settings, ui.motion.transition.from, *from);
  }
  if (asking && pred.question().kind == PredictKind::kPick) {  // the pick so far
    sp.selected_row = pred.question().row;
    sp.selected_col = pred.guess_col();
  }
  HeatmapEvent ev = draw_heatmap(widgets(ui), sp);
  draw_lesson_highlights(ui, stage.id);
  if (asking) {
    if (pred.question().kind == PredictKind::kPick) {
      if (ev.picked_col >= 0) pred.guess_pick(ev.picked_col);
      if (ev.clicked && ev.col >= 0) pred.guess_pick(ev.col);
    }
  } else {
    handle_click(ui, stage.id, ev);
  }
  ui.probes.main_scale = sp.scale;
  ui.probes.main_step = stage.id;
  ImGui::End();
}

}  // namespace attn
