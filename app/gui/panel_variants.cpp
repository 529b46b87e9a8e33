// Controls for every variant the engine supports: causal masks (both alignments), padding, sliding
// window, global tokens, a custom mask toggled by clicking cells, scale, temperature (with each
// row's entropy), cross-attention, and the number of query and key/value heads.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "backends/backend.h"
#include "gui/ui.h"

namespace attn {
namespace {

void heading(Ui& ui, const char* text) {
  ImGui::Spacing();
  ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted(text);
  ImGui::PopFont();
  ImGui::Separator();
}

// The causal mask's alignment, padding and the sliding window, each with its help.
void draw_mask_controls(Ui& ui) {
  AppState& st = ui.state;
  const MaskSpec& m = st.scenario().options.mask;
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  int causal = static_cast<int>(m.causal);
  const char* kinds[] = {"none", "causal, top-left", "causal, lower-right"};
  ImGui::SetNextItemWidth(std::min(fs * 11, ImGui::GetContentRegionAvail().x -
                                                ImGui::CalcTextSize("causal").x -
                                                ImGui::GetStyle().ItemInnerSpacing.x));
  if (ImGui::Combo("causal", &causal, kinds, 3))
    ui.defer([=, &st] { st.set_causal(static_cast<CausalAlign>(causal)); });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Causal: a token may not look at later tokens. Top-left puts query i at key i (as "
      "PyTorch's is_causal); lower-right aligns the last query with the last key, as when "
      "decoding with a key/value cache (n_q < n_k).");

  bool padding = m.key_length.has_value();
  if (ImGui::Checkbox("padding", &padding))
    ui.defer([&st, padding, n_k = t.n_k] {
      st.set_key_length(padding ? std::optional<int>(std::max(1, n_k - 1)) : std::nullopt);
    });
  if (padding) {
    same_line_if_fits(fs * 5 + ImGui::CalcTextSize("real keys 00").x);
    int L = *m.key_length;
    if (slider_int_beside("##real-keys", "real keys ", &L, 0, t.n_k, fs * 5))
      ui.defer([=, &st] { st.set_key_length(L); });
  }
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Padding: batches pad short sequences; keys from position L on are padding and "
      "hidden from every query.");

  bool window = m.window.has_value();
  if (ImGui::Checkbox("sliding window", &window))
    ui.defer([=, &st] { st.set_window(window ? std::optional<int>(1) : std::nullopt); });
  if (window) {
    same_line_if_fits(fs * 5 + ImGui::CalcTextSize("W = 00").x);
    int W = *m.window;
    if (slider_int_beside("##window", "W = ", &W, 0, std::max(1, t.n_k), fs * 5))
      ui.defer([=, &st] { st.set_window(W); });
  }
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Sliding window: query i sees only keys with |i − j| ≤ W, so the cost grows with "
      "n·W instead of n² (Longformer, Mistral).");
}

// Parses a list of global positions such as "0, 5": whole numbers of at least 0, or nullopt.
std::optional<std::vector<int>> parse_positions(const std::string& text) {
  std::vector<int> g;
  std::istringstream is(text);
  std::string item;
  bool ok = true;
  while (std::getline(is, item, ',')) {
    std::string error;
    std::optional<float> v = parse_user_number(item, error);
    if (!v || *v < 0 || *v != std::floor(*v))
      ok = false;
    else
      g.push_back(static_cast<int>(*v));
  }
  if (!ok) return std::nullopt;
  return g;
}

// The global tokens: a checkbox per position up to 24 positions, else a list typed in.
void draw_global_tokens(Ui& ui) {
  AppState& st = ui.state;
  const MaskSpec& m = st.scenario().options.mask;
  const AttentionTrace& t = st.trace();
  ImGui::TextUnformatted("global tokens");
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Global positions see every key and are seen by every query; they relax the "
      "window only, never the causal mask or padding.");
  const int positions = std::max(t.n_q, t.n_k);
  if (positions <= 24) {
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    for (int p = 0; p < positions; ++p) {
      const std::string label =
          p < static_cast<int>(t.query_tokens.size()) ? t.query_tokens[p] : std::to_string(p);
      // Flow the checkboxes like words: beside the previous one when it fits.
      const float w = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                      ImGui::CalcTextSize(label.c_str()).x;
      if (p > 0 && ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w < right)
        ImGui::SameLine();
      bool on = std::find(m.global.begin(), m.global.end(), p) != m.global.end();
      ImGui::PushID(p);
      if (ImGui::Checkbox(label.c_str(), &on)) ui.defer([=, &st] { st.toggle_global(p); });
      ImGui::PopID();
    }
    return;
  }
  std::string& text = ui.editor.positions_text;
  if (!ImGui::IsAnyItemActive()) {
    std::ostringstream os;
    for (size_t i = 0; i < m.global.size(); ++i) os << (i ? ", " : "") << m.global[i];
    text = os.str();
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
  if (ImGui::InputText("positions", &text, ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (std::optional<std::vector<int>> g = parse_positions(text))
      ui.defer([g = *g, &st] { st.set_global(g); });
    else
      st.set_message("global positions: expected whole numbers such as 0, 5", true);
  }
}

// The toggle for editing a custom mask by clicking cells, and a button to clear it.
void draw_custom_mask_toggle(Ui& ui) {
  AppState& st = ui.state;
  const MaskSpec& m = st.scenario().options.mask;
  // A checkbox's label cannot wrap: the longest wording that fits the column.
  const char* edit_label = "custom mask";
  for (const char* label : {"edit the custom mask by clicking cells", "custom mask (click cells)"})
    if (radio_width(label) <= ImGui::GetContentRegionAvail().x) {
      edit_label = label;
      break;
    }
  ImGui::Checkbox((std::string(edit_label) + "##custom-mask").c_str(), &ui.editor.custom_mask);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Click cells of the heatmap to hide or show them (a mask of your own)");
  if (!m.custom.empty()) {
    same_line_if_fits(button_width("clear"));
    if (ImGui::SmallButton("clear")) ui.defer([=, &st] { st.clear_custom_mask(); });
  }
}

// The scale (default 1/√d_k or chosen) and the temperature.
void draw_scale_controls(Ui& ui) {
  AppState& st = ui.state;
  const Scenario& s = st.scenario();
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  bool override_scale = s.options.scale.has_value();
  const float default_scale = 1.0f / std::sqrt(static_cast<float>(std::max(1, t.d_k)));
  if (ImGui::Checkbox("choose the scale", &override_scale))
    ui.defer([=, &st] {
      st.set_scale(override_scale ? std::optional<float>(default_scale) : std::nullopt);
    });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "The default 1/√d_k keeps the scores' variance near 1 whatever d_k is; try 1 (no "
      "scaling) with a large d_k to see the softmax saturate.");
  if (override_scale) {
    float sc = *s.options.scale;
    if (slider_float_beside("##scale", "scale ", &sc, 0.01f, 4.0f, "%.3f", fs * 8,
                            ImGuiSliderFlags_Logarithmic))
      ui.defer([=, &st] { st.set_scale(sc); });
  } else {
    ImGui::TextDisabled("scale = 1/√%d = %.4f", t.d_k, default_scale);
  }
  float temp = s.options.temperature;
  if (slider_float_beside("##temperature", "temperature T = ", &temp, 0.05f, 20.0f, "%.2f", fs * 8,
                          ImGuiSliderFlags_Logarithmic))
    ui.defer([=, &st] { st.set_temperature(temp); });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "softmax(x / T): T < 1 sharpens the weights towards the largest score, T > 1 "
      "flattens them towards uniform. The entropy of each row (in bits) shows it: 0 = all "
      "on one key, log₂ n = uniform.");
}

// The entropy of each row of the current head's weights, on one line. Only the rows that fit
// are computed, once per trace.
void draw_row_entropies(Ui& ui) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const TraceStep* w = t.find(StageId::kWeights);
  if (!w || st.head() >= static_cast<int>(w->heads.size())) return;
  const Matrix& wm = w->heads[st.head()];
  RowEntropyCache& ent = ui.row_entropies;
  const uint64_t serial = st.head_serial(st.head());
  if (ent.serial != serial || ent.head != st.head() || ent.rows != wm.rows() ||
      ent.cols != wm.cols())
    ent = {serial, st.head(), wm.rows(), wm.cols(), {}};
  char uniform[32];
  std::snprintf(uniform, sizeof uniform, "%.2f", std::log2(std::max(1, t.n_k)));
  text_disabled_wrapped(std::string("entropy per row, bits (uniform = ") + uniform + "):");
  // As many rows as fit on one line: ImGui's wrapping would split "1.57" after its dot.
  std::string line;
  char buf[64];
  const float room = ImGui::GetContentRegionAvail().x;
  for (size_t i = 0; i < static_cast<size_t>(wm.rows()); ++i) {
    if (i == ent.bits.size()) ent.bits.push_back(row_entropy_bits(wm.row(i))[0]);
    std::snprintf(buf, sizeof buf, "%s%.2f", i ? "  " : "", ent.bits[i]);
    if (ImGui::CalcTextSize((line + buf + "  …").c_str()).x > room) {
      line += "  …";
      break;
    }
    line += buf;
  }
  ImGui::TextDisabled("%s", line.c_str());
}

// Cross-attention, the number of query heads and the K/V heads (a divisor of it).
void draw_heads_controls(Ui& ui) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  const float fs = ImGui::GetFontSize();
  bool cross = st.cross_attention();
  if (ImGui::Checkbox("cross-attention", &cross))
    ui.defer([=, &st] { st.set_cross_attention(cross); });
  same_line_if_fits(ImGui::CalcTextSize("(?)").x);
  help_marker(
      "Keys and values come from another sequence than the queries (a decoder reading "
      "its encoder): the two token lists are edited separately and n_q may differ "
      "from n_k.");
  int H = t.num_heads, G = t.num_kv_heads;
  if (slider_int_beside("##heads", "query heads H = ", &H, 1, 16, fs * 6)) {
    int g = std::min(G, H);
    while (H % g) --g;  // keep H_kv a divisor of H
    ui.defer([=, &st] { st.set_heads(H, g); });
  }
  std::vector<int> divisors;
  for (int d = 1; d <= t.num_heads; ++d)
    if (t.num_heads % d == 0) divisors.push_back(d);
  ImGui::TextUnformatted("key/value heads H_kv");
  const float right_edge = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  for (int d : divisors) {
    const std::string text = std::to_string(d) + " (MHA)";  // the widest label
    const float w = ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x +
                    ImGui::CalcTextSize(text.c_str()).x;
    if (ImGui::GetItemRectMax().x + ImGui::GetStyle().ItemSpacing.x + w < right_edge)
      ImGui::SameLine();
    const std::string label = std::to_string(d) + (d == t.num_heads ? " (MHA)"
                                                   : d == 1         ? " (MQA)"
                                                                    : " (GQA)");
    if (ImGui::RadioButton(label.c_str(), G == d))
      ui.defer([&st, d, h = t.num_heads] { st.set_heads(h, d); });
  }
}

// The backend choice and the device it computes on.
void draw_compute_choice(Ui& ui) {
  AppState& st = ui.state;
  bool first_backend = true;
  for (const std::string& b : available_backends()) {
    if (!first_backend) same_line_if_fits(radio_width(b.c_str()));
    first_backend = false;
    if (ImGui::RadioButton(b.c_str(), st.backend_name().rfind(b, 0) == 0))
      ui.defer([=, &st] { st.set_backend(b); });
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("computing on %s", st.backend_name().c_str());
  ImGui::PopTextWrapPos();
}

}  // namespace

void draw_variants_panel(Ui& ui) {
  ImGui::BeginChild("variants", {0, 0}, false);
  heading(ui, "Masks");
  draw_mask_controls(ui);
  draw_global_tokens(ui);
  draw_custom_mask_toggle(ui);

  heading(ui, "Scale and temperature");
  draw_scale_controls(ui);
  draw_row_entropies(ui);

  heading(ui, "Sequences and heads");
  draw_heads_controls(ui);

  heading(ui, "Beyond masks");
  draw_beyond_masks_controls(ui);

  heading(ui, "Compute");
  draw_compute_choice(ui);
  ImGui::EndChild();
}

}  // namespace attn
