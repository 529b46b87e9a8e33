// Hand-editing the inputs: tokens (rename, add, remove), dimensions, and the Q/K/V tables — or, in
// projection mode, X and the W matrices with Q/K/V derived. Every change goes through AppState,
// which refuses bad values with a message and keeps the old one.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "attention/format.h"
#include "gui/panel_lm.h"
#include "gui/ui.h"

namespace attn {
namespace {

constexpr int kMaxShownCols = 48;  // ImGui 1.86 tables hold at most 64 columns

// A text cell that keeps its own buffer while it is being typed into and commits on leaving it.
// Returns true (with the text) on the frame the edit is committed.
bool text_cell(Ui& ui, const std::string& key, const std::string& shown, float width,
               std::string& committed) {
  ImGui::SetNextItemWidth(width);
  const bool editing = ui.editor.editing_key == key;
  std::string temp = shown;
  std::string& buf = editing ? ui.editor.buffer : temp;
  ImGui::InputText(("##" + key).c_str(), &buf, ImGuiInputTextFlags_AutoSelectAll);
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  ui.editor.cell_rects[key] = {a.x, a.y, b.x, b.y};
  if (ImGui::IsItemActivated()) {
    ui.editor.editing_key = key;
    ui.editor.buffer = buf;
  }
  if (ImGui::IsItemDeactivated() && editing) {
    const bool changed = ImGui::IsItemDeactivatedAfterEdit();
    committed = ui.editor.buffer;
    ui.editor.editing_key.clear();
    return changed;
  }
  return false;
}

void matrix_table(Ui& ui, Tensor t, int head, const std::vector<std::string>& row_labels,
                  bool editable) {
  AppState& st = ui.state;
  const Matrix* m = st.tensor(t, head);
  if (!m) return;
  const int rows = static_cast<int>(m->rows());
  const int cols = std::min<int>(static_cast<int>(m->cols()), kMaxShownCols);
  const float fs = ImGui::GetFontSize();
  const float cell_w = fs * 3.3f;
  // Small tables take their natural height; long ones scroll (and only visible rows are built).
  const bool scroll = rows > 10 || fs * 4 + cols * (cell_w + 10) > ImGui::GetContentRegionAvail().x;
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row_h = ImGui::GetFrameHeight() + 2 * style.CellPadding.y;
  const float height = scroll ? std::min(fs * 16, (rows + 1.2f) * row_h + style.ScrollbarSize) : 0;
  ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (scroll) flags |= ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY;
  std::string id = std::string(tensor_name(t)) + "-" + std::to_string(head);
  if (!ImGui::BeginTable(id.c_str(), cols + 1, flags, {0, height})) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, fs * 3.6f);
  for (int c = 0; c < cols; ++c)
    ImGui::TableSetupColumn(std::to_string(c).c_str(), ImGuiTableColumnFlags_WidthFixed, cell_w);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(rows);
  while (clipper.Step())
    for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r < static_cast<int>(row_labels.size()) ? row_labels[r].c_str()
                                                                     : std::to_string(r).c_str());
      for (int c = 0; c < cols; ++c) {
        ImGui::TableNextColumn();
        const float x = (*m)(r, c);
        ImGui::PushID(r * 4096 + c);
        if (!editable) {
          ImGui::TextUnformatted(format_fixed(x, 3, true).c_str());
        } else if (ui.editor.drag) {
          float v = x;
          ImGui::SetNextItemWidth(-1);
          if (ImGui::DragFloat("##d", &v, 0.01f, 0, 0, "%.3f"))
            ui.defer([&st, t, head, r, c, v] { st.set_value(t, head, r, c, v, true); });
          if (ImGui::IsItemDeactivated()) ui.defer([&st] { st.end_gesture(); });
        } else {
          std::string text;
          const std::string key = id + ":" + std::to_string(r) + ":" + std::to_string(c);
          if (text_cell(ui, key, format_value(x), -1, text))
            ui.defer([&st, t, head, r, c, text] { st.set_value_text(t, head, r, c, text); });
        }
        ImGui::PopID();
      }
    }
  ImGui::EndTable();
  if (m->cols() > cols)
    ImGui::TextDisabled("showing %d of %d columns", cols, static_cast<int>(m->cols()));
}

void token_table(Ui& ui, Side side, const char* title) {
  AppState& st = ui.state;
  const Scenario& s = st.scenario();
  const std::vector<std::string>& toks = side == Side::kKey ? s.keys() : s.query_tokens;
  const float fs = ImGui::GetFontSize();
  ImGui::PushID(title);
  ImGui::TextUnformatted(title);
  ImGui::SameLine();
  if (ImGui::SmallButton("+ add")) ui.defer([&st, side] { st.add_token(side); });
  const int n = static_cast<int>(toks.size());
  const bool scroll = n > 8;
  const float height = scroll ? fs * 12 : 0;
  if (ImGui::BeginTable("tokens", 3, ImGuiTableFlags_RowBg | (scroll ? ImGuiTableFlags_ScrollY : 0),
                        {0, height})) {
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, fs * 2);
    ImGui::TableSetupColumn("token", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, fs * 1.6f);
    ImGuiListClipper clipper;
    clipper.Begin(n);
    while (clipper.Step())
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        ImGui::PushID(i);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%d", i);
        ImGui::TableNextColumn();
        std::string text;
        if (text_cell(ui, std::string(title) + ":tok:" + std::to_string(i), toks[i], -1, text))
          ui.defer([&st, side, i, text] { st.rename_token(side, i, text); });
        ImGui::TableNextColumn();
        if (ImGui::SmallButton("×")) ui.defer([&st, side, i] { st.remove_token(side, i); });
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Remove this token");
        ImGui::PopID();
      }
    ImGui::EndTable();
  }
  ImGui::PopID();
}

// An integer field that applies on Enter or its +/- buttons (not on every keystroke, so typing
// "16" never passes through a 1-column state).
float dim_input_width(const char* label) {
  return ImGui::GetFontSize() * 5.5f + ImGui::GetStyle().ItemInnerSpacing.x +
         ImGui::CalcTextSize(label).x;
}

// The W matrices still only copy blocks of X (as switching to projection mode made them).
bool selector_projection(const ProjectionSpec& p) {
  auto selector = [](const Matrix& w) {
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      int ones = 0;
      for (Eigen::Index r = 0; r < w.rows(); ++r) {
        if (w(r, c) == 1.0f)
          ++ones;
        else if (w(r, c) != 0.0f)
          return false;
      }
      if (ones != 1) return false;
    }
    return true;
  };
  for (const auto* set : {&p.w_q, &p.w_k, &p.w_v})
    for (const Matrix& w : *set)
      if (!selector(w)) return false;
  return !p.w_q.empty();
}

void dim_input(const char* label, int value, const std::function<void(int)>& apply) {
  int v = value;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.5f);
  if (ImGui::InputInt(label, &v, 1, 4, ImGuiInputTextFlags_EnterReturnsTrue) && v != value)
    apply(v);
}

}  // namespace

void draw_editor_panel(Ui& ui) {
  AppState& st = ui.state;
  const Scenario& s = st.scenario();
  const AttentionTrace& t = st.trace();
  ui.editor.cell_rects.clear();
  ImGui::BeginChild("editor", {0, 0}, false);
  draw_lm_head_note(ui);

  int mode = s.use_projection ? 1 : 0;
  if (ImGui::RadioButton("Q, K, V", &mode, 0)) ui.defer([&st] { st.set_projection_mode(false); });
  same_line_if_fits(radio_width("X and W (projection)"));
  if (ImGui::RadioButton("X and W (projection)", &mode, 1))
    ui.defer([&st] { st.set_projection_mode(true); });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Projection mode: each token is an embedding row of X; Q = X·W_Q, K = X·W_K, "
      "V = X·W_V are derived, one W per head.");
  if (s.use_projection && selector_projection(s.projection)) {
    // Said on screen, not in a tooltip: these blocks are a bookkeeping device, not what a
    // trained model's projections look like.
    const int H = static_cast<int>(s.projection.w_q.size());
    const int G = static_cast<int>(s.projection.w_k.size());
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.55f, 0.32f, 0.02f, 1));
    if (!ui.settings.light_theme)
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.98f, 0.72f, 0.35f, 1));
    ImGui::TextWrapped(
        "What these X and W are: to keep every number, X was built as the Q, K and V tables side "
        "by side, X = [Q | K | V] (d_model = %d = %d + %d + %d), and each W is a block of 0s and "
        "1s that copies its own columns back out, so Q = X·W_Q is the Q you had. A trained "
        "model's W are dense and learned from real token embeddings: edit X or a W, or press "
        "Randomise, and Q, K and V change together.",
        static_cast<int>(s.projection.x.cols()), H * t.d_k, G * t.d_k, G * t.d_v);
    ImGui::PopStyleColor(ui.settings.light_theme ? 1 : 2);
  }

  int drag = ui.editor.drag ? 1 : 0;
  if (ImGui::RadioButton("type values", &drag, 0)) ui.editor.drag = false;
  same_line_if_fits(radio_width("drag values"));
  if (ImGui::RadioButton("drag values", &drag, 1)) ui.editor.drag = true;

  // Dimensions.
  if (s.use_projection) {
    dim_input("d_model", static_cast<int>(s.projection.x.cols()),
              [&](int v) { ui.defer([&st, v] { st.set_d_model(v); }); });
  }
  dim_input("d_k", t.d_k, [&](int v) { ui.defer([&st, v] { st.set_d_k(v); }); });
  same_line_if_fits(dim_input_width("d_v"));
  dim_input("d_v", t.d_v, [&](int v) { ui.defer([&st, v] { st.set_d_v(v); }); });

  if (ImGui::Button("Randomise"))
    ui.defer([&st, seed = ui.editor.random_seed] { st.randomise(seed); });
  const float fs = ImGui::GetFontSize();
  same_line_if_fits(fs * 5 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("seed").x);
  int seed = static_cast<int>(ui.editor.random_seed);
  ImGui::SetNextItemWidth(fs * 5);
  if (ImGui::InputInt("seed", &seed, 0))
    ui.editor.random_seed = static_cast<unsigned>(std::max(0, seed));
  if (ImGui::Button("Reset")) ui.defer([&st] { st.reset_to_origin(); });
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Back to %s as opened (undoable)", st.origin().c_str());
  same_line_if_fits(button_width("Undo"));
  ImGui::BeginDisabled(!st.can_undo());
  if (ImGui::Button("Undo")) ui.defer([&st] { st.undo(); });
  ImGui::EndDisabled();
  same_line_if_fits(button_width("Redo"));
  ImGui::BeginDisabled(!st.can_redo());
  if (ImGui::Button("Redo")) ui.defer([&st] { st.redo(); });
  ImGui::EndDisabled();
  ImGui::Separator();

  // Tokens.
  if (st.cross_attention()) {
    token_table(ui, Side::kQuery, "Query tokens");
    token_table(ui, Side::kKey, "Key/value tokens");
  } else {
    token_table(ui, Side::kQuery, "Tokens");
  }
  ImGui::Separator();

  // Tensors, with a head selector when there are several.
  const std::vector<std::string>& q_rows = s.query_tokens;
  const std::vector<std::string> k_rows = s.keys();
  auto section = [&](Tensor tensor, const std::vector<std::string>& rows, const char* help) {
    const int heads = st.tensor_heads(tensor);
    if (heads == 0) return;
    std::string title = tensor_name(tensor);
    if (const Matrix* m = st.tensor(tensor, 0))
      title += "   (" + std::to_string(m->rows()) + " × " + std::to_string(m->cols()) +
               (heads > 1 ? ", " + std::to_string(heads) + " heads)" : ")");
    if (!ImGui::CollapsingHeader((title + "###" + tensor_name(tensor)).c_str(),
                                 ImGuiTreeNodeFlags_DefaultOpen))
      return;
    ImGui::PushID(tensor_name(tensor));
    int h = std::min(ui.editor.tensor_head, heads - 1);
    if (heads > 1) {
      if (slider_int_beside("##head", "head ", &h, 0, heads - 1, ImGui::GetFontSize() * 6))
        ui.editor.tensor_head = h;
    }
    text_disabled_wrapped(help);
    matrix_table(ui, tensor, std::max(h, 0), rows, true);
    ImGui::PopID();
  };
  if (!s.use_projection) {
    section(Tensor::kQ, q_rows, "one row per query token");
    section(Tensor::kK, k_rows, "one row per key token");
    section(Tensor::kV, k_rows, "one row per key token");
  } else {
    section(Tensor::kX, q_rows, "token embeddings, one row per token");
    section(Tensor::kXkv, k_rows, "key/value-side token embeddings");
    std::vector<std::string> dims;
    for (int i = 0; i < static_cast<int>(s.projection.x.cols()); ++i)
      dims.push_back(std::to_string(i));
    section(Tensor::kWq, dims, "d_model × d_k per query head");
    section(Tensor::kWk, dims, "d_model × d_k per key/value head");
    section(Tensor::kWv, dims, "d_model × d_v per key/value head");
    std::vector<std::string> o_rows;
    for (int i = 0; i < t.num_heads * t.d_v; ++i) o_rows.push_back(std::to_string(i));
    section(Tensor::kWo, o_rows, "(H·d_v) × d_out output projection");
    // The derived Q, K, V, read-only, from the trace.
    if (ImGui::CollapsingHeader("Derived Q, K, V (read-only)")) {
      for (StageId id : {StageId::kQ, StageId::kK, StageId::kV}) {
        const TraceStep* step = t.find(id);
        if (!step || step->heads.empty()) continue;
        const Matrix& m = step->heads[0];
        ImGui::Text("%s = %s", stage_name(id), step->formula.c_str());
        for (int r = 0; r < std::min<int>(static_cast<int>(m.rows()), 12); ++r) {
          std::string line;
          for (int c = 0; c < std::min<int>(static_cast<int>(m.cols()), 8); ++c)
            line += format_fixed(m(r, c), 3, true) + "  ";
          ImGui::TextDisabled("  %s", line.c_str());
        }
      }
    }
  }
  ImGui::EndChild();
}

}  // namespace attn
