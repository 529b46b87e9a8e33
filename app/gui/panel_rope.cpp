// The rope stage's views beside its angles: one query's and one key's pairs of dimensions before
// and after the rotation, and the distance view — the same q and k placed at every pair of
// positions, whose score is one number per diagonal. The numbers come from attention/rope.h.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attention/rope.h"
#include "gui/heatmap_widget.h"
#include "gui/ui.h"

namespace attn {
namespace {

const char* const kViewNames[kRopeViewCount] = {"Angles p·θᵢ", "q and k turned",
                                                "Same distance, same score"};
// The same, when the panel is narrow for its font (a projector's large type).
const char* const kShortNames[kRopeViewCount] = {"Angles", "q, k turned", "Distance"};

// Narrow for the font: the views drop their longer sentences and decimals.
bool compact() { return ImGui::GetContentRegionAvail().x < ImGui::GetFontSize() * 34; }

std::string fmt(double x, int decimals = 4) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s = s.substr(1);
  if (s[0] == '-') s = "−" + s.substr(1);  // the typographic minus, as the narration writes it
  return s;
}

const std::vector<std::string>& key_names(const AttentionTrace& t) {
  return t.key_tokens.empty() ? t.query_tokens : t.key_tokens;
}

std::string pair_text(double x, double y, int decimals) {
  return "(" + fmt(x, decimals) + ", " + fmt(y, decimals) + ")";
}

std::string token_item(const std::vector<std::string>& tokens, int i) {
  return std::to_string(i) + "  " + (i < static_cast<int>(tokens.size()) ? tokens[i] : "");
}

// A combo over the rows (queries or keys), by index and token.
bool row_combo(const char* label, const std::vector<std::string>& tokens, int n, int& row,
               float width) {
  bool changed = false;
  ImGui::SetNextItemWidth(width);
  if (ImGui::BeginCombo(label, token_item(tokens, row).c_str())) {
    for (int i = 0; i < n; ++i) {
      const bool selected = i == row;
      if (ImGui::Selectable(token_item(tokens, i).c_str(), selected)) {
        row = i;
        changed = true;
      }
      if (selected) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return changed;
}

// The query and key the views use: the selection, else the last query and the key before it.
void focus(const AttentionTrace& t, const Selection& sel, int& i, int& j) {
  i = sel.query >= 0 ? std::min(sel.query, t.n_q - 1) : t.n_q - 1;
  const int pq = t.rope.q_position0 + i;
  j = sel.key >= 0 ? sel.key : std::max(0, pq - 1 - t.rope.k_position0);
  j = std::clamp(j, 0, t.n_k - 1);
}

// The query and key pickers, on one line when they fit.
void draw_pickers(Ui& ui, int& i, int& j) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  const float w = compact() ? fs * 6.5f : fs * 9;
  if (row_combo("query##rope", t.query_tokens, t.n_q, i, w)) st.select_cell(i, j);
  same_line_if_fits(w + ImGui::CalcTextSize("key").x + fs);
  if (row_combo("key##rope", key_names(t), t.n_k, j, w)) st.select_cell(i, j);
}

void draw_turned(Ui& ui, int h, int g) {
  const AttentionTrace& t = ui.state.trace();
  const RopeInputs& r = t.rope;
  int i = 0, j = 0;
  focus(t, ui.state.selection(), i, j);
  draw_pickers(ui, i, j);
  const int pq = r.q_position0 + i, pk = r.k_position0 + j;
  const Matrix& qb = r.q_before[static_cast<size_t>(h)];
  const Matrix& kb = r.k_before[static_cast<size_t>(g)];
  const std::vector<RopePair> qp = rope_pairs(qb, i, pq, r.inv_freq);
  const std::vector<RopePair> kp = rope_pairs(kb, j, pk, r.inv_freq);
  const int half = static_cast<int>(qp.size());
  const bool small = compact();
  ImGui::PushTextWrapPos(0);
  if (!small)
    ImGui::TextWrapped(
        "Pair i is dimensions (i, i + %d); at position p it turns by the angle a = p·θᵢ. q "
        "stands at %d, k at %d.",
        half, pq, pk);
  ImGui::PushFont(ui.fonts.mono);
  const char* xs = "x' = x cos a − y sin a";
  const char* ys = "y' = y cos a + x sin a";
  ImGui::TextUnformatted(xs);  // the two on one line when they fit, never broken inside
  const float gap = ImGui::GetFontSize() * 1.5f;
  if (ImGui::GetItemRectMax().x + gap + ImGui::CalcTextSize(ys).x <=
      ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
    ImGui::SameLine(0, gap);
  ImGui::TextUnformatted(ys);
  ImGui::PopFont();
  ImGui::PopTextWrapPos();
  // Two rows per pair, q's and k's: narrow enough for a projector's large type (which also drops
  // the θᵢ column, shown in the angles view, and a decimal).
  const ImGuiTableFlags tf = ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit |
                             ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX;
  const int decimals = small ? 2 : 3;
  const char* headers[] = {"pair", "θᵢ", "", "a = p·θᵢ", "before (x, y)", "after (x', y')"};
  // The room left, less the spacing ImGui keeps after an item (else the panel would scroll).
  const ImVec2 size(0, std::max(ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y,
                                ImGui::GetFontSize() * 6));
  const ImU32 shade = ImGui::GetColorU32(ImGuiCol_TableRowBgAlt);
  if (ImGui::BeginTable("rope-pairs", small ? 5 : 6, tf, size)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    for (const char* hd : headers)
      if (!(small && std::string(hd) == "θᵢ")) ImGui::TableSetupColumn(hd);
    ImGui::TableHeadersRow();
    ImGuiListClipper clip;
    clip.Begin(2 * half);
    while (clip.Step())
      for (int row = clip.DisplayStart; row < clip.DisplayEnd; ++row) {
        const int p = row / 2;
        const bool is_q = row % 2 == 0;
        const RopePair& a = (is_q ? qp : kp)[static_cast<size_t>(p)];
        ImGui::TableNextRow();
        if (p % 2) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, shade);
        ImGui::TableNextColumn();
        if (is_q) ImGui::Text("%d", p);
        if (!small) {
          ImGui::TableNextColumn();
          if (is_q) ImGui::TextUnformatted(fmt(a.theta).c_str());
        }
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(is_q ? "q" : "k");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(fmt(a.angle, decimals).c_str());
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", pair_text(a.x0, a.x1, decimals).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(pair_text(a.y0, a.y1, decimals).c_str());
      }
    ImGui::EndTable();
  }
}

// The distance view's long sentence and its note on the outlined cell.
const char* const kDistanceText =
    "Row a, column b: RoPE(q, a) · RoPE(k, b), the query's q placed at position a and the key's "
    "k at b (both before RoPE). Each diagonal holds one number: the score depends on the "
    "distance a − b only.";
const char* const kOutlinedWhere = " Outlined: where the two stand.";
const char* const kOutlinedFirst = " Outlined: the first cell at their distance.";

// The words and numbers beside the distance view's matrix, wrapped at local x `wrap`: what a cell
// is, the score at the two tokens' own distance at several places, and the score without RoPE.
void draw_distance_text(Ui& ui, const Matrix& m, int i, int j, int h, int g, bool small,
                        float wrap) {
  const AttentionTrace& t = ui.state.trace();
  const RopeInputs& r = t.rope;
  const int n = static_cast<int>(m.rows());
  const int pq = r.q_position0 + i, pk = r.k_position0 + j, d = pq - pk;
  const Matrix& qb = r.q_before[static_cast<size_t>(h)];
  const Matrix& kb = r.k_before[static_cast<size_t>(g)];
  const char* outlined = pq < n && pk < n ? kOutlinedWhere : std::abs(d) < n ? kOutlinedFirst : "";
  const std::string plain = fmt(rope_score(qb, i, 0, kb, j, 0, r.inv_freq), small ? 2 : 4);
  auto entry = [&](int p) {  // key at p, query at p + d
    return "(" + std::to_string(p + d) + ", " + std::to_string(p) + ") → " +
           fmt(rope_score(qb, i, p + d, kb, j, p, r.inv_freq), small ? 2 : 4);
  };
  const int base = std::max(0, -d);
  ImGui::PushTextWrapPos(wrap);
  if (small) {
    // A projector's large type in a narrow column: the lines that fit, most telling first —
    // the two where they stand, then far along, then without RoPE, then the first place.
    const float w = std::max(wrap - ImGui::GetCursorPosX(), ImGui::GetFontSize());
    const float line = ImGui::GetTextLineHeightWithSpacing();
    float left = ImGui::GetContentRegionAvail().y;
    const char* axes = "Row a: q at position a. Column b: k at b. One number per diagonal:";
    const char* brief = "One number per diagonal:";
    const float axes_h = ImGui::CalcTextSize(axes, nullptr, false, w).y;
    const char* head = axes_h + line * 5 <= left ? axes : brief;
    ImGui::TextWrapped("%s", head);
    left -= ImGui::GetItemRectSize().y + ImGui::GetStyle().ItemSpacing.y;
    ImGui::PushFont(ui.fonts.mono);
    // One entry a line, never wrapped (a wrap would break a number at its decimal point and
    // push the last line out of the panel): without the spaces when the column is narrow.
    ImGui::PushTextWrapPos(-1.0f);
    auto line_of = [&](int p) {
      std::string e = entry(p);
      if (ImGui::CalcTextSize(e.c_str()).x <= w) return e;
      e.erase(std::remove(e.begin(), e.end(), ' '), e.end());
      return e;
    };
    ImGui::Text("a − b = %d", d);
    left -= line;
    const bool far_fits = left >= line * 2, plain_fits = left >= line * 3,
               base_fits = left >= line * 4 && base != pk;
    if (base_fits) ImGui::TextUnformatted(line_of(base).c_str());
    ImGui::TextUnformatted(line_of(pk).c_str());
    if (far_fits) ImGui::TextUnformatted(line_of(pk + 50).c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    if (plain_fits) {
      const std::string t = "Without RoPE: " + plain;
      const std::string brief_plain = "No RoPE: " + plain;
      ImGui::PushTextWrapPos(-1.0f);
      ImGui::TextUnformatted(ImGui::CalcTextSize(t.c_str()).x <= w ? t.c_str()
                                                                   : brief_plain.c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::TextWrapped("%s%s", kDistanceText, outlined);
  ImGui::Spacing();
  // The same distance at several places: key positions p with the query at p + d — the first
  // two, where the two stand, far along. One entry a line.
  std::vector<int> at = {base, base + 1, pk, pk + 50};
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  ImGui::PushFont(ui.fonts.mono);
  ImGui::Text("a − b = %d:", d);
  for (int p : at) ImGui::TextUnformatted(entry(p).c_str());
  ImGui::PopFont();
  ImGui::Spacing();
  // The identity, checked on the matrix's own numbers (float rounding at most).
  const double spread = rope_diagonal_spread(m);
  if (spread > 0) ImGui::TextWrapped("Along a diagonal: within %.0e (float).", spread);
  // The number on a line of its own: a wrap never breaks it at its decimal point.
  ImGui::TextWrapped("Without RoPE, wherever the two stand:");
  ImGui::PushFont(ui.fonts.mono);
  ImGui::Text("q · k = %s", plain.c_str());
  ImGui::PopFont();
  ImGui::PopTextWrapPos();
}

void draw_distance(Ui& ui, int h, int g, bool room) {
  const AttentionTrace& t = ui.state.trace();
  const RopeInputs& r = t.rope;
  const float fs = ImGui::GetFontSize();
  int i = 0, j = 0;
  focus(t, ui.state.selection(), i, j);
  draw_pickers(ui, i, j);
  const int pq = r.q_position0 + i, pk = r.k_position0 + j, d = pq - pk;
  const Matrix& qb = r.q_before[static_cast<size_t>(h)];
  const Matrix& kb = r.k_before[static_cast<size_t>(g)];
  // Positions 0 … n − 1: enough for where the two stand, at most a readable dozen (fewer, and
  // larger, on a narrow panel).
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float height = room ? std::max(avail.y - ImGui::GetStyle().ItemSpacing.y, fs * 4)
                            : std::max(avail.y, fs * (0.9f * 12 + 7));
  // The words' column beside the matrix: the long form when it fits there, else the short one
  // (a projector's large type), with fewer and larger cells.
  const float wide_w = std::min(avail.x * 0.6f, height + fs * 6);
  const float column = avail.x - wide_w - fs;
  const float long_h = ImGui::CalcTextSize((std::string(kDistanceText) + kOutlinedFirst).c_str(),
                                           nullptr, false, std::max(column, fs))
                           .y +
                       ImGui::GetTextLineHeightWithSpacing() * 8;
  const bool small = compact() || long_h > height;
  const int n = std::clamp(std::max(std::abs(d) + 4, std::max(pq, pk) + 1), 6, small ? 8 : 12);
  const Matrix m = rope_distance_scores(qb, i, kb, j, r.inv_freq, n);

  HeatmapSpec sp;
  sp.id = "rope-distance";
  sp.texture_key =
      "rope-distance-" + std::to_string(h) + "-" + std::to_string(i) + "-" + std::to_string(j);
  sp.m = &m;
  sp.matrix_name = "q·k at positions (a, b)";
  for (int p = 0; p < n; ++p) {
    sp.row_labels.push_back(std::to_string(p));
    sp.col_labels.push_back(std::to_string(p));
  }
  sp.row_axis = "q at position a ↓";
  sp.col_axis = "k at position b →";
  sp.scale = color_scale_for(ui.settings, StageId::kScores, m);
  // Where the two stand in the text, else the first cell at their distance.
  if (pq < n && pk < n) {
    sp.selected_row = pq;
    sp.selected_col = pk;
  } else if (std::abs(d) < n) {
    sp.selected_row = std::max(d, 0);
    sp.selected_col = std::max(-d, 0);
  }
  // The matrix is square: it takes the height on the left, the words the width beside it.
  // A narrow panel leaves out the colour bar: the diagonals' stripes say it without numbers.
  sp.color_bar = !small;
  const float width =
      std::min(avail.x * (small ? 0.55f : 0.6f), height + fs * (small ? 3.5f : 6.0f));
  if (room) {  // presentation: the room left, never scrolled
    sp.max_cell = 0;
    sp.cells_first = true;
  }
  sp.size = {width, height};
  const float x0 = ImGui::GetCursorPosX();
  draw_heatmap(widgets(ui), sp);
  ImGui::SameLine(0, fs);
  ImGui::BeginGroup();
  draw_distance_text(ui, m, i, j, h, g, small, x0 + avail.x);
  ImGui::EndGroup();
}

}  // namespace

int draw_rope_tabs(Ui& ui) {
  // The long names when all three fit on the line, else the short ones.
  const ImGuiStyle& style = ImGui::GetStyle();
  float wide = 0;
  for (const char* name : kViewNames)
    wide += ImGui::CalcTextSize(name).x + style.FramePadding.x * 2 + style.ItemInnerSpacing.x;
  const char* const* names = wide <= ImGui::GetContentRegionAvail().x ? kViewNames : kShortNames;
  if (ImGui::BeginTabBar("rope-views")) {
    for (int v = 0; v < kRopeViewCount; ++v) {
      const ImGuiTabItemFlags f = ui.rope.request == v ? ImGuiTabItemFlags_SetSelected : 0;
      // The id stays the same whichever name shows, so the tab stays selected.
      const std::string label = std::string(names[v]) + "###rope-view-" + std::to_string(v);
      if (ImGui::BeginTabItem(label.c_str(), nullptr, f)) {
        ui.rope.view = v;
        ImGui::EndTabItem();
      }
    }
    ui.rope.request = -1;
    ImGui::EndTabBar();
  }
  return ui.rope.view;
}

void draw_rope_view(Ui& ui, int view, int h, int g, bool room) {
  const AttentionTrace& t = ui.state.trace();
  if (!t.rope.enabled() || t.n_q < 1 || t.n_k < 1) return;
  h = std::clamp(h, 0, static_cast<int>(t.rope.q_before.size()) - 1);
  g = std::clamp(g, 0, static_cast<int>(t.rope.k_before.size()) - 1);
  if (view == kRopeTurned)
    draw_turned(ui, h, g);
  else if (view == kRopeDistance)
    draw_distance(ui, h, g, room);
}

}  // namespace attn
