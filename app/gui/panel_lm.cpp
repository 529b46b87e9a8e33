// The language-model window: which model is open and the sentence it reads, the model view beside
// tabs for the head view, the next-token chart, what each head does and the KV cache; and opening
// one real head in the stepper.
#include "gui/panel_lm.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attention/format.h"
#include "gui/gui_setup.h"
#include "lm/model_card.h"

namespace attn {

ImU32 lm_head_color(int h, float alpha) {
  // Tableau's 10 categorical colours, distinct for most kinds of colour vision, then repeated a
  // little darker.
  static const ImU32 base[] = {IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),
                               IM_COL32(44, 160, 44, 255),   IM_COL32(214, 39, 40, 255),
                               IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                               IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255),
                               IM_COL32(188, 189, 34, 255),  IM_COL32(23, 190, 207, 255)};
  ImVec4 c = ImGui::ColorConvertU32ToFloat4(base[h % 10]);
  const float dark = h >= 10 ? 0.7f : 1.0f;
  return ImGui::ColorConvertFloat4ToU32({c.x * dark, c.y * dark, c.z * dark, alpha});
}

const char* lm_role_name(int role) {
  switch (role) {
    case 0:
      return "Previous token";
    case 1:
      return "First token (attention sink)";
    case 2:
      return "Self (diagonal)";
    default:
      return "Induction";
  }
}

const char* lm_role_definition(int role) {
  switch (role) {
    case 0:
      return "The average weight a token gives the token just before it (queries 1 … n−1). "
             "1 means the head always looks one step back.";
    case 1:
      return "The average weight a token gives the very first token (queries 1 … n−1). Heads "
             "with nothing useful to do often park their attention there: an \"attention sink\".";
    case 2:
      return "The average weight a token gives itself, the diagonal (queries 1 … n−1).";
    default:
      return "For every token that appeared before, the weight it gives the token that came "
             "right AFTER that earlier occurrence (…A B … A → B), averaged. Induction heads copy "
             "what followed last time; type a sentence twice to see them.";
  }
}

double lm_role_value(const lm::HeadScores& s, int role) {
  switch (role) {
    case 0:
      return s.previous;
    case 1:
      return s.first;
    case 2:
      return s.self;
    default:
      return s.induction;
  }
}

void open_lm_head_in_stepper(Ui& ui, int l, int h, int query) {
  LmPanel& p = *ui.lm.state;
  const LmSession& s = p.session;
  if (!s.run()) return;
  p.session.select(l, h);
  Scenario sc = s.head_scenario(l, h);
  ui.request_discard_check(
      [&ui, sc = std::move(sc), tag = s.origin_tag(l, h), l, h, query]() mutable {
        if (!ui.state.load_scenario(std::move(sc), tag)) return;
        ui.state.set_stage(StageId::kWeights);
        if (query >= 0) {
          // Selected now when the trace was computed at once, else when it lands (poll_lm_panel).
          ui.state.select_row(query);
          const bool now = !ui.state.computing() && ui.state.selection().query == query;
          ui.lm.state->stepper_query = now ? -1 : query;
        }
        ui.state.set_message("Layer " + std::to_string(l) + ", head " + std::to_string(h) +
                                 " is open in the stepper with its real Q, K and V.  View → "
                                 "Language model goes back to the model.",
                             false);
        ui.lm.state->opened_layer = l;
        ui.lm.state->opened_head = h;
        ui.lm.open = false;
      });
}

std::string lm_open_head_kv_text(const Ui& ui) {
  int l = 0, h = 0;
  if (!LmSession::parse_origin(ui.state.origin(), l, h) || !ui.lm.state) return "";
  const lm::Model* m = ui.lm.state->session.model();
  if (!m || !m->config.llama_family() || h < 0 || h >= m->config.n_head) return "";
  return lm::kv_head_text(m->config, h);
}

void draw_lm_head_note(Ui& ui) {
  int l = 0, h = 0;
  if (!LmSession::parse_origin(ui.state.origin(), l, h)) return;
  const ImVec4 accent(0.85f, 0.35f, 0.05f, 1);
  ImGui::PushStyleColor(ImGuiCol_Text, accent);
  ImGui::TextWrapped("A real head: layer %d, head %d of %s.", l, h,
                     ui.lm.state && ui.lm.state->session.model()
                         ? ui.lm.state->session.model()->name.c_str()
                         : "the model");
  ImGui::PopStyleColor();
  // Grouped-query: the K and V here are shared; say with which query heads.
  const std::string kv = lm_open_head_kv_text(ui);
  if (!kv.empty()) ImGui::TextWrapped("Q is query head %d's own; K and V are %s.", h, kv.c_str());
  ImGui::TextWrapped(
      "Editing a cell of Q, K or V recomputes this head only. Later layers and the next-token "
      "prediction are not recomputed.");
  if (ui.lm.state && ImGui::Button("Back to the model")) ui.lm.open = true;
  ImGui::Separator();
}

namespace {

// Live generation: Generate / Stop, how many tokens, greedy or sampled, and what was added (with
// a Copy button). Each token runs as the sentence does, so its row appears in every view.
// `compact` (presentation): the button alone, on the sentence's line when it fits, and what was
// added; the token count and sampling are Tab's full bar.
void draw_generate_row(LmPanel& p, bool compact) {
  LmSession& s = p.session;
  if (!s.run()) return;
  const float fs = ImGui::GetFontSize();
  if (compact) same_line_if_fits(button_width(s.generating() ? "■ Stop" : "Continue"));
  if (s.generating()) {
    if (ImGui::Button("■ Stop")) s.stop_generating();
  } else if (ImGui::Button(s.generated_ids().empty() ? "Generate" : "Continue")) {
    s.start_generating(p.generate_tokens, p.generate_sample);  // a refusal sets error(), shown
  }
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(fs * 28);
    ImGui::TextUnformatted(
        "Adds tokens one at a time: each is the model's choice after the last token, then the "
        "sentence with it runs, so its attention row appears in every view as it is produced.");
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  if (compact) {
    if (!s.generated_ids().empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("Generated: %s",
                          printable_text(clip_utf8(s.generated_text(), 300)).c_str());
      ImGui::PopTextWrapPos();
    }
    return;
  }
  same_line_if_fits(fs * 7);
  ImGui::SetNextItemWidth(fs * 4);
  ImGui::DragInt("tokens##generate", &p.generate_tokens, 0.2f, 1, 256);
  p.generate_tokens = std::clamp(p.generate_tokens, 1, 256);
  char sample[64];
  std::snprintf(sample, sizeof sample, "sample at T = %.2f", s.temperature);
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(sample).x + fs);
  ImGui::Checkbox(sample, &p.generate_sample);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Off: the most likely token each time (greedy). On: drawn from the "
        "next-token probabilities at the Next tab's temperature.");
  if (!s.generated_ids().empty()) {
    const std::string text = printable_text(clip_utf8(s.generated_text(), 600));
    same_line_if_fits(button_width("Copy") + fs);
    if (ImGui::Button("Copy")) ImGui::SetClipboardText(s.generated_text().c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Copy the generated text");
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("Generated %zu token%s%s: %s", s.generated_ids().size(),
                        s.generated_ids().size() == 1 ? "" : "s", s.generating() ? " so far" : "",
                        text.c_str());
    ImGui::PopTextWrapPos();
  }
}

// One model of the Shipped models list: its name in bold over its model card's first paragraph
// (grey, wrapped); the whole block is one selectable item that opens the model.
void draw_shipped_model_item(Ui& ui, LmPanel& p, const std::string& name) {
  auto cached = p.shipped_summaries.find(name);
  if (cached == p.shipped_summaries.end()) {
    std::string error;
    const std::string folder = lm::resolve_model_folder(name, error);
    cached = p.shipped_summaries.emplace(name, folder.empty() ? "" : lm::model_card_summary(folder))
                 .first;
  }
  const std::string& summary = cached->second;
  const ImGuiStyle& st = ImGui::GetStyle();
  const float wrap_w = ImGui::GetContentRegionAvail().x;
  const float line_h = ImGui::GetTextLineHeight();
  const float summary_h =
      summary.empty() ? 0 : ImGui::CalcTextSize(summary.c_str(), nullptr, false, wrap_w).y;
  const ImVec2 at = ImGui::GetCursorPos();
  const bool current = p.session.model() && p.session.model()->name == name;
  ImGui::PushID(name.c_str());
  const bool chosen = ImGui::Selectable(
      "##model", current, 0,
      ImVec2(0, line_h + (summary.empty() ? 0 : st.ItemSpacing.y * 0.5f + summary_h)));
  ImGui::PopID();
  // Grey on the hover colour is hard to read on a projector: the item under the mouse gets the
  // text colour.
  const bool hot = ImGui::IsItemHovered();
  p.shipped_drawn.push_back({name, summary, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
  const ImVec2 next = ImGui::GetCursorPos();
  ImGui::SetCursorPos(at);
  if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
  ImGui::TextUnformatted(name.c_str());
  if (ui.fonts.bold) ImGui::PopFont();
  if (!summary.empty()) {
    ImGui::SetCursorPos(ImVec2(at.x, at.y + line_h + st.ItemSpacing.y * 0.5f));
    ImGui::PushTextWrapPos(at.x + wrap_w);
    if (!hot) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextUnformatted(summary.c_str());
    if (!hot) ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
  }
  ImGui::SetCursorPos(next);
  ImGui::Dummy(ImVec2(0, st.ItemSpacing.y * 0.5f));
  if (chosen) p.session.open(name);
}

void draw_model_bar(Ui& ui, LmPanel& p) {
  LmSession& s = p.session;
  const float fs = ImGui::GetFontSize();
  // Presentation keeps the height for the views: the model's name and the sentence on one line,
  // without the file controls, the model's sizes and the hint (Tab brings them back).
  const bool compact = ui.presentation && !ui.panels_shown && s.model();
  if (compact) {
    ImGui::AlignTextToFramePadding();
    if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
    ImGui::TextUnformatted(s.model()->name.c_str());
    if (ui.fonts.bold) ImGui::PopFont();
    ImGui::SameLine();
  } else if (ImGui::Button("Open model folder…")) {
    ui.dialogs.path = PathDialog::kOpenModel;
    ui.dialogs.buffer = s.model() ? s.model()->folder : "";
  }
  const std::vector<std::string> shipped =
      compact ? std::vector<std::string>{} : lm::shipped_models();
  if (!shipped.empty()) {
    const float button_w = fs * 10;
    same_line_if_fits(button_w);
    ImGui::SetNextItemWidth(button_w);
    // The list is wider than its button: each model's name, and under it, in grey, the first
    // paragraph of its model card (README.md) saying what it was trained on and what it does.
    const ImVec2 work = ImGui::GetMainViewport()->WorkSize;
    const float list_w = std::min(fs * 30, work.x - 2 * fs);
    ImGui::SetNextWindowSizeConstraints(ImVec2(list_w, 0), ImVec2(list_w, work.y * 0.8f));
    p.shipped_button_min = ImGui::GetCursorScreenPos();
    p.shipped_button_max =
        ImVec2(p.shipped_button_min.x + button_w, p.shipped_button_min.y + ImGui::GetFrameHeight());
    p.shipped_drawn.clear();
    if (ImGui::BeginCombo("##shipped", "Shipped models")) {
      for (const std::string& n : shipped) draw_shipped_model_item(ui, p, n);
      ImGui::EndCombo();
    }
  }
  if (compact) {
    // The name is on the sentence's line.
  } else if (s.model()) {
    const lm::Config& c = s.model()->config;
    same_line_if_fits(ImGui::CalcTextSize(s.model()->name.c_str()).x);
    ImGui::Text("%s", s.model()->name.c_str());
    // Today's models say how their query heads share K/V heads (MHA, GQA or MQA).
    char heads[96] = "";
    if (c.llama_family())
      std::snprintf(heads, sizeof heads, " sharing %d K/V head%s (%s)", c.kv_heads(),
                    c.kv_heads() == 1 ? "" : "s",
                    c.kv_heads() == 1          ? "MQA"
                    : c.kv_heads() == c.n_head ? "MHA"
                                               : "GQA");
    char info[384];
    std::snprintf(info, sizeof info,
                  "%s · %d layers × %d heads%s · d_model %d · d_k %d · %d positions · "
                  "vocabulary %d · %.1f M parameters (%s)",
                  arch_name(c.arch), c.n_layer, c.n_head, heads, c.n_embd, c.head_size(),
                  c.n_positions, c.vocab_size, s.model()->parameter_count() / 1e6,
                  s.model()->dtype.c_str());
    // Beside the name when it fits, else below it, wrapped (large fonts, narrow windows).
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(info).x) ImGui::NewLine();
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", info);
    ImGui::PopTextWrapPos();
  } else {
    ImGui::TextDisabled("No model open.");
  }

  // The sentence: applied as it is typed (the forward pass runs on a worker).
  // …and follows the session's own choice for a model just opened (the induction model starts
  // on letters) until the user types.
  // …and shows each token generation adds as it comes.
  if (!p.text_initialised || (s.text_is_default() && p.text_buffer != s.text()) ||
      s.generated_ids().size() != p.generated_shown) {
    p.text_buffer = s.text();
    p.text_initialised = true;
    p.generated_shown = s.generated_ids().size();
  }
  if (!compact) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Sentence");
    ImGui::SameLine();
  }
  const float button_w = ImGui::CalcTextSize("Repeat it").x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - button_w - fs * 2.5f);
  if (ImGui::InputText("##sentence", &p.text_buffer)) s.set_text(p.text_buffer);
  ImGui::SameLine();
  if (ImGui::Button("Repeat it")) {
    p.text_buffer += " " + p.text_buffer;
    s.set_text(p.text_buffer);
  }
  ImGui::SameLine();
  help_marker(
      "Repeats the sentence once more. In the repeat, every token has appeared before, so "
      "induction heads (…A B … A → B) show up in the head view and the scores.");
  draw_generate_row(p, compact);

  if (s.busy()) {
    const char* spin = "|/-\\";
    ImGui::Text("%c %s… %.1f s", spin[static_cast<int>(ImGui::GetTime() * 8) % 4],
                s.busy_what().c_str(), s.busy_seconds());
  } else if (!s.error().empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(ImVec4(0.85f, 0.1f, 0.1f, 1), "⚠ %s", s.error().c_str());
    ImGui::PopTextWrapPos();
  } else if (compact) {
    // No hint line: the views take the height.
  } else if (const LmRun* r = s.run()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled(
        "%zu tokens. Click a head in the model view to step through its arithmetic.",
        r->ids.size());
    ImGui::PopTextWrapPos();
  } else {
    ImGui::TextDisabled(" ");
  }
}

void draw_no_model(Ui& ui) {
  ImGui::Spacing();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(
      "Open a model to see attention inside a real transformer: one of the shipped models, or a "
      "GPT-2, Llama, Mistral or Qwen2 folder (config.json, model.safetensors and the tokenizer's "
      "files, as Hugging Face writes them; docs/lm.md says how to get GPT-2 small).");
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  if (ImGui::Button("Open model folder…")) ui.dialogs.path = PathDialog::kOpenModel;
}

}  // namespace

void poll_lm_panel(Ui& ui) {
  LmPanel& p = ui.lm.get();
  p.session.poll();
  // The status bar names the model that just opened (not the example loaded behind it), then a
  // failure: one poll can take both — a model loaded and its first pass, started at once, already
  // failed — and the failure is the news.
  if (const std::string opened = p.session.take_opened(); !opened.empty())
    ui.state.set_message(opened, false);
  if (const std::string failed = p.session.take_failure(); !failed.empty()) {
    ui.state.set_message(failed, true);
    p.lesson_stepper.layer = -1;
  }
  // A lesson step's head, once the step's model has run on the step's sentence: the lesson owns
  // the stepper, so it is replaced without asking (as every step's example replaces it).
  if (p.lesson_stepper.layer >= 0 && !p.session.busy() && p.session.run()) {
    const LmPanel::StepperRequest r = p.lesson_stepper;
    p.lesson_stepper.layer = -1;
    const lm::Config& c = p.session.model()->config;
    if (r.layer < c.n_layer && r.head < c.n_head) {
      p.session.select(r.layer, r.head);
      if (ui.state.load_scenario(p.session.head_scenario(r.layer, r.head),
                                 p.session.origin_tag(r.layer, r.head))) {
        if (!ui.state.set_stage(r.stage)) ui.state.set_stage(StageId::kWeights);
        if (r.rope_view >= 0) ui.rope.request = r.rope_view;
        ui.state.set_message("Layer " + std::to_string(r.layer) + ", head " +
                                 std::to_string(r.head) + " of " + p.session.model()->name +
                                 " is open in the stepper with its real Q, K and V",
                             false);
        p.opened_layer = r.layer;
        p.opened_head = r.head;
      }
    } else {
      ui.state.set_message("The lesson's head (layer " + std::to_string(r.layer) + ", head " +
                               std::to_string(r.head) + ") is not in this model",
                           true);
    }
  }
  // The window keeps drawing until the model's work (and the tabs' views) is done.
  ui.lm.busy = p.session.busy() || p.session.deriving();
  if (p.stepper_query >= 0 && !ui.state.computing()) {
    int l = 0, h = 0;
    if (LmSession::parse_origin(ui.state.origin(), l, h)) ui.state.select_row(p.stepper_query);
    p.stepper_query = -1;
  }
}

bool open_default_lm_model(LmPanel& p) {
  if (p.default_offered) return false;
  p.default_offered = true;
  const std::vector<std::string> shipped = lm::shipped_models();
  return !p.session.has_model() && !p.session.busy() &&
         std::find(shipped.begin(), shipped.end(), kDefaultLmModel) != shipped.end() &&
         p.session.open(kDefaultLmModel);
}

void draw_lm_panel(Ui& ui) {
  LmPanel& p = ui.lm.get();
  open_default_lm_model(p);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float top = ImGui::GetFrameHeight();
  // Placed when it opens, and again when the main window changes size or the font does (F11,
  // Ctrl+=, a resize), so it never hangs off the screen or leaves an empty band.
  const ImVec4 placed{vp->Size.x, vp->Size.y, top, 0};
  const bool relayout = p.placed_for.x != placed.x || p.placed_for.y != placed.y ||
                        p.placed_for.z != placed.z || ui.layout.reset;
  p.placed_for = placed;
  const ImGuiCond cond = relayout ? ImGuiCond_Always : ImGuiCond_Appearing;
  ImGui::SetNextWindowPos({vp->Pos.x + vp->Size.x * 0.02f, vp->Pos.y + top + vp->Size.y * 0.02f},
                          cond);
  ImGui::SetNextWindowSize({vp->Size.x * 0.96f, vp->Size.y * 0.94f - top * 2}, cond);
  place_beside_lesson(ui, p.place_beside_lesson);
  const ImGuiWindowFlags staged = place_as_stage(ui, WindowId::kLm);
  p.shown_tab.clear();
  if (!ImGui::Begin("Language model: attention inside a transformer###lm", &ui.lm.open,
                    ImGuiWindowFlags_NoCollapse | staged)) {
    ImGui::End();
    return;
  }
  draw_model_bar(ui, p);
  ImGui::Separator();
  if (!p.session.run()) {
    if (!p.session.has_model() && !p.session.busy()) draw_no_model(ui);
    ImGui::End();
    return;
  }
  // The model view beside the tabs when both get a useful width at this font size (large type,
  // a small projector); otherwise it becomes the first tab.
  const float fs = ImGui::GetFontSize();
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const bool side_by_side = avail_w >= fs * 44;
  p.model_view_tab = !side_by_side;
  if (side_by_side) {
    ImGui::BeginChild("lm-model-view", {std::round(avail_w * 0.42f), 0}, false);
    draw_lm_model_view(ui, p);
    ImGui::EndChild();
    ImGui::SameLine();
  }
  ImGui::BeginChild("lm-tabs", {0, 0}, false);
  struct Tab {
    const char *id, *title, *short_title;
    void (*draw)(Ui&, LmPanel&);
  };
  const Tab tabs[] = {{"model", "Model view", "Model", draw_lm_model_view},
                      {"heads", "Head view", "Heads", draw_lm_head_view},
                      {"block", "Block view", "Block", draw_lm_block},
                      {"next", "Next token", "Next", draw_lm_next_tokens},
                      {"roles", "What heads do", "Roles", draw_lm_head_roles},
                      {"circuit", "Induction circuit", "Circuit", draw_lm_circuit},
                      {"rollout", "Rollout across layers", "Rollout", draw_lm_rollout},
                      {"kv", "KV cache", "KV", draw_lm_kv_cache}};
  const int kTabs = static_cast<int>(sizeof tabs / sizeof tabs[0]);
  const int first = side_by_side ? 1 : 0;
  // Shorter titles rather than ImGui's cut ones ("Hea…") when the full ones do not fit, and
  // smaller type for the titles (down to 16 px, the least a projector's back row reads) when the
  // short ones do not fit either.
  const ImGuiStyle& style = ImGui::GetStyle();
  const float n = static_cast<float>(kTabs - first);
  float full_w = 0, short_w = 0;
  for (int i = first; i < kTabs; ++i) {
    full_w += ImGui::CalcTextSize(tabs[i].title).x;
    short_w += ImGui::CalcTextSize(tabs[i].short_title).x;
  }
  // A tab is its title and its frame padding on either side; the tabs are spaced apart. A font
  // size's margin for the scrollbar that may come with the tab's contents.
  const float avail = ImGui::GetContentRegionAvail().x - n * style.ItemInnerSpacing.x - fs;
  const bool short_titles = full_w + n * 2 * style.FramePadding.x > avail;
  const float title_scale =
      short_titles ? std::clamp(avail / (short_w + n * 2 * style.FramePadding.x), 16.0f / fs, 1.0f)
                   : 1.0f;
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                      {style.FramePadding.x * title_scale, style.FramePadding.y});
  ImGui::SetWindowFontScale(title_scale);
  bool switching =
      false;  // a tab asked for (a lesson step, --tab) shows on the tab bar's next frame
  if (ImGui::BeginTabBar("lm-tab-bar")) {
    auto flags = [&p](const char* tab) {
      return p.select_tab == tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
    };
    for (int i = first; i < kTabs; ++i) {
      // "###id" keeps the tab (and which one is open) when its title changes.
      const std::string label =
          std::string(short_titles ? tabs[i].short_title : tabs[i].title) + "###" + tabs[i].id;
      if (ImGui::BeginTabItem(label.c_str(), nullptr, flags(tabs[i].id))) {
        // The tab's contents in the window's own type and padding.
        ImGui::SetWindowFontScale(1.0f);
        ImGui::PopStyleVar();
        p.shown_tab = tabs[i].id;
        tabs[i].draw(ui, p);
        ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                            {style.FramePadding.x * title_scale, style.FramePadding.y});
        ImGui::SetWindowFontScale(title_scale);
        ImGui::EndTabItem();
      } else if (short_titles && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", tabs[i].title);
      }
    }
    ImGui::EndTabBar();
    switching = !p.select_tab.empty() && p.select_tab != p.shown_tab;
    p.select_tab.clear();
  }
  ImGui::SetWindowFontScale(1.0f);
  ImGui::PopStyleVar();
  ImGui::EndChild();
  ImGui::End();
  // A tab drawn for the first time asks for its view here (the Block tab's path, the Circuit
  // tab's score parts), and a tab asked for shows on the next frame: the window is busy from
  // this frame on, not from the next poll, so the app draws the frames that bring the view and
  // whoever waits for the window's work (tests, screenshots) does not stop early and see the view
  // arrive on the frame it checks.
  ui.lm.busy = ui.lm.busy || p.session.deriving() || switching;
}

}  // namespace attn

namespace attn {

bool setup_lm_from_options(Ui& ui, const GuiOptions& o, std::string& error) {
  LmPanel& p = ui.lm.get();
  LmSession& s = p.session;
  if (!s.open(o.model)) {
    error = "--model: " + s.error();
    return false;
  }
  s.wait();
  if (!s.has_model()) {
    error = s.error();  // names the file (and tensor)
    return false;
  }
  if (!o.text.empty()) {
    p.text_buffer = o.text;
    p.text_initialised = true;
    s.set_text(o.text);
    s.wait();
  }
  if (!s.error().empty()) {
    error = "--text: " + s.error();
    return false;
  }
  const lm::Config& c = s.model()->config;
  if (o.layer < 0 || o.layer >= c.n_layer) {
    error =
        "--layer: " + std::to_string(o.layer) + " is outside 0.." + std::to_string(c.n_layer - 1);
    return false;
  }
  if (o.model_head < 0 || o.model_head >= c.n_head) {
    error = "--head: " + std::to_string(o.model_head) + " is outside 0.." +
            std::to_string(c.n_head - 1);
    return false;
  }
  s.select(o.layer, o.model_head);
  ui.lm.open = true;
  if (!o.step.empty()) open_lm_head_in_stepper(ui, o.layer, o.model_head);
  return true;
}

}  // namespace attn
