// The FlashAttention window: one query row's softmax and weighted sum computed the way
// FlashAttention does, block of keys by block of keys. A block-size control and Previous/Next
// step through the blocks; the strip of keys shows which block is being read, and the table the
// running maximum m, the running sum ℓ, the rescaling factor and the accumulator after each
// block, ending on acc / ℓ beside the standard softmax's output. The numbers come from
// core/explain/online_softmax.h, the same as `explain --online-softmax`.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attention/format.h"
#include "explain/explain_text.h"
#include "explain/online_softmax.h"
#include "gui/ui.h"

namespace attn {

namespace {

const ImVec4 kAccent(0.85f, 0.35f, 0.05f, 1);

std::string num(double x, int precision) { return explain_text::compact(x, precision, true); }

std::string vec(const std::vector<double>& v, int precision) {
  std::vector<std::string> e;
  for (double x : v) e.push_back(num(x, precision));
  return explain_text::vector_text(e, explain_text::symbols(true), 6);
}

std::string token_of(const std::vector<std::string>& tokens, int i) {
  return i >= 0 && i < static_cast<int>(tokens.size()) ? printable_text(tokens[i])
                                                       : std::to_string(i);
}

// The strip of keys: one box per key with its token above and x_j inside; the block being read
// framed in the accent colour, blocks already read shaded, hidden keys marked −∞.
void draw_key_strip(Ui& ui, const AttentionTrace& t, const OnlineSoftmaxWalk& w, int done,
                    int precision) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const float avail = ImGui::GetContentRegionAvail().x;
  const int n = t.n_k;
  const float cell = std::clamp(avail / std::max(n, 1), 4.0f, fs * 5.5f);
  const bool labels = cell >= fs * 2.2f;
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float label_h = labels ? fs * 1.3f : 0.0f;
  const float box_h = labels ? fs * 2.0f : fs * 1.2f;
  const bool light = ui.settings.light_theme;
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 read = light ? IM_COL32(205, 222, 245, 255) : IM_COL32(45, 70, 110, 255);
  const ImU32 current = light ? IM_COL32(252, 214, 170, 255) : IM_COL32(120, 70, 20, 255);
  const ImU32 accent = ImGui::GetColorU32(kAccent);
  const int cur = done > 0 ? done - 1 : -1;  // the block just read
  for (int j = 0; j < n; ++j) {
    const int b = j / w.block_size;
    const ImVec2 a{o.x + j * cell, o.y + label_h}, z{a.x + cell - 1, a.y + box_h};
    ImU32 fill = 0;
    if (b == cur)
      fill = current;
    else if (b < cur)
      fill = read;
    if (fill) dl->AddRectFilled(a, z, fill);
    dl->AddRect(a, z, faint);
    if (labels) {
      std::string tok = token_of(t.key_tokens, j);
      while (ImGui::CalcTextSize(tok.c_str()).x > cell - 4 && tok.size() > 1) tok.pop_back();
      dl->AddText({a.x + 2, o.y}, text, tok.c_str());
      const double x = w.x[static_cast<size_t>(j)];
      std::string v = std::isinf(x) ? "−∞" : num(x, precision);
      const ImVec2 sz = ImGui::CalcTextSize(v.c_str());
      if (sz.x <= cell - 4)
        dl->AddText({a.x + (cell - sz.x) * 0.5f, a.y + (box_h - sz.y) * 0.5f},
                    std::isinf(x) ? faint : text, v.c_str());
    }
  }
  // Block boundaries and the frame of the block being read.
  for (int j = w.block_size; j < n; j += w.block_size)
    dl->AddLine({o.x + j * cell - 1, o.y + label_h - 3},
                {o.x + j * cell - 1, o.y + label_h + box_h + 3}, text, 2.0f);
  if (cur >= 0) {
    const OnlineBlock& b = w.blocks[static_cast<size_t>(cur)];
    dl->AddRect({o.x + b.first * cell - 1, o.y + label_h - 2},
                {o.x + b.last * cell, o.y + label_h + box_h + 2}, accent, 3.0f, 0, 3.0f);
  }
  ImGui::Dummy({std::min(avail, n * cell), label_h + box_h + 6});
}

// Places the window (when it opens, and again when the main window changes size (F11, a
// projector's resolution) or the layout is reset, so it never hangs off the screen) and begins
// it. False when it is collapsed, after ending it.
bool begin_flash_window(Ui& ui) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  const ImGuiCond cond =
      ui.layout.reset || vp->Size.x != ui.flash.viewport.x || vp->Size.y != ui.flash.viewport.y
          ? ImGuiCond_Always
          : ImGuiCond_Appearing;
  ui.flash.viewport = vp->Size;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.08f, vp->Pos.y + top + vp->Size.y * 0.06f},
                          cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.84f, vp->Size.y * 0.84f - top}, cond);
  if (!ImGui::Begin("FlashAttention: the online softmax, block by block###flash", &ui.flash.open,
                    ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return false;
  }
  return true;
}

// The number of query rows there are to walk, or 0 after saying why there is nothing to walk
// (no scenario, no softmax, or variants that change what surrounds the softmax).
int walkable_rows(Ui& ui) {
  AppState& st = ui.state;
  if (!st.has_trace()) {
    ImGui::TextDisabled("No scenario loaded yet.");
    return 0;
  }
  const AttentionTrace& t = st.trace();
  const int rows = t.find(StageId::kWeights) && !t.step(StageId::kWeights).heads.empty()
                       ? static_cast<int>(t.step(StageId::kWeights).heads[0].rows())
                       : 0;
  if (rows == 0 || t.n_k == 0) {
    ImGui::TextDisabled("This trace has no softmax to step through.");
    return 0;
  }
  if (t.variants.any()) {
    ImGui::TextWrapped(
        "FlashAttention's online softmax is shown for plain attention. This scenario uses "
        "Linformer or Multi-Token Attention, which change the scores or the weights around the "
        "softmax: open a scenario without them to step through the blocks.");
    if (ImGui::Button("Open the fear-is-the example"))
      ui.defer([&st] { st.load_example("fear-is-the"); });
    return 0;
  }
  return rows;
}

// The controls above the walk: which query, the head, and the block size.
void draw_query_and_block(Ui& ui, const AttentionTrace& t, int rows, int h) {
  ImGui::TextUnformatted("Query");
  ImGui::SameLine();
  const std::string qlabel =
      std::to_string(ui.flash.query) + " \"" + token_of(t.query_tokens, ui.flash.query) + "\"";
  ImGui::SetNextItemWidth(std::min(ImGui::GetFontSize() * 10, ImGui::GetContentRegionAvail().x));
  if (ImGui::BeginCombo("##flash-query", qlabel.c_str())) {
    for (int i = t.first_row; i < t.first_row + rows && i < t.first_row + 512; ++i) {
      const std::string l = std::to_string(i) + " \"" + token_of(t.query_tokens, i) + "\"";
      if (ImGui::Selectable(l.c_str(), i == ui.flash.query)) {
        ui.flash.query = i;
        ui.flash.done = 0;
      }
    }
    ImGui::EndCombo();
  }
  if (t.num_heads > 1) {
    same_line_if_fits(ImGui::CalcTextSize("head 00 of 00").x);
    ImGui::Text("head %d of %d", h, t.num_heads);
  }
  const float slider_w = ImGui::GetFontSize() * 8;
  same_line_if_fits(ImGui::CalcTextSize("Block size").x);
  ImGui::TextUnformatted("Block size");
  ImGui::SameLine();
  int block = ui.flash.block;
  if (slider_int_beside("##flash-block", "B = ", &block, 1, std::max(1, t.n_k), slider_w)) {
    ui.flash.block = block;
    ui.flash.done = 0;
  }
}

// Previous/Next, Start over and All blocks, stepping ui.flash.done through the nb blocks.
void draw_block_steps(Ui& ui, int nb) {
  ui.flash.done = std::clamp(ui.flash.done, 0, nb);
  same_line_if_fits(button_width("◀ Previous block"));
  if (ImGui::Button("◀ Previous block") && ui.flash.done > 0) --ui.flash.done;
  same_line_if_fits(button_width("Next block ▶"));
  if (ImGui::Button("Next block ▶") && ui.flash.done < nb) ++ui.flash.done;
  same_line_if_fits(button_width("Start over"));
  if (ImGui::Button("Start over")) ui.flash.done = 0;
  same_line_if_fits(button_width("All blocks"));
  if (ImGui::Button("All blocks")) ui.flash.done = nb;
  same_line_if_fits(ImGui::CalcTextSize("read 000 of 000 blocks").x);
  ImGui::TextDisabled("read %d of %d block%s", ui.flash.done, nb, nb == 1 ? "" : "s");
}

// The running values after the blocks read, large, and what the last block did to them.
void draw_running_values(Ui& ui, const AttentionTrace& t, const OnlineSoftmaxWalk& w,
                         int precision) {
  ImGui::PushFont(ui.fonts.bold);
  if (ui.flash.done == 0) {
    ImGui::Text("Start:  m = −∞    ℓ = 0    acc = %s",
                vec(std::vector<double>(static_cast<size_t>(t.d_v), 0.0), precision).c_str());
  } else {
    const OnlineBlock& b = w.blocks[static_cast<size_t>(ui.flash.done - 1)];
    ImGui::Text("After block %d:  m = %s    ℓ = %s", ui.flash.done, num(b.m_new, precision).c_str(),
                num(b.l_new, precision).c_str());
    ImGui::Text("acc = %s", vec(b.acc_new, precision).c_str());
  }
  ImGui::PopFont();
  if (ui.flash.done > 0) {
    const OnlineBlock& b = w.blocks[static_cast<size_t>(ui.flash.done - 1)];
    std::string what;
    if (b.visible == 0)
      what = "Every key of this block is hidden: nothing changes.";
    else if (std::isinf(b.m_old))
      what = "The first visible key sets m; there is nothing to rescale yet.";
    else if (b.grew())
      what = "This block raised m from " + num(b.m_old, precision) + " to " +
             num(b.m_new, precision) + ": the old ℓ and acc are multiplied by e^(" +
             num(b.m_old, precision) + " − " + num(b.m_new, precision) +
             ") = " + num(b.rescale, precision) + " before the block's terms are added.";
    else
      what = "m did not grow (the block's largest score is " + num(b.block_max, precision) +
             "): ℓ and acc just add the block's terms.";
    ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
    text_wrapped_at_spaces(what);
    ImGui::PopStyleColor();
  }
}

// The table of every block read so far (up to 200), the last one highlighted.
void draw_block_table(const OnlineSoftmaxWalk& w, int done, int precision) {
  const ImGuiTableFlags tf =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  const int shown = std::min(done, 200);
  if (shown <= 0 || !ImGui::BeginTable("flash-blocks", 7, tf)) return;
  for (const char* c : {"block", "keys", "block max", "m", "factor e^(m_old − m)", "ℓ", "acc"})
    ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();
  for (int k = 0; k < shown; ++k) {
    const OnlineBlock& b = w.blocks[static_cast<size_t>(k)];
    ImGui::TableNextRow();
    if (k == done - 1)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1,
                             ImGui::GetColorU32(ImVec4(kAccent.x, kAccent.y, kAccent.z, 0.22f)));
    ImGui::TableNextColumn();
    ImGui::Text("%d", k + 1);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted((b.last - b.first == 1
                                ? std::to_string(b.first)
                                : std::to_string(b.first) + "–" + std::to_string(b.last - 1))
                               .c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(b.visible ? num(b.block_max, precision).c_str() : "−∞");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::isinf(b.m_new) ? "−∞" : num(b.m_new, precision).c_str());
    ImGui::TableNextColumn();
    if (b.grew() && !std::isinf(b.m_old))
      ImGui::TextColored(kAccent, "%s", num(b.rescale, precision).c_str());
    else
      ImGui::TextDisabled("1");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(num(b.l_new, precision).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(vec(b.acc_new, precision).c_str());
  }
  ImGui::EndTable();
}

// The end: one division, and the standard softmax's output beside it.
void draw_walk_result(Ui& ui, const AttentionTrace& t, const OnlineSoftmaxWalk& w, int h,
                      int precision) {
  const Matrix& out = t.head(StageId::kOutput, h);
  std::vector<double> standard(static_cast<size_t>(t.d_v));
  for (int c = 0; c < t.d_v; ++c)
    standard[static_cast<size_t>(c)] = out(ui.flash.query - t.first_row, c);
  ImGui::Spacing();
  ImGui::PushFont(ui.fonts.bold);
  if (w.empty_row)
    ImGui::TextUnformatted("Every key was hidden: ℓ = 0, the output is the zero vector.");
  else
    text_wrapped_at_spaces("output = acc / ℓ = " + vec(w.output, precision));
  ImGui::PopFont();
  const bool same = vec(w.output, precision) == vec(standard, precision);
  text_wrapped_at_spaces("standard softmax, then weights · V = " + vec(standard, precision) +
                         (same ? "   — the same, digit for digit"
                               : "   (float32 engine vs this double walk: last digit)"));
}

// The memory the standard way spends on scores and weights for this shape, which
// FlashAttention never writes.
void draw_memory_note(const AttentionTrace& t, int block) {
  const ScoreTraffic tr = score_traffic(t, block);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  text_wrapped_at_spaces(
      "Memory for this shape (float32): the standard way writes the scores S and the weights P, "
      "each " +
      std::to_string(t.n_q) + " × " + std::to_string(t.n_k) + " per head × " +
      std::to_string(t.num_heads) + (t.num_heads == 1 ? " head" : " heads") + " = " +
      bytes_text(tr.matrix_bytes) + ", and reads both back: " + bytes_text(tr.traffic_bytes) +
      " of traffic FlashAttention never makes. It keeps B = " + std::to_string(block) +
      " scores (" + bytes_text(tr.block_bytes) + ") per query row on chip, plus m, ℓ and acc.");
  ImGui::PopStyleColor();
}

}  // namespace

void draw_flash_panel(Ui& ui) {
  if (!ui.flash.open) return;
  AppState& st = ui.state;
  if (!begin_flash_window(ui)) return;
  const int rows = walkable_rows(ui);
  if (rows == 0) {
    ImGui::End();
    return;
  }
  const AttentionTrace& t = st.trace();
  if (st.selection().active() && st.selection().query != ui.flash.follow) {
    // Follow the heatmap's selection when it changes; the window's own choice otherwise.
    ui.flash.follow = st.selection().query;
    ui.flash.query = st.selection().query;
    ui.flash.done = 0;
  }
  ui.flash.query = std::clamp(ui.flash.query, t.first_row, t.first_row + rows - 1);
  ui.flash.block = std::clamp(ui.flash.block, 1, t.n_k);
  const int h = std::clamp(st.head(), 0, t.num_heads - 1);
  const int precision = std::clamp(st.precision, 1, 8);

  // Controls: which query, the block size, and stepping through the blocks.
  draw_query_and_block(ui, t, rows, h);
  const OnlineSoftmaxWalk w = online_softmax_walk(t, ui.flash.query, h, ui.flash.block);
  const int nb = static_cast<int>(w.blocks.size());
  draw_block_steps(ui, nb);
  ImGui::Separator();

  ImGui::BeginChild("flash-body", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
  text_wrapped_at_spaces(
      "Keys are read in blocks of B. Three running values stand in for the whole row of scores: "
      "m, the largest score so far; ℓ, the sum of exp(x_j − m); acc, the sum of exp(x_j − m)·v_j. "
      "When a block raises m, ℓ and acc were measured against the old maximum, so both are "
      "multiplied by e^(m_old − m_new) ≤ 1. One division acc / ℓ at the end gives the output.");
  ImGui::Spacing();
  draw_key_strip(ui, t, w, ui.flash.done, precision);
  draw_running_values(ui, t, w, precision);
  ImGui::Spacing();
  draw_block_table(w, ui.flash.done, precision);
  if (ui.flash.done == nb) draw_walk_result(ui, t, w, h, precision);
  ImGui::Spacing();
  draw_memory_note(t, ui.flash.block);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attn
