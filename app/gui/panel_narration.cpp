// The narration of the selected cell or row: the arithmetic of the current stage written out with
// the real numbers, from core/explain (the same text as `attention-lab explain`).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/ui.h"

namespace attn {
namespace {

// Wraps monospace text at spaces to `cols` columns, continuing a wrapped line under its own
// indentation plus two, so the arithmetic stays aligned (ImGui's wrap would also break "0.25"
// after its dot).
std::string wrap_monospace(const std::string& text, size_t cols) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const std::string hang(std::min(indent + 2, cols / 2), ' ');
    bool first = true;
    // Count columns in code points, not bytes (√, −, × are several bytes).
    auto width = [](const std::string& s) {
      size_t n = 0;
      for (unsigned char c : s) n += (c & 0xC0) != 0x80;
      return n;
    };
    while (width(line) > cols) {
      size_t cut = std::string::npos, seen = 0;
      for (size_t i = 0; i < line.size() && seen <= cols; ++i) {
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++seen;
        if (line[i] == ' ' && seen <= cols && i > indent + 1) cut = i;
      }
      if (cut == std::string::npos) break;  // one long word: let it run over
      out += line.substr(0, cut) + "\n";
      line = hang + line.substr(line.find_first_not_of(' ', cut) == std::string::npos
                                    ? line.size()
                                    : line.find_first_not_of(' ', cut));
      first = false;
    }
    (void)first;
    out += line;
    if (end == text.size()) break;
    out += "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

void draw_narration_panel(Ui& ui) {
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoCollapse |
      (ui.presentation && !ui.panels_shown ? ImGuiWindowFlags_NoTitleBar : 0);
  if (ImGui::Begin(ui.predict.active() ? "Predict###narration" : "Narration###narration", nullptr,
                   flags))
    draw_narration_contents(ui);
  ImGui::End();
}

namespace {

// No cell chosen: the stage itself in words, large enough for the room, and how to choose one.
void draw_narration_idle(Ui& ui) {
  AppState& st = ui.state;
  draw_first_start_hint(ui);
  // No cell chosen: the stage itself in words, large enough for the room.
  if (st.has_trace()) {
    const StageInfo stage = st.current_stage();
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextWrapped("%s", stage.title);
    ImGui::PopFont();
    ImGui::TextWrapped("%s", stage.why);
    ImGui::Spacing();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped(
      "Click a cell of the heatmap to see its arithmetic with the actual numbers, or click a "
      "query token (left of the heatmap) for its whole row. P asks the class to predict a "
      "number first.");
  ImGui::PopStyleColor();
}

// The row of buttons under the heading (whole row, copy, clear, the online softmax, decimals);
// they flow onto the next line when the panel is narrow. In presentation mode one row of what a
// teacher uses in front of the class.
void draw_narration_buttons(Ui& ui, const Selection& sel, bool room) {
  AppState& st = ui.state;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  auto flow = [&](const char* label) {
    const float w = ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right) ImGui::SameLine();
  };
  // Copying and the online softmax are in the normal layout (and with Tab).
  if (ImGui::SmallButton("whole row")) st.select_row(sel.query);
  if (!room) {
    flow("copy");
    if (ImGui::SmallButton("copy")) ImGui::SetClipboardText(ui.narration.text.c_str());
  }
  flow("clear");
  if (ImGui::SmallButton("clear")) st.clear_selection();
  const StageId stage_id = st.current_stage().id;
  if (!room && (stage_id == StageId::kWeights || stage_id == StageId::kOutput)) {
    // The same row's softmax and weighted sum as FlashAttention computes them.
    flow("online softmax…");
    if (ImGui::SmallButton("online softmax…")) {
      ui.flash.open = true;
      ui.flash.query = ui.flash.follow = sel.query;
      ui.flash.done = 0;
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Step through this row block by block, as FlashAttention computes it");
  }
  char decimals[32];
  std::snprintf(decimals, sizeof decimals, "%d decimals", st.precision);
  // The − and + buttons and their note, on this line only when all three fit.
  {
    const float w = ImGui::CalcTextSize("−").x + ImGui::CalcTextSize("+").x +
                    ImGui::GetStyle().FramePadding.x * 4 + 2 + ImGui::GetStyle().ItemSpacing.x +
                    ImGui::CalcTextSize(decimals).x;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w <= right) ImGui::SameLine();
  }
  if (ImGui::SmallButton("−") && st.precision > 1) --st.precision;
  ImGui::SameLine(0, 2);
  if (ImGui::SmallButton("+") && st.precision < 8) ++st.precision;
  ImGui::SameLine();
  ImGui::TextDisabled("%s", decimals);
}

// The working, wrapped to the column; in presentation mode its type shrinks (to 14 px at the
// least) until it fits, rather than leaving most of it to scroll.
void draw_working(Ui& ui, bool room) {
  const std::string& cached_key = ui.narration.key;
  const std::string& cached_text = ui.narration.text;
  const std::string& cached_error = ui.narration.error;
  ImGui::BeginChild("narration-text", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
  if (!cached_error.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "%s", cached_error.c_str());
    ImGui::PopTextWrapPos();
  } else {
    ImGui::PushFont(ui.fonts.narration);
    std::string& wrapped = ui.narration.wrapped_text;
    // Wrapped to the column at a font scale (cached per text, width and scale).
    auto wrap_at = [&](float scale) {
      ImGui::SetWindowFontScale(scale);
      const float char_w = ImGui::CalcTextSize("0").x;
      const size_t cols = static_cast<size_t>(std::max(
          20.0f, (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ScrollbarSize) / char_w));
      const std::string wkey = cached_key + "#" + std::to_string(cols);
      if (wkey != ui.narration.wrapped_key) {
        wrapped = wrap_monospace(cached_text, cols);
        ui.narration.wrapped_key = wkey;
      }
      const auto lines = static_cast<float>(std::count(wrapped.begin(), wrapped.end(), '\n') + 1);
      return lines * ImGui::GetTextLineHeight();  // one TextUnformatted: no item spacing
    };
    // In presentation mode the working is shown whole: its type shrinks (to 14 px at the
    // least) until it fits the column, rather than leaving most of it to scroll. A row of
    // hundreds of keys scrolls as before.
    const float avail_h = ImGui::GetContentRegionAvail().y;
    float scale = 1;
    if (room && cached_text.size() < 6000) {
      // The largest scale that fits, found once per text and column size.
      const std::string fit_key =
          cached_key + "#" + std::to_string(static_cast<int>(ImGui::GetContentRegionAvail().x)) +
          "x" + std::to_string(static_cast<int>(avail_h));
      if (fit_key != ui.narration.fit_key) {
        const float least = std::min(1.0f, 14.0f / ImGui::GetFontSize());
        float lo = least, hi = 1;
        if (wrap_at(hi) <= avail_h) {
          lo = hi;
        } else if (wrap_at(lo) <= avail_h) {
          for (int pass = 0; pass < 7; ++pass) {
            const float mid = (lo + hi) / 2;
            (wrap_at(mid) <= avail_h ? lo : hi) = mid;
          }
        }
        ui.narration.fit_key = fit_key;
        ui.narration.fit_scale = lo;
      }
      scale = ui.narration.fit_scale;
    }
    wrap_at(scale);
    ImGui::TextUnformatted(wrapped.c_str());
    ui.narration.px = ImGui::GetFontSize();
    ui.narration.scrolls = ImGui::GetScrollMaxY() > 0.5f;
    ImGui::SetWindowFontScale(1);
    ImGui::PopFont();
  }
  ImGui::EndChild();
}

}  // namespace

void draw_narration_contents(Ui& ui) {
  AppState& st = ui.state;
  const bool room = ui.presentation && !ui.panels_shown;
  if (room) {
    // Presentation mode keeps the heatmap's height for its cells: what moves, and the buttons
    // that ask the class, are said here.
    if (!ui.motion.caption.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.85f, 0.35f, 0.05f, 1));
      text_wrapped_at_spaces("▶ " + ui.motion.caption);
      ImGui::PopStyleColor();
    } else
      draw_predict_toolbar(ui);
    ImGui::Separator();
  }
  if (ui.predict.active()) {
    draw_predict_contents(ui);
    if (!ui.predict.revealed()) return;
    ImGui::Separator();
  }
  if (ui.secret.hides_working(st.head(), st.selection().query)) {
    // The working would give the lesson's answer away (this step's, or a later step's about the
    // selected row): it comes back once the question is answered (the feedback then carries it).
    text_disabled_wrapped(
        ui.secret.active && ui.secret.narration
            ? "The working is hidden until the lesson's question is answered or its answer shown."
            : "The working of this row is hidden: a later step of the lesson asks for it.");
    return;
  }
  const AttentionTrace& t = st.trace();
  const Selection sel = st.selection();
  if (!sel.active() || !st.has_trace()) {
    draw_narration_idle(ui);
    return;
  }
  auto token = [](const std::vector<std::string>& v, int i) {
    return i >= 0 && i < static_cast<int>(v.size()) ? v[i] : std::to_string(i);
  };
  ImGui::PushFont(ui.fonts.bold);
  if (sel.key >= 0)
    ImGui::TextWrapped("query %d \"%s\"  ·  key %d \"%s\"", sel.query,
                       token(t.query_tokens, sel.query).c_str(), sel.key,
                       token(t.key_tokens, sel.key).c_str());
  else
    ImGui::TextWrapped("query %d \"%s\"  ·  whole row", sel.query,
                       token(t.query_tokens, sel.query).c_str());
  ImGui::PopFont();
  // (In presentation mode the heatmap's heading names the stage, and the working needs the
  // lines.)
  if (!room) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
    ImGui::TextWrapped("%s%s", st.current_stage().title,
                       t.num_heads > 1 ? (", head " + std::to_string(st.head())).c_str() : "");
    ImGui::PopStyleColor();
  }

  // explain() is cheap for teaching sizes but not for a 1024-key row: cache it per request.
  std::string& cached_key = ui.narration.key;
  std::string& cached_text = ui.narration.text;
  std::string& cached_error = ui.narration.error;
  std::optional<ExplainRequest> req = st.narration_request();
  std::string key = std::to_string(st.trace_serial()) + "/" + std::to_string(req->query) + "/" +
                    std::to_string(req->head) + "/" + std::to_string(req->key.value_or(-1)) + "/" +
                    (req->step ? stage_name(*req->step) : "") + "/" +
                    std::to_string(req->precision);
  if (key != cached_key) {
    cached_error.clear();
    cached_text = st.narration(cached_error);
    cached_key = key;
  }
  draw_narration_buttons(ui, sel, room);
  ImGui::Separator();
  draw_working(ui, room);
}

}  // namespace attn
