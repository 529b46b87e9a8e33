// The language-model window's "Block" tab, in the spirit of Transformer Explainer's main view: one
// token's path through one block of the open model as a column of boxes joined by arrows — the
// embedding, the norm, Q/K/V, the head's attention, the output projection, the residual, the MLP,
// the residual, and after the last block the final norm and the next token — each with its
// operation, its shapes and real numbers (lm/block_path.h computes them). The residual stream's
// skips run down the left. Beside or below it, GPT-2's block against the Llama family's in the
// open model's sizes, the open model's column highlighted.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/panel_lm.h"
#include "lm/block_path.h"

namespace attn {

namespace {

// A value as the boxes write it: three decimals (one for large ones), a true minus sign.
std::string value_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, std::fabs(x) >= 100 ? "%.1f" : "%.3f", std::fabs(x));
  return (x < 0 && std::string(b).find_first_not_of("0.") != std::string::npos ? "−" : "") +
         std::string(b);
}

// Its first `n` values, "…" when there are more.
std::string vector_text(const lm::BlockVector& v, size_t n) {
  n = std::min(n, v.first.size());
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + value_text(v.first[i]);
  if (n < static_cast<size_t>(v.size)) s += ", …";
  return s + "]";
}

// "label = [v0, v1, …]   length L" with as many values (2 to all kept) as fit on one line
// before screen x `right`.
std::string vector_line(const lm::BlockVector& v, float right) {
  const std::string label = v.label + " = ", length = "   length\u00a0" + value_text(v.norm);
  const float room = right - ImGui::GetCursorScreenPos().x;
  size_t n = 2;
  while (n < v.first.size() &&
         ImGui::CalcTextSize((label + vector_text(v, n + 1) + length).c_str()).x <= room)
    ++n;
  return label + vector_text(v, n) + length;
}

// The colour of a stage's kind: the residual stream, a norm, attention, the MLP, the output.
ImVec4 stage_color(lm::BlockStageId id) {
  using S = lm::BlockStageId;
  switch (id) {
    case S::kNorm1:
    case S::kNorm2:
    case S::kFinalNorm:
      return {0.17f, 0.58f, 0.56f, 1};
    case S::kQkv:
    case S::kAttention:
    case S::kOutProj:
      return {0.90f, 0.47f, 0.10f, 1};
    case S::kMlp:
    case S::kMlpDown:
      return {0.55f, 0.38f, 0.74f, 1};
    case S::kNextToken:
      return {0.84f, 0.15f, 0.16f, 1};
    default:
      return {0.33f, 0.45f, 0.62f, 1};
  }
}

std::string quoted(const std::string& token) { return "“" + token + "”"; }

// Text wrapped at spaces (never inside a number) to end before screen x `right`, as
// text_wrapped_at_spaces does to the window's edge; an operator between two words ("8192 × 576",
// "(1, 576) → (1, 192)") stays on the line of the word before it and pulls the next one along.
void wrapped(const std::string& text, float right, bool disabled = false) {
  const float width = std::max(right - ImGui::GetCursorScreenPos().x, ImGui::GetFontSize() * 4);
  std::vector<std::string> units;
  bool glue = false;
  size_t k = 0;
  while (k <= text.size()) {
    size_t sp = text.find(' ', k);
    if (sp == std::string::npos) sp = text.size();
    const std::string word = text.substr(k, sp - k);
    const bool op = word == "×" || word == "→" || word == "=" || word == "+" || word == "·" ||
                    word == "−" || word == "⊙";
    const bool unit = word == "k" || word == "M" || word == "%";  // "33 k", "4.7 M"
    if ((op || glue || unit) && !units.empty())
      units.back() += " " + word;
    else
      units.push_back(word);
    glue = op;
    k = sp + 1;
  }
  // A unit wider than the line: its words apart, and a word still too wide cut between
  // characters (a long tensor name in a narrow column).
  std::vector<std::string> fitted;
  for (const std::string& u : units) {
    if (ImGui::CalcTextSize(u.c_str()).x <= width) {
      fitted.push_back(u);
      continue;
    }
    size_t a = 0;
    while (a <= u.size()) {
      size_t b = u.find(' ', a);
      if (b == std::string::npos) b = u.size();
      std::string word = u.substr(a, b - a), piece;
      for (size_t i = 0; i < word.size();) {
        size_t n = 1;
        while (i + n < word.size() && (static_cast<unsigned char>(word[i + n]) & 0xC0) == 0x80) ++n;
        const std::string ch = word.substr(i, n);
        if (!piece.empty() && ImGui::CalcTextSize((piece + ch).c_str()).x > width) {
          fitted.push_back(piece);
          piece.clear();
        }
        piece += ch;
        i += n;
      }
      fitted.push_back(piece);
      a = b + 1;
    }
  }
  if (disabled)
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  std::string line;
  for (const std::string& u : fitted) {
    const std::string longer = line.empty() ? u : line + " " + u;
    if (!line.empty() && ImGui::CalcTextSize(longer.c_str()).x > width) {
      ImGui::TextUnformatted(line.c_str());
      line = u;
    } else {
      line = longer;
    }
  }
  ImGui::TextUnformatted(line.c_str());
  if (disabled) ImGui::PopStyleColor();
}

// wrapped() to the right edge of the window or table cell.
void wrapped_here(const std::string& text) {
  wrapped(text, ImGui::GetCursorScreenPos().x + ImGui::GetContentRegionAvail().x);
}

// Rows of "label ▬▬▬ 41.2 %", `width` wide: the head's strongest keys, the likeliest next tokens.
void bar_rows(const std::vector<std::pair<std::string, double>>& rows, ImU32 color, float width) {
  if (rows.empty()) return;
  const float fs = ImGui::GetFontSize();
  float label_w = 0;
  for (const auto& r : rows) label_w = std::max(label_w, ImGui::CalcTextSize(r.first.c_str()).x);
  const float pct_w = ImGui::CalcTextSize("100.0 %").x + fs * 0.4f;
  label_w = std::min(label_w + fs * 0.6f, std::max(width * 0.5f, fs * 4));
  const float bar_max = std::max(fs * 2, width - label_w - pct_w);
  double best = 1e-12;
  for (const auto& r : rows) best = std::max(best, r.second);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  for (const auto& [label, value] : rows) {
    const ImVec2 o = ImGui::GetCursorScreenPos();
    const ImVec4 clip{o.x, o.y, o.x + label_w - fs * 0.3f, o.y + line};
    dl->AddText(nullptr, 0, o, text, label.c_str(), nullptr, 0, &clip);
    const float len = std::max(1.0f, static_cast<float>(value / best) * bar_max);
    dl->AddRectFilled({o.x + label_w, o.y + line * 0.18f},
                      {o.x + label_w + len, o.y + line * 0.82f}, color, 2);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f %%", 100 * value);
    dl->AddText({o.x + label_w + len + fs * 0.3f, o.y}, text, pct);
    ImGui::Dummy({std::min(label_w + len + pct_w, width), line});
  }
}

// One box's contents, its text ending before screen x `right` (the box's background is drawn
// after, when its height is known).
void box_contents(Ui& ui, const LmRun& run, const lm::BlockStage& s, bool clickable, float right) {
  using S = lm::BlockStageId;
  const float fs = ImGui::GetFontSize();
  const float x = ImGui::GetCursorScreenPos().x;
  // The title and the tensors it reads; the shape at the right when it fits on their line.
  if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
  wrapped(s.title, right);
  if (ui.fonts.bold) ImGui::PopFont();
  const float shape_w = ImGui::CalcTextSize(s.shape.c_str()).x;
  const float weights_w = s.weights.empty() ? 0 : ImGui::CalcTextSize(s.weights.c_str()).x + fs;
  const float after_title = ImGui::GetItemRectMax().x;
  if (!s.weights.empty() && after_title + weights_w <= right) {
    ImGui::SameLine(0, fs);
    ImGui::TextDisabled("%s", s.weights.c_str());
  }
  const float after = ImGui::GetItemRectMax().x;
  if (after + fs * 1.5f + shape_w <= right) {
    ImGui::SameLine(right - x - shape_w);
    ImGui::TextUnformatted(s.shape.c_str());
  } else {
    if (!s.weights.empty() && after_title + weights_w > right) wrapped(s.weights, right, true);
    wrapped(s.shape, right);
  }
  if (!s.formula.empty()) wrapped(s.formula, right, true);
  if (s.id == S::kMlp && !s.stats.empty() && !s.vectors.empty()) {
    wrapped(std::to_string(static_cast<long long>(s.stats.front().second)) + " of " +
                std::to_string(s.vectors.back().size) + " values are positive after " +
                (run.model->config.llama_family() ? "silu(gate) ⊙ up" : "GELU"),
            right);
  } else if (!s.stats.empty() && s.id != S::kAttention) {
    std::string line;
    for (const auto& [name, v] : s.stats) {
      if (!line.empty()) line += "   ·   ";
      const bool whole = s.id == S::kQkv;
      line +=
          name + (whole ? " " + std::to_string(static_cast<long long>(v)) : " = " + value_text(v));
    }
    wrapped(line, right);
  }
  for (const lm::BlockVector& v : s.vectors) wrapped(vector_line(v, right), right);
  if (s.id == S::kAttention) {
    std::vector<std::pair<std::string, double>> rows;
    for (const auto& [j, w] : s.top)
      rows.emplace_back(std::to_string(j) + " " + quoted(run.tokens[static_cast<size_t>(j)]), w);
    const int seen = s.stats.empty() ? 0 : static_cast<int>(s.stats.front().second);
    wrapped("Its weights over the " + std::to_string(seen) + " key" + (seen == 1 ? "" : "s") +
                " it sees, the largest:",
            right);
    bar_rows(rows, ImGui::GetColorU32(stage_color(s.id)), right - ImGui::GetCursorScreenPos().x);
  }
  if (s.id == S::kNextToken)
    bar_rows(
        [&] {
          std::vector<std::pair<std::string, double>> rows;
          for (const auto& [id, prob] : s.top)
            rows.emplace_back(quoted(run.model->tokenizer.display(id)), prob);
          return rows;
        }(),
        ImGui::GetColorU32(stage_color(s.id)), right - ImGui::GetCursorScreenPos().x);
  if (!s.note.empty()) wrapped(s.note, right);
  if (clickable)
    wrapped("Click to step through this head's arithmetic at this token ▸", right, true);
}

void arrow_down(ImDrawList* dl, float x, float y0, float y1, ImU32 col, float fs) {
  const float head = fs * 0.35f;
  dl->AddLine({x, y0}, {x, y1 - head}, col, std::max(1.5f, fs * 0.08f));
  dl->AddTriangleFilled({x - head * 0.7f, y1 - head}, {x + head * 0.7f, y1 - head}, {x, y1}, col);
}

// The flow of boxes, top to bottom, the block's in a frame; the residual stream's skips on the
// left. Records where the attention box is (tests click it).
void draw_flow(Ui& ui, LmPanel& p, const LmRun& run, const lm::BlockPath& path) {
  using S = lm::BlockStageId;
  const lm::Config& c = run.model->config;
  const float fs = ImGui::GetFontSize();
  const float pad = std::round(fs * 0.5f), rail = std::round(fs * 1.4f),
              gap = std::round(fs * 1.1f);
  const float stripe = std::round(fs * 0.3f), round = fs * 0.3f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImDrawListSplitter split;  // channel 0: frames, boxes, lines; 1: the boxes' contents
  split.Split(dl, 2);
  split.SetCurrentChannel(dl, 1);
  const float left = ImGui::GetCursorScreenPos().x;
  const float x0 = left + rail, x1 = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const ImU32 line_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text);
  std::vector<ImVec4> rects;  // each stage's box: x0, y0, x1, y1
  float block_top = 0, block_bottom = 0;
  bool open_head = false;
  p.block_attention_box = {0, 0, 0, 0};
  for (size_t i = 0; i < path.stages.size(); ++i) {
    const lm::BlockStage& s = path.stages[i];
    const bool inside = s.id >= S::kNorm1 && s.id <= S::kResidual2;
    if (s.id == S::kNorm1) {  // the block's frame starts here, its name at its top
      block_top = ImGui::GetCursorScreenPos().y;
      ImGui::SetCursorScreenPos({x0 + pad, block_top + pad * 0.6f});
      if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
      ImGui::Text("Transformer block %d", path.layer);
      if (ui.fonts.bold) ImGui::PopFont();
      ImGui::SameLine();
      ImGui::TextDisabled("of %d (0 – %d)", c.n_layer, c.n_layer - 1);
      ImGui::SetCursorScreenPos({left, ImGui::GetItemRectMax().y + pad * 0.6f});
    }
    const float bx0 = inside ? x0 + pad : x0, bx1 = inside ? x1 - pad : x1;
    const float y0 = ImGui::GetCursorScreenPos().y;
    ImGui::SetCursorScreenPos({bx0 + stripe + pad, y0 + pad * 0.7f});
    ImGui::BeginGroup();
    ImGui::PushID(static_cast<int>(i));
    box_contents(ui, run, s, s.id == S::kAttention, bx1 - pad);
    ImGui::PopID();
    ImGui::EndGroup();
    const float y1 = ImGui::GetItemRectMax().y + pad * 0.7f;
    rects.push_back({bx0, y0, bx1, y1});
    bool hovered = false;
    if (s.id == S::kAttention) {
      ImGui::SetCursorScreenPos({bx0, y0});
      if (ImGui::InvisibleButton("attention-box", {bx1 - bx0, y1 - y0})) open_head = true;
      hovered = ImGui::IsItemHovered();
      if (hovered)
        ImGui::SetTooltip("Open layer %d, head %d in the stepper at query %d %s", path.layer,
                          path.head, path.position,
                          quoted(run.tokens[static_cast<size_t>(path.position)]).c_str());
      p.block_attention_box = {bx0, y0, bx1, y1};
    }
    // The box: tinted with its kind's colour, a stripe of it on the left, a border (stronger
    // when it can be clicked and the pointer is on it).
    split.SetCurrentChannel(dl, 0);
    ImVec4 col = stage_color(s.id), tint = col;
    tint.w = 0.10f;
    dl->AddRectFilled({bx0, y0}, {bx1, y1}, ImGui::GetColorU32(ImGuiCol_WindowBg), round);
    dl->AddRectFilled({bx0, y0}, {bx1, y1}, ImGui::GetColorU32(tint), round);
    dl->AddRectFilled({bx0, y0}, {bx0 + stripe, y1}, ImGui::GetColorU32(col), round,
                      ImDrawFlags_RoundCornersLeft);
    col.w = hovered ? 1.0f : 0.55f;
    dl->AddRect({bx0, y0}, {bx1, y1}, ImGui::GetColorU32(col), round, 0, hovered ? 3.0f : 1.0f);
    float next_y = y1;
    if (s.id == S::kResidual2) {
      block_bottom = y1 + pad;
      next_y = block_bottom;
    }
    if (i + 1 < path.stages.size()) {
      // An arrow to the next box (into the block's frame when the next one opens it).
      const float cx = (bx0 + bx1) / 2;
      arrow_down(dl, cx, next_y, next_y + gap, line_col, fs);
      next_y += gap;
    }
    split.SetCurrentChannel(dl, 1);
    ImGui::SetCursorScreenPos({left, next_y});
  }
  split.SetCurrentChannel(dl, 0);
  if (block_bottom > block_top) {  // the block's frame, behind its boxes
    ImVec4 frame(0.5f, 0.5f, 0.5f, 0.07f);
    dl->AddRectFilled({x0, block_top}, {x1, block_bottom}, ImGui::GetColorU32(frame), fs * 0.4f);
    frame.w = 0.6f;
    dl->AddRect({x0, block_top}, {x1, block_bottom}, ImGui::GetColorU32(frame), fs * 0.4f, 0, 1.5f);
  }
  // The residual stream's skips: from the stream into each residual sum, down the left rail,
  // with a "+" where the branch is added.
  const auto index_of = [&](S id) {
    for (size_t i = 0; i < path.stages.size(); ++i)
      if (path.stages[i].id == id) return static_cast<int>(i);
    return -1;
  };
  const int from0 = index_of(path.find(S::kInput) ? S::kInput : S::kEmbedding);
  const int res1 = index_of(S::kResidual1), res2 = index_of(S::kResidual2);
  const float thick = std::max(1.5f, fs * 0.09f), head = fs * 0.3f, r = fs * 0.42f;
  const float rx = left + rail * 0.45f;
  const auto skip = [&](int from, int to) {
    if (from < 0 || to < 0) return;
    const ImVec4 a = rects[static_cast<size_t>(from)], b = rects[static_cast<size_t>(to)];
    const float ya = (a.y + a.w) / 2, yb = (b.y + b.w) / 2;
    dl->AddLine({a.x, ya}, {rx, ya}, line_col, thick);
    dl->AddLine({rx, ya}, {rx, yb - r}, line_col, thick);
    dl->AddLine({rx + r, yb}, {b.x - head, yb}, line_col, thick);
    dl->AddTriangleFilled({b.x - head, yb - head * 0.7f}, {b.x - head, yb + head * 0.7f}, {b.x, yb},
                          line_col);
    dl->AddCircleFilled({rx, yb}, r, ImGui::GetColorU32(ImGuiCol_WindowBg));
    dl->AddCircle({rx, yb}, r, line_col, 0, thick);
    dl->AddLine({rx - r * 0.55f, yb}, {rx + r * 0.55f, yb}, text_col, thick);
    dl->AddLine({rx, yb - r * 0.55f}, {rx, yb + r * 0.55f}, text_col, thick);
  };
  skip(from0, res1);
  skip(res1, res2);
  split.Merge(dl);
  ImGui::Dummy({1, pad});
  if (open_head) open_lm_head_in_stepper(ui, path.layer, path.head, path.position);
}

// On a slide: the flow as chips that wrap like words, one per box with its title and its kind's
// colour, the block's own after "Block N:". Hovering a chip shows its box; the attention chip opens
// the head in the stepper, as its box does (recording where it is, as draw_flow does). The whole
// block stays in view at 1280×720 in 32 px.
void draw_flow_chips(Ui& ui, LmPanel& p, const LmRun& run, const lm::BlockPath& path) {
  using S = lm::BlockStageId;
  const float fs = ImGui::GetFontSize();
  bool open_head = false, first = true;
  // The next item, `w` wide, on this line when it fits, else on the next.
  auto place = [&](float w) {
    if (!first) same_line_if_fits(w);
    first = false;
  };
  for (size_t i = 0; i < path.stages.size(); ++i) {
    const lm::BlockStage& st = path.stages[i];
    if (i > 0) {
      place(ImGui::CalcTextSize("→").x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("→");
    }
    if (st.id == S::kNorm1) {
      const std::string name = "Block " + std::to_string(path.layer) + ":";
      if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
      place(ImGui::CalcTextSize(name.c_str()).x);
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(name.c_str());
      if (ui.fonts.bold) ImGui::PopFont();
    }
    place(button_width(st.title.c_str()));
    ImVec4 col = stage_color(st.id);
    col.w = 0.22f;
    ImGui::PushStyleColor(ImGuiCol_Button, col);
    col.w = 0.40f;
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, col);
    ImGui::PushStyleColor(ImGuiCol_ButtonActive, col);
    ImGui::PushID(static_cast<int>(i));
    if (ImGui::Button(st.title.c_str()) && st.id == S::kAttention) open_head = true;
    if (st.id == S::kAttention) {
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      p.block_attention_box = {a.x, a.y, b.x, b.y};
    }
    ImGui::PopID();
    ImGui::PopStyleColor(3);
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      box_contents(ui, run, st, st.id == S::kAttention, ImGui::GetCursorScreenPos().x + fs * 24);
      ImGui::EndTooltip();
    }
  }
  // How to see the numbers, where the stage has room for it.
  const std::string hint =
      "Point at a box for its numbers; click the attention to step through it.";
  if (ImGui::GetStyle().ItemSpacing.y * 2 +
          wrapped_height(hint, ImGui::GetContentRegionAvail().x) <=
      ImGui::GetContentRegionAvail().y) {
    ImGui::Spacing();
    text_disabled_wrapped(hint);
  }
  if (open_head) open_lm_head_in_stepper(ui, path.layer, path.head, path.position);
}

// GPT-2's block against the Llama family's, the open model's column highlighted.
void draw_comparison(Ui& ui, LmPanel& p, const lm::Config& c, bool beside) {
  const float fs = ImGui::GetFontSize();
  if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted("GPT-2 against Llama");
  if (ui.fonts.bold) ImGui::PopFont();
  if (p.block_scroll_to_compare) {
    ImGui::SetScrollHereY(0);
    p.block_scroll_to_compare = false;
  }
  if (!beside) {
    same_line_if_fits(button_width("↑ The token's path"));
    if (ImGui::SmallButton("↑ The token's path")) ImGui::SetScrollY(0);
  }
  wrapped_here(
      "GPT-2's block and today's (Llama, Mistral, Qwen2) do the same steps in the same order; "
      "these are the differences, in this model's sizes.");
  ImGui::Spacing();
  const bool llama = c.llama_family();
  const std::vector<lm::BlockDifference> rows = lm::block_differences(c);
  const std::string gpt2_head = llama ? "GPT-2" : "GPT-2: this model";
  const std::string llama_head =
      llama ? std::string("Llama family: this model (") + arch_name(c.arch) + ")"
            : "Llama, Mistral, Qwen2";
  const ImU32 highlight = ImGui::GetColorU32(ImVec4(0.90f, 0.47f, 0.10f, 0.16f));
  const ImU32 header = ImGui::GetColorU32(ImVec4(0.90f, 0.47f, 0.10f, 0.35f));
  const int mine = llama ? 2 : 1;
  const auto bold_text = [&](const std::string& t) {
    if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
    wrapped_here(t);
    if (ui.fonts.bold) ImGui::PopFont();
  };
  // The aspects' column as wide as their longest word, so none is cut.
  float aspect_w = 0;
  for (const auto& r : rows) {
    size_t a = 0;
    while (a <= r.aspect.size()) {
      size_t b = r.aspect.find(' ', a);
      if (b == std::string::npos) b = r.aspect.size();
      aspect_w = std::max(aspect_w, ImGui::CalcTextSize(r.aspect.substr(a, b - a).c_str()).x);
      a = b + 1;
    }
  }
  aspect_w += fs * 0.3f;
  // Two columns while each gets a readable width; else one, each aspect's two sides under it.
  const bool columns = (ImGui::GetContentRegionAvail().x - aspect_w) / 2 >= fs * 9;
  const ImGuiTableFlags flags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_PadOuterX;
  ImGui::PushStyleVar(ImGuiStyleVar_CellPadding, {fs * 0.35f, fs * 0.25f});
  if (columns && ImGui::BeginTable("block-compare", 3, flags)) {
    ImGui::TableSetupColumn("##aspect", ImGuiTableColumnFlags_WidthFixed, aspect_w);
    ImGui::TableSetupColumn(gpt2_head.c_str(), ImGuiTableColumnFlags_WidthStretch, 1);
    ImGui::TableSetupColumn(llama_head.c_str(), ImGuiTableColumnFlags_WidthStretch, 1);
    // The header row: the columns' names in bold, the open model's on its colour.
    ImGui::TableNextRow();
    for (int col = 1; col < 3; ++col) {
      ImGui::TableSetColumnIndex(col);
      if (col == mine) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, header);
      bold_text(col == 1 ? gpt2_head : llama_head);
    }
    for (const auto& r : rows) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      wrapped_here(r.aspect);
      for (int col = 1; col < 3; ++col) {
        ImGui::TableSetColumnIndex(col);
        if (col == mine) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, highlight);
        wrapped_here(col == 1 ? r.gpt2 : r.llama);
      }
    }
    ImGui::EndTable();
  } else if (!columns && ImGui::BeginTable("block-compare-narrow", 1, flags)) {
    for (const auto& r : rows) {
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, ImGui::GetColorU32(ImGuiCol_TableHeaderBg));
      bold_text(r.aspect);
      for (int col = 1; col < 3; ++col) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        if (col == mine) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, highlight);
        wrapped_here((col == 1 ? gpt2_head : llama_head) + " — " + (col == 1 ? r.gpt2 : r.llama));
      }
    }
    ImGui::EndTable();
  }
  ImGui::PopStyleVar();
  p.block_compare_drawn = beside ? 2 : 1;
}

}  // namespace

void draw_lm_block(Ui& ui, LmPanel& p) {
  LmSession& s = p.session;
  const LmRun* run = s.run();
  if (!run || !run->model || run->acts.T == 0) {
    ImGui::TextDisabled("Open a model and type a sentence.");
    return;
  }
  const lm::Config& c = run->model->config;
  const int T = run->acts.T;
  const float fs = ImGui::GetFontSize();
  // The flow with the comparison beside it when both get a useful width, else below it.
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const bool beside = avail_w >= fs * 50;
  // The token, the layer and the head: the same the other views point at.
  int t = s.shown_position();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Token");
  ImGui::SameLine();
  const auto token_label = [&](int j) {
    return std::to_string(j) + " " + quoted(run->tokens[static_cast<size_t>(j)]);
  };
  ImGui::SetNextItemWidth(
      std::clamp(ImGui::CalcTextSize(token_label(t).c_str()).x + ImGui::GetFrameHeight() + fs,
                 fs * 5, fs * 12));
  if (ImGui::BeginCombo("##block-token", token_label(t).c_str())) {
    for (int j = 0; j < T; ++j)
      if (ImGui::Selectable(token_label(j).c_str(), j == t)) s.position = j == T - 1 ? -1 : j;
    ImGui::EndCombo();
  }
  int layer = s.layer, head = s.head;
  same_line_if_fits(fs * 8.5f);
  if (slider_int_beside("##block-layer", "layer ", &layer, 0, c.n_layer - 1, fs * 4))
    s.select(layer, head);
  same_line_if_fits(fs * 8.5f);
  if (slider_int_beside("##block-head", "head ", &head, 0, c.n_head - 1, fs * 4))
    s.select(layer, head);
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "One token's path through one block, top to bottom, with this model's real numbers: each "
      "box is one operation, its shapes (1 row, because it is one token) and the first values "
      "of what it computes, with the vector's length. The lines on the left are the residual "
      "stream: attention and the MLP each add to it. Click the attention box to step through "
      "that head's arithmetic in the stepper.");
  // On a slide the flow and the comparison take turns on the stage.
  const bool slide = ui.lesson_view.slide.on;
  if (slide) {
    const char* label = p.block_slide_compare ? "The block's flow" : "GPT-2 against Llama";
    same_line_if_fits(button_width(label));
    if (ImGui::SmallButton(label)) p.block_slide_compare = !p.block_slide_compare;
  } else if (!beside) {
    same_line_if_fits(button_width("GPT-2 against Llama ↓"));
    if (ImGui::SmallButton("GPT-2 against Llama ↓")) p.block_scroll_to_compare = true;
  }
  t = s.shown_position();
  const int l = std::clamp(s.layer, 0, c.n_layer - 1), h = std::clamp(s.head, 0, c.n_head - 1);
  const lm::BlockPath* computed = s.block_path(l, h, t, s.temperature);
  if (!computed) {
    ImGui::TextDisabled("Computing the path…");
    return;
  }
  const lm::BlockPath& path = *computed;
  p.block_compare_drawn = 0;
  if (slide) {
    ImGui::Spacing();
    p.block_attention_box = {0, 0, 0, 0};
    if (p.block_slide_compare)
      draw_comparison(ui, p, c, false);
    else
      draw_flow_chips(ui, p, *run, path);
    return;
  }
  const float flow_w = beside ? std::round(avail_w * 0.5f) : 0.0f;
  ImGui::BeginChild("block-flow", {flow_w, 0}, false);
  // Presentation keeps the height for the boxes: the controls above say the same.
  if (!ui.presentation || ui.panels_shown)
    text_disabled_wrapped("Token " + std::to_string(t) + " " +
                          quoted(run->tokens[static_cast<size_t>(t)]) + " through block " +
                          std::to_string(l) + " of " + run->model->name + " (" + arch_name(c.arch) +
                          ", " + std::to_string(c.n_layer) + " blocks), attention head " +
                          std::to_string(h) + ".");
  draw_flow(ui, p, *run, path);
  if (!path.last_block)
    text_disabled_wrapped("Then block" + std::string(l + 2 < c.n_layer ? "s " : " ") +
                          std::to_string(l + 1) +
                          (l + 2 < c.n_layer ? " – " + std::to_string(c.n_layer - 1) : "") +
                          ", the final norm and the next token: choose layer " +
                          std::to_string(c.n_layer - 1) + " to follow the token to the end.");
  if (!beside) {
    ImGui::Spacing();
    ImGui::Spacing();
    draw_comparison(ui, p, c, false);
  }
  ImGui::EndChild();
  if (beside) {
    ImGui::SameLine();
    ImGui::BeginChild("block-compare-side", {0, 0}, false);
    draw_comparison(ui, p, c, true);
    ImGui::EndChild();
  }
}

}  // namespace attn
