// The head view (as BertViz's): the sentence twice, queries on the left and keys on the right,
// a line from each token to every earlier token it attends to, as strong as the weight, one colour
// per head; hover a token to isolate its lines (the tokens they do not reach fade), click to keep
// it isolated.
#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "gui/panel_lm.h"

namespace attn {

namespace {

// The token text with its leading space made visible, so " the" and "the" differ on screen.
std::string shown(const std::string& t) {
  if (!t.empty() && t[0] == ' ') return "·" + t.substr(1);
  return t;
}

}  // namespace

namespace {

// The layer slider, "All heads" and one coloured button per head (the colour of its lines).
void draw_head_pickers(LmPanel& p, const lm::Config& c) {
  LmSession& s = p.session;
  const float fs = ImGui::GetFontSize();
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Layer");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 8);
  int layer = s.layer;
  if (ImGui::SliderInt("##layer", &layer, 0, c.n_layer - 1)) s.select(layer, s.head);
  same_line_if_fits(radio_width("All heads"));
  ImGui::Checkbox("All heads", &p.all_heads);
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Each line joins a token on the left (the query, the token being computed) to an earlier "
      "token on the right (a key it reads from). The stronger the line, the larger the attention "
      "weight; weights under 2% are not drawn, and at most the 12 strongest of each token. Hover a "
      "token to see only its lines; click it to keep them; click again to let go.");
  // The head buttons on the layer's line when they fit (a slide's figure keeps its rows).
  same_line_if_fits(ImGui::CalcTextSize("Head").x + static_cast<float>(c.n_head) * fs * 1.8f);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Head");
  for (int h = 0; h < c.n_head; ++h) {
    ImGui::SameLine(0, fs * 0.2f);
    const bool on = p.all_heads || h == s.head;
    const ImVec4 col = ImGui::ColorConvertU32ToFloat4(lm_head_color(h, on ? 1.0f : 0.25f));
    ImGui::PushStyleColor(ImGuiCol_Button, col);
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered,
                          ImGui::ColorConvertU32ToFloat4(lm_head_color(h, 0.8f)));
    ImGui::PushStyleColor(ImGuiCol_Text,
                          on ? ImVec4(1, 1, 1, 1) : ImGui::GetStyle().Colors[ImGuiCol_Text]);
    ImGui::PushID(h);
    if (ImGui::Button(std::to_string(h).c_str(), {fs * 1.6f, 0})) {
      s.select(s.layer, h);
      p.all_heads = false;
    }
    ImGui::PopID();
    ImGui::PopStyleColor(3);
    if (ImGui::GetContentRegionAvail().x < fs * 2 && h + 1 < c.n_head) ImGui::NewLine();
  }
}

// The rows' height and label size, and which rows are in view: in presentation every token at
// the presentation font, in a window around the one in focus when they are more than the room
// holds (▲/▼ and the wheel move it); elsewhere rows spread over the height, or close up (down to
// 6 px, labels no smaller than 14 px) so the whole sentence stays in view.
void head_view_rows(const Ui& ui, LmPanel& p, int T, float room_h, float& row_h, float& label_px,
                    int& first, int& rows) {
  const float fs = ImGui::GetFontSize();
  const float line = ImGui::GetFrameHeightWithSpacing();
  const LmSession& s = p.session;
  if (ui.presentation) {
    row_h = std::clamp(room_h / static_cast<float>(T), fs * 1.1f, fs * 2.0f);
    label_px = fs;
    if (row_h * static_cast<float>(T) > room_h) {
      rows = std::max(1, static_cast<int>((room_h - 2 * line) / row_h));
      const int anchor = p.pinned_token >= 0 ? p.pinned_token
                         : s.position >= 0   ? std::min(s.position, T - 1)
                                             : T - 1;
      if (anchor != p.head_anchor) p.head_first = anchor - rows / 2;
      p.head_anchor = anchor;
      if (ImGui::IsWindowHovered())
        p.head_first -= static_cast<int>(std::round(ImGui::GetIO().MouseWheel * 3));
    }
    p.head_first = std::clamp(p.head_first, 0, T - rows);
    first = rows < T ? p.head_first : 0;
  } else {
    row_h = std::clamp(room_h / static_cast<float>(T), 6.0f, ImGui::GetTextLineHeight() * 2.0f);
    label_px = std::clamp(row_h * 0.85f, std::min(14.0f, fs), fs);
  }
}

// The token under the pointer (a query on the left, a key on the right), and a click pins it or
// lets it go; a pinned query is the token the other tabs point at too (the next-token chart).
void update_head_view_focus(LmPanel& p, ImVec2 o, float row_h, int first, int rows, float bottom,
                            float xl1, float xr0, float text_w) {
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  p.hover_token = -1;
  if (ImGui::IsWindowHovered()) {
    const int row = static_cast<int>(std::floor((mouse.y - o.y) / row_h));
    if (row >= first && row < first + rows && mouse.y < bottom) {
      if (mouse.x >= o.x && mouse.x < xl1) p.hover_token = row, p.hover_is_key = false;
      if (mouse.x >= xr0 && mouse.x < xr0 + text_w) p.hover_token = row, p.hover_is_key = true;
    }
  }
  if (p.hover_token >= 0 && ImGui::IsMouseClicked(0)) {
    const bool same = p.pinned_token == p.hover_token && p.pinned_is_key == p.hover_is_key;
    p.pinned_token = same ? -1 : p.hover_token;
    p.pinned_is_key = p.hover_is_key;
    if (!p.pinned_is_key) p.session.position = p.pinned_token;
  }
  if (p.pinned_token >= p.session.run()->acts.T) p.pinned_token = -1;
}

// Per query in view, its strongest weights of at least 2% (at most 12), so the picture stays
// readable and the work per frame grows with the tokens, not their square. With a token
// isolated, only its lines (as BertViz does).
void head_view_lines(const LmRun& r, int layer, const std::vector<int>& heads, int first, int rows,
                     int focus, bool focus_key, std::vector<std::array<int, 3>>& lines,
                     std::vector<float>& strength) {
  const lm::Config& c = r.model->config;
  const int T = r.acts.T;
  constexpr int kLinesPerRow = 12;
  constexpr float kMinWeight = 0.02f;
  std::vector<std::pair<float, int>> row;
  for (int h : heads) {
    const float* w = r.acts.att_at(c, layer, 0, h);
    for (int t = first; t < first + rows; ++t) {  // the queries in view, their keys anywhere
      if (focus >= 0 && !focus_key && t != focus) continue;
      row.clear();
      for (int u = 0; u <= t; ++u) {
        if (focus >= 0 && focus_key && u != focus) continue;
        const float a = w[static_cast<size_t>(t) * T + u];
        if (a >= kMinWeight) row.push_back({a, u});
      }
      if (static_cast<int>(row.size()) > kLinesPerRow) {
        std::nth_element(row.begin(), row.begin() + kLinesPerRow, row.end(),
                         [](const auto& x, const auto& y) { return x.first > y.first; });
        row.resize(kLinesPerRow);
      }
      for (auto [a, u] : row) {
        lines.push_back({h, t, u});
        strength.push_back(a);
      }
    }
  }
}

// A line from each query to each key it reads, in its head's colour, as strong as the weight
// (a little fainter when several heads overlap).
void draw_head_lines(ImDrawList* dl, const std::vector<std::array<int, 3>>& lines,
                     const std::vector<float>& strength, bool several_heads, ImVec2 o, float row_h,
                     float xl1, float xr0) {
  const float fs = ImGui::GetFontSize();
  const float thick = std::max(1.5f, fs * 0.12f);
  const float fade = several_heads ? 0.8f : 1.0f;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto [h, t, u] = lines[i];
    dl->AddLine({xl1 + fs * 0.2f, o.y + (t + 0.5f) * row_h},
                {xr0 - fs * 0.2f, o.y + (u + 0.5f) * row_h}, lm_head_color(h, strength[i] * fade),
                thick);
  }
}

// The isolated query's three strongest weights, each as "76% → “·m”".
std::vector<std::string> top_weights(const LmRun& r, const float* w0, int focus) {
  const int T = r.acts.T;
  std::vector<std::pair<float, int>> top;
  for (int u = 0; u <= focus; ++u) top.push_back({w0[static_cast<size_t>(focus) * T + u], u});
  std::sort(top.rbegin(), top.rend());
  std::vector<std::string> out;
  char pct[16];
  for (size_t i = 0; i < std::min<size_t>(3, top.size()); ++i) {
    std::snprintf(pct, sizeof pct, "%.0f%%", 100 * top[i].first);
    // No-break spaces: a wrapped line breaks between the weights, not inside one.
    out.push_back(std::string(pct) + "\u00a0→\u00a0“" +
                  shown(r.tokens[static_cast<size_t>(top[i].second)]) + "”");
  }
  return out;
}

// …one a line, right of the key column.
void draw_top_weights(const LmRun& r, const float* w0, int focus, ImVec2 at) {
  ImGui::SetCursorScreenPos(at);
  ImGui::BeginGroup();
  for (const std::string& line : top_weights(r, w0, focus)) ImGui::TextUnformatted(line.c_str());
  ImGui::EndGroup();
}

// …in one wrapped line above the columns, when there is no room right of them: on a projector
// (1280×720 with 32 px text) the rows in view may not reach the key the query reads, and the
// words still say where its weight goes. Returns the line.
std::string draw_top_weights_above(const LmRun& r, const float* w0, int focus) {
  std::string line = "“" + shown(r.tokens[static_cast<size_t>(focus)]) + "”:";
  for (const std::string& w : top_weights(r, w0, focus)) line += "  " + w;
  ImGui::TextWrapped("%s", line.c_str());
  return line;
}

// The widths of the head view across `avail_w`, with labels of label_px: each token column, the
// room right of the keys for an isolated query's weights in words (0 without them), the gap
// the lines cross, and whether the words fit.
struct HeadViewColumns {
  float text_w = 0, words_w = 0, gap = 0;
  bool words_fit = false;
};
HeadViewColumns head_view_columns(const LmRun& r, float label_px, float avail_w, bool words) {
  const float fs = ImGui::GetFontSize();
  HeadViewColumns w;
  w.text_w = fs * 3;
  for (const std::string& t : r.tokens)
    w.text_w = std::max(w.text_w, ImGui::CalcTextSize(shown(t).c_str()).x * label_px / fs);
  w.text_w = std::min(w.text_w + fs * 0.6f, avail_w * 0.3f);
  w.words_w = words ? ImGui::CalcTextSize("100% → “”").x + w.text_w + fs : 0.0f;
  w.gap = std::clamp(avail_w - 2 * w.text_w - w.words_w, fs * 4, fs * 18);
  w.words_fit = 2 * w.text_w + w.gap + w.words_w <= avail_w + 1;
  return w;
}

}  // namespace

void draw_lm_head_view(Ui& ui, LmPanel& p) {
  LmSession& s = p.session;
  const LmRun* r = s.run();
  const lm::Config& c = r->model->config;
  const int T = r->acts.T;
  const float fs = ImGui::GetFontSize();
  // The head chosen, within the model on screen: a lesson step may choose a head of the model on
  // its way (its head 5 while the last model, of 4 heads, is still shown).
  const int layer = std::min(s.layer, c.n_layer - 1), head = std::min(s.head, c.n_head - 1);

  draw_head_pickers(p, c);

  // The two columns of tokens, scrolling when the sentence is long.
  ImGui::BeginChild("head-view", {0, 0}, false,
                    ui.presentation ? ImGuiWindowFlags_NoScrollWithMouse : 0);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const bool one_query =
      !p.all_heads && p.pinned_token >= 0 && !p.pinned_is_key && p.pinned_token < T;
  p.head_view.words_above.clear();
  // Decided before the rows are laid out (the line takes some of their height), with the
  // labels at their largest, the font's size.
  if (one_query && !head_view_columns(*r, fs, ImGui::GetContentRegionAvail().x, true).words_fit)
    p.head_view.words_above =
        draw_top_weights_above(*r, r->acts.att_at(c, layer, 0, head), p.pinned_token);
  const float room_h = ImGui::GetContentRegionAvail().y - fs * 0.5f;
  float row_h = 0, label_px = 0;
  int first = 0, rows = T;
  head_view_rows(ui, p, T, room_h, row_h, label_px, first, rows);
  const int label_every = std::max(1, static_cast<int>(std::ceil(label_px * 1.05f / row_h)));
  if (rows < T) {  // the tokens before the window
    ImGui::BeginDisabled(first == 0);
    if (ImGui::ArrowButton("##earlier", ImGuiDir_Up)) p.head_first = std::max(0, first - rows / 2);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("%d earlier tokens", first);
  }
  const float avail_w = ImGui::GetContentRegionAvail().x;
  // One head shown: room to the right for an isolated query's top weights in words.
  const HeadViewColumns widths = head_view_columns(*r, label_px, avail_w, !p.all_heads);
  const float text_w = widths.text_w, gap = widths.gap;
  const ImVec2 top = ImGui::GetCursorScreenPos();
  // Row t is drawn at o.y + t × row_h: the rows before the window are above the clip.
  const ImVec2 o{top.x, top.y - static_cast<float>(first) * row_h};
  const float xl1 = o.x + text_w, xr0 = xl1 + gap;  // where the lines start and end
  ImGui::Dummy({2 * text_w + gap, row_h * static_cast<float>(rows) + fs * 0.5f});
  const float bottom = top.y + row_h * static_cast<float>(rows);
  dl->PushClipRect({top.x, top.y}, {top.x + avail_w, bottom + fs * 0.5f}, true);

  update_head_view_focus(p, o, row_h, first, rows, bottom, xl1, xr0, text_w);
  const int focus = p.pinned_token >= 0 ? p.pinned_token : p.hover_token;
  const bool focus_key = p.pinned_token >= 0 ? p.pinned_is_key : p.hover_is_key;

  std::vector<int> heads;
  for (int h = 0; h < c.n_head; ++h)
    if (p.all_heads || h == head) heads.push_back(h);
  std::vector<std::array<int, 3>> lines;  // head, query, key
  std::vector<float> strength;            // of each line in `lines`
  head_view_lines(*r, layer, heads, first, rows, focus, focus_key, lines, strength);
  std::vector<char> linked_q(static_cast<size_t>(T), focus < 0),
      linked_k(static_cast<size_t>(T), focus < 0);
  if (focus >= 0) {
    (focus_key ? linked_k : linked_q)[static_cast<size_t>(focus)] = 1;
    for (const auto& l : lines)
      linked_q[static_cast<size_t>(l[1])] = linked_k[static_cast<size_t>(l[2])] = 1;
  }
  p.head_view.origin = o;
  p.head_view.row_h = row_h;
  p.head_view.first = first;
  p.head_view.rows = rows;
  p.head_view.label_every = label_every;
  p.head_view.label_px = label_px;
  p.head_view.queries_x1 = xl1;
  p.head_view.keys_x0 = xr0;
  p.head_view.keys_x1 = xr0 + text_w;
  p.head_view.faded_queries.clear();
  p.head_view.faded_keys.clear();
  for (int t = 0; t < T; ++t) {
    if (!linked_q[static_cast<size_t>(t)]) p.head_view.faded_queries.push_back(t);
    if (!linked_k[static_cast<size_t>(t)]) p.head_view.faded_keys.push_back(t);
  }
  // Token backgrounds: with a query isolated, each key's box is tinted by the weight it gets
  // (of the first head shown); with a key isolated, each query's by the weight it gives.
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 faded = ImGui::GetColorU32(ImGuiCol_Text, 0.3f);
  const float* w0 = r->acts.att_at(c, layer, 0, heads.front());
  for (int t = first; t < first + rows; ++t) {
    const float y = o.y + t * row_h;
    float left_a = 0, right_a = 0;
    if (focus >= 0 && !focus_key) {
      left_a = t == focus ? 0.35f : 0;
      right_a = t <= focus ? w0[static_cast<size_t>(focus) * T + t] : 0;
    } else if (focus >= 0) {
      right_a = t == focus ? 0.35f : 0;
      left_a = t >= focus ? w0[static_cast<size_t>(t) * T + focus] : 0;
    }
    if (left_a > 0)
      dl->AddRectFilled({o.x, y}, {xl1, y + row_h}, lm_head_color(heads.front(), left_a), 3);
    if (right_a > 0)
      dl->AddRectFilled({xr0, y}, {xr0 + text_w, y + row_h}, lm_head_color(heads.front(), right_a),
                        3);
    // Every token when the rows are tall enough, else every so many (and the focused one).
    if (t % label_every != 0 && t != focus) continue;
    const std::string label = shown(r->tokens[static_cast<size_t>(t)]);
    ImFont* font = ImGui::GetFont();
    const float tw = font->CalcTextSizeA(label_px, FLT_MAX, 0, label.c_str()).x;
    const float ty = y + (row_h - label_px) / 2;
    const float half = std::max(row_h, label_px) / 2;
    const ImVec4 clip_l{o.x, y + row_h / 2 - half, xl1, y + row_h / 2 + half},
        clip_r{xr0, y + row_h / 2 - half, xr0 + text_w, y + row_h / 2 + half};
    dl->AddText(font, label_px, {xl1 - tw - fs * 0.3f, ty},
                linked_q[static_cast<size_t>(t)] ? text : faded, label.c_str(), nullptr, 0,
                &clip_l);
    dl->AddText(font, label_px, {xr0 + fs * 0.3f, ty},
                linked_k[static_cast<size_t>(t)] ? text : faded, label.c_str(), nullptr, 0,
                &clip_r);
  }
  draw_head_lines(dl, lines, strength, heads.size() > 1, o, row_h, xl1, xr0);
  dl->PopClipRect();
  p.head_view.lines = std::move(lines);
  if (rows < T) {  // the tokens after the window
    ImGui::SetCursorScreenPos({top.x, bottom + fs * 0.5f});
    ImGui::BeginDisabled(first + rows >= T);
    if (ImGui::ArrowButton("##later", ImGuiDir_Down))
      p.head_first = std::min(T - rows, first + rows / 2);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("%d later tokens", T - first - rows);
  }
  if (focus >= 0 && !focus_key && heads.size() == 1 && widths.words_fit && focus >= first &&
      focus < first + rows && p.head_view.words_above.empty()) {
    // Beside the query's row, raised where the lines would run past the last row.
    const float words_h =
        ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(std::min(3, focus + 1));
    const float y = std::max(top.y, std::min(o.y + focus * row_h, bottom - words_h));
    draw_top_weights(*r, w0, focus, {xr0 + text_w + fs, y});
  }
  ImGui::EndChild();
}

}  // namespace attn
