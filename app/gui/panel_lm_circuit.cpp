// The induction circuit on the student's own sentence, as a short guide beside the two heads'
// heatmaps: (1) a layer-0 head copies each token's predecessor into its position; (2) a later
// head's query for "A" finds the position whose predecessor was "A" — the token after the earlier
// "A"; (3) why that key wins: its score split exactly into what each part of that position's
// residual stream contributes, the previous-token head's part the largest (K-composition);
// (4) the prediction it makes. Every number is the model's own.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/heatmap_widget.h"
#include "gui/panel_lm.h"
#include "lm/head_trace.h"

namespace attn {

namespace {

const ImVec4 kAccent(0.85f, 0.35f, 0.05f, 1);

std::string quoted(const std::vector<std::string>& tokens, int i) {
  return "“" + tokens[static_cast<size_t>(i)] + "”";
}

// The default heads: the best induction head of the layers after the first, and the best
// previous-token head of the layers below it.
void pick_heads(const lm::Config& c, const std::vector<lm::HeadScores>& s, int& prev, int& ind) {
  const int NH = c.n_head;
  if (ind < 0) {
    ind = NH;
    for (int i = NH; i < c.n_layer * NH; ++i)
      if (s[static_cast<size_t>(i)].induction > s[static_cast<size_t>(ind)].induction) ind = i;
  }
  if (prev < 0 || prev / NH >= ind / NH) {
    prev = 0;
    for (int i = 0; i < ind / NH * NH; ++i)
      if (s[static_cast<size_t>(i)].previous > s[static_cast<size_t>(prev)].previous) prev = i;
  }
}

bool head_combo(const char* label, const lm::Config& c, int& head, int first_layer,
                int last_layer) {
  const std::string preview =
      "layer " + std::to_string(head / c.n_head) + ", head " + std::to_string(head % c.n_head);
  bool changed = false;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo(label, preview.c_str())) {
    for (int i = first_layer * c.n_head; i < (last_layer + 1) * c.n_head; ++i) {
      const std::string n =
          "layer " + std::to_string(i / c.n_head) + ", head " + std::to_string(i % c.n_head);
      if (ImGui::Selectable(n.c_str(), i == head)) {
        head = i;
        changed = true;
      }
    }
    ImGui::EndCombo();
  }
  return changed;
}

void wrapped(const std::string& s) { text_wrapped_at_spaces(s); }

// A button's label whole where it fits the column, else its short form.
const char* fitting(const char* label, const char* short_label) {
  return button_width(label) <= ImGui::GetContentRegionAvail().x ? label : short_label;
}

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// "L0H1" for layer 0's head 1.
std::string head_name(int l, int h) { return "L" + std::to_string(l) + "H" + std::to_string(h); }

void draw_step_previous(Ui& ui, const LmRun& r, const CircuitView& k, bool slide) {
  const lm::Config& c = r.model->config;
  const int l = k.prev / c.n_head, h = k.prev % c.n_head, w = k.winner;
  const lm::HeadScores& s = r.scores[static_cast<size_t>(k.prev)];
  // On a slide the same facts in fewer words: the lesson's words give the idea.
  if (slide && w > 0) {
    const float* a = r.acts.att_at(c, l, 0, h) + static_cast<size_t>(w) * r.acts.T;
    wrapped(head_name(l, h) + " looks one token back: on average " + fmt("%.0f", 100 * s.previous) +
            " % of its attention.");
    ImGui::Spacing();
    wrapped("At " + quoted(r.tokens, w) + " (position " + std::to_string(w) + ", step 2's key) " +
            fmt("%.0f", 100 * a[w - 1]) + " % goes to " + quoted(r.tokens, w - 1) +
            (a[w - 1] >= 0.5f
                 ? ": position " + std::to_string(w) + " now carries “the token before me was " +
                       r.tokens[static_cast<size_t>(w - 1)] + "”."
                 : ": not yet a previous-token head, so what follows shows the "
                   "circuit failing."));
    ImGui::Spacing();
    if (ImGui::Button("In the stepper")) open_lm_head_in_stepper(ui, l, h);
    return;
  }
  wrapped("Layer " + std::to_string(l) + ", head " + std::to_string(h) +
          " looks one token back. On your sentence it gives the token just before an average of " +
          fmt("%.0f", 100 * s.previous) + " % of its attention (its previous-token score).");
  ImGui::Spacing();
  if (w == 0) {
    wrapped("The key that wins in step 2 is the first token, which has no token before it.");
  } else {
    const float* a = r.acts.att_at(c, l, 0, h) + static_cast<size_t>(w) * r.acts.T;
    const std::string at = "At " + quoted(r.tokens, w) + " (position " + std::to_string(w) +
                           ", the key that wins in step 2) it gives " + quoted(r.tokens, w - 1) +
                           " (position " + std::to_string(w - 1) + ") " +
                           fmt("%.0f", 100 * a[w - 1]) + " % of its attention.";
    if (a[w - 1] >= 0.5f)
      wrapped(at + " So what this head writes into position " + std::to_string(w) +
              " is mostly the value of " + quoted(r.tokens, w - 1) + ": position " +
              std::to_string(w) + " now also carries “the token before me was " +
              r.tokens[static_cast<size_t>(w - 1)] + "”.");
    else
      wrapped(at +
              " That is not a previous-token head (yet): this model has not learned the "
              "first half of the circuit, so what follows shows it failing, not copying.");
  }
  ImGui::Spacing();
  if (ImGui::Button(fitting("Step through this head in the stepper", "In the stepper")))
    open_lm_head_in_stepper(ui, l, h);
}

void draw_step_induction(Ui& ui, const LmRun& r, const CircuitView& k,
                         const std::pair<int, int>& target) {
  const lm::Config& c = r.model->config;
  const int l = k.ind / c.n_head, h = k.ind % c.n_head, q = k.query;
  const float* a = r.acts.att_at(c, l, 0, h) + static_cast<size_t>(q) * r.acts.T;
  const int earlier = target.second - 1, after = target.second;
  wrapped("Layer " + std::to_string(l) + ", head " + std::to_string(h) +
          " is the induction head (its induction score on your sentence is " +
          fmt("%.2f", r.scores[static_cast<size_t>(k.ind)].induction) + "). Its query is " +
          quoted(r.tokens, q) + " at position " + std::to_string(q) + ". " + quoted(r.tokens, q) +
          " appeared before at position " + std::to_string(earlier) +
          ", and the token after it was " + quoted(r.tokens, after) + " (position " +
          std::to_string(after) + ").");
  ImGui::Spacing();
  std::string verdict = k.winner == after ? " — exactly the token after the earlier occurrence."
                                          : ". The token after the earlier occurrence gets " +
                                                fmt("%.0f", 100 * a[after]) + " %.";
  wrapped("The head gives " + fmt("%.0f", 100 * a[k.winner]) + " % of its attention to " +
          quoted(r.tokens, k.winner) + " at position " + std::to_string(k.winner) + verdict);
  ImGui::Spacing();
  std::vector<int> keys;
  for (int j = 0; j <= q; ++j) keys.push_back(j);
  std::sort(keys.begin(), keys.end(), [a](int x, int y) { return a[x] > a[y]; });
  keys.resize(std::min<size_t>(keys.size(), 6));
  if (ImGui::BeginTable(
          "circuit-keys", 4,
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("key position");
    ImGui::TableSetupColumn("token");
    ImGui::TableSetupColumn("score q·k/√d");
    ImGui::TableSetupColumn("weight");
    ImGui::TableHeadersRow();
    for (int j : keys) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d%s", j, j == after ? "  (after the earlier one)" : "");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r.tokens[static_cast<size_t>(j)].c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", lm::head_score(c, r.acts, l, h, q, j));
      ImGui::TableNextColumn();
      ImGui::Text("%.3f", static_cast<double>(a[j]));
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
  if (ImGui::Button(fitting("Step through the induction head in the stepper", "In the stepper")))
    open_lm_head_in_stepper(ui, l, h);
}

// The key head (l, h) gave the most weight at position `at`: what it read there.
int read_most(const LmRun& r, int l, int h, int at) {
  const float* a = r.acts.att_at(r.model->config, l, 0, h) + static_cast<size_t>(at) * r.acts.T;
  return static_cast<int>(std::max_element(a, a + at + 1) - a);
}

// Whether `part` is the output of the previous-token head the guide follows.
bool is_prev_head(const lm::Config& c, const CircuitView& k, const lm::ScorePart& part) {
  return part.head >= 0 && part.layer * c.n_head + part.head == k.prev;
}

// Whether the runner-up's parts are there, one for each of the winner's.
bool has_runner(const CircuitView& k) {
  return k.runner_up >= 0 && k.runner_parts.size() == k.winner_parts.size();
}

// The score the parts add up to.
double sum_of(const std::vector<lm::ScorePart>& parts) {
  double s = 0;
  for (const lm::ScorePart& part : parts) s += part.value;
  return s;
}

// The name of the head whose output `part` is.
std::string head_of(const lm::ScorePart& part) { return head_name(part.layer, part.head); }

// The score split as a table: the parts by their share of the winning score (the previous-token
// head's in the accent colour), the smaller ones summed, and the score. `shown` parts at most.
void draw_parts_table(const lm::Config& c, const CircuitView& k, size_t shown) {
  std::vector<size_t> order(k.winner_parts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::abs(k.winner_parts[x].value) > std::abs(k.winner_parts[y].value);
  });
  shown = std::min(order.size(), shown);
  const bool runner = has_runner(k);
  if (!ImGui::BeginTable(
          "circuit-parts", runner ? 3 : 2,
          ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit))
    return;
  ImGui::TableSetupColumn("part");
  ImGui::TableSetupColumn("winner");
  if (runner) ImGui::TableSetupColumn("runner-up");
  ImGui::TableHeadersRow();
  auto row = [&](const char* name, bool accent, double w, double ru) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (accent)
      ImGui::TextColored(kAccent, "%s", name);
    else
      ImGui::TextUnformatted(name);
    ImGui::TableNextColumn();
    ImGui::Text("%+.2f", w);
    if (runner) {
      ImGui::TableNextColumn();
      ImGui::Text("%+.2f", ru);
    }
  };
  double rest_w = 0, rest_r = 0;
  for (size_t n = 0; n < order.size(); ++n) {
    const size_t i = order[n];
    const lm::ScorePart& part = k.winner_parts[i];
    const double ru = runner ? k.runner_parts[i].value : 0;
    if (n < shown) {
      row(part.name.c_str(), is_prev_head(c, k, part), part.value, ru);
    } else {
      rest_w += part.value;
      rest_r += ru;
    }
  }
  if (order.size() > shown)
    row((std::to_string(order.size() - shown) + " other parts").c_str(), false, rest_w, rest_r);
  row("score q·k/√d (the sum)", false, sum_of(k.winner_parts),
      runner ? sum_of(k.runner_parts) : 0.0);
  ImGui::EndTable();
}

// Under the table: what the heads with the largest parts read at the winning key, which parts make
// the winner's margin over the runner-up, and what the first of them read at the runner-up. Returns
// the words, a paragraph a line.
std::string why_words(const LmRun& r, const CircuitView& k) {
  const lm::Config& c = r.model->config;
  const int w = k.winner, ru = k.runner_up;
  std::string words;
  auto say = [&words](const std::string& paragraph) { words += paragraph + "\n"; };
  const std::vector<lm::ScorePart>& win = k.winner_parts;
  auto named = [&](const lm::ScorePart& part) {
    return head_of(part) + (is_prev_head(c, k, part) ? ", the previous-token head," : "");
  };
  // The parts' indices, largest first by `key`, at most two with key > 0 (and heads only).
  auto top_two = [&](auto key, bool heads_only) {
    std::vector<size_t> out;
    for (size_t i = 0; i < win.size(); ++i)
      if (key(i) > 0 && (!heads_only || win[i].head >= 0)) out.push_back(i);
    std::sort(out.begin(), out.end(), [&](size_t x, size_t y) { return key(x) > key(y); });
    if (out.size() > 2) out.resize(2);
    return out;
  };
  const double score = sum_of(win);
  const std::vector<size_t> largest = top_two([&](size_t i) { return win[i].value; }, true);
  if (!largest.empty()) {
    std::string said = "At " + quoted(r.tokens, w) + ", ";
    for (size_t n = 0; n < largest.size(); ++n) {
      const lm::ScorePart& part = win[largest[n]];
      const int read = read_most(r, part.layer, part.head, w);
      said += std::string(n ? "; " : "") + named(part) + " read " + quoted(r.tokens, read) +
              " (position " + std::to_string(read) + ") and gives " + fmt("%+.2f", part.value);
    }
    say(said + " of the " + fmt("%.2f", score) + ".");
  }
  if (has_runner(k)) {
    const double ru_score = sum_of(k.runner_parts);
    const std::vector<size_t> margin =
        top_two([&](size_t i) { return win[i].value - k.runner_parts[i].value; }, false);
    if (!margin.empty()) {
      std::string said = "It beats the runner-up by " + fmt("%.2f", score - ru_score) + ": ";
      for (size_t n = 0; n < margin.size(); ++n) {
        const size_t i = margin[n];
        said += std::string(n ? ", " : "") + fmt("%+.2f", win[i].value - k.runner_parts[i].value) +
                " from " + (win[i].head >= 0 ? head_of(win[i]) : win[i].name);
      }
      const lm::ScorePart& first = win[margin[0]];
      if (first.head >= 0) {
        const int read = read_most(r, first.layer, first.head, ru);
        said += ". At the runner-up " + quoted(r.tokens, ru) + ", " + head_of(first) + " read " +
                quoted(r.tokens, read) + " (position " + std::to_string(read) + ")";
      }
      say(said + ".");
    }
  }
  say("So the query of " + quoted(r.tokens, k.query) +
      " finds its key by what earlier heads wrote there about the tokens before it, not by "
      "the key's own token: the layer-" +
      std::to_string(k.ind / c.n_head) +
      " head reads its keys from what earlier heads wrote. That is K-composition.");
  return words;
}

void draw_step_why(LmPanel& p, const LmRun& r, const CircuitView& k, bool slide) {
  const lm::Config& c = r.model->config;
  const int w = k.winner, ru = k.runner_up;
  // On a slide the lesson's words say what the split is; the table comes first.
  if (!slide)
    wrapped(c.llama_family()
                ? "Why does that key win? A key is k = RoPE(RMSNorm(x)·W_K): it is computed from "
                  "the residual stream x at its position, and x is a sum — the token's embedding "
                  "and what every earlier head (and MLP) wrote there. The position is not in x: "
                  "RoPE turns the whole key by it. With the norm's scale held at its value, the "
                  "key, and so the score, splits exactly into one part per term:"
                : "Why does that key win? A key is k = ln_1(x)·W_K: it is computed from the "
                  "residual stream x at its position, and x is a sum — the token's embedding, its "
                  "position, and what every earlier head (and MLP) wrote there. With the layer "
                  "norm's scale held at its value, the key, and so the score, splits exactly into "
                  "one part per term:");
  wrapped("The winner is " + quoted(r.tokens, w) + " at position " + std::to_string(w) +
          (ru >= 0 ? ", the runner-up " + quoted(r.tokens, ru) + " at " + std::to_string(ru) : "") +
          ".");
  ImGui::Spacing();
  draw_parts_table(c, k, slide ? 3 : 7);
  // On a slide the lesson's words tell what the table shows.
  p.circuit_why_text = w > 0 ? why_words(r, k) : "";
  if (slide) return;
  ImGui::Spacing();
  for (size_t a = 0, b; a < p.circuit_why_text.size(); a = b + 1) {
    b = std::min(p.circuit_why_text.find('\n', a), p.circuit_why_text.size());
    wrapped(p.circuit_why_text.substr(a, b - a));
  }
}

void draw_step_prediction(const LmRun& r, const CircuitView& k) {
  const int q = k.query, w = k.winner;
  wrapped("The induction head copies the value of " + quoted(r.tokens, w) + " into position " +
          std::to_string(q) +
          ", and the output layer turns the residual stream there into the "
          "prediction. After " +
          quoted(r.tokens, q) + " the model predicts:");
  ImGui::Spacing();
  for (auto [id, prob] : k.next) {
    const std::string t = r.model->tokenizer.display(id);
    char line[64];
    std::snprintf(line, sizeof line, "“%s”  %.1f %%", t.c_str(), 100 * prob);
    wrapped(std::string(line) +
            (id == r.ids[static_cast<size_t>(w)] ? "  ← the token the induction head copies" : ""));
  }
  ImGui::Spacing();
  if (q + 1 < static_cast<int>(r.ids.size()))
    wrapped("Your sentence goes on with " + quoted(r.tokens, q + 1) + ".");
  else
    wrapped("This is the last token: the Next token tab shows the same prediction.");
}

}  // namespace

// The two heads' weights, the query row and its winning key marked, filling the column's height.
void draw_circuit_maps(Ui& ui, LmPanel& p, const LmRun& r, const CircuitView& k, float width) {
  const lm::Config& c = r.model->config;
  const int prev = k.prev, ind = k.ind;
  ImGui::BeginChild("circuit-maps", {width, 0}, false);
  // Two headings and two maps, each followed by the item spacing, fill the column's height.
  const float map_h =
      (ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2 -
       ImGui::GetStyle().ItemSpacing.y * 2) /
      2;
  for (int which = 0; which < 2; ++which) {
    const int head = which == 0 ? prev : ind;
    text_wrapped_at_spaces(std::string(which == 0 ? "Previous-token head" : "Induction head") +
                           ": layer " + std::to_string(head / c.n_head) + ", head " +
                           std::to_string(head % c.n_head));
    HeatmapSpec sp;
    sp.id = which == 0 ? "lm-circuit-prev" : "lm-circuit-ind";
    sp.serial = p.session.serial() * 64 + static_cast<uint64_t>(head) + 1;
    sp.m = &p.head_weights(head / c.n_head, head % c.n_head);
    sp.matrix_name = stage_name(StageId::kWeights);
    sp.hidden_are_zero = true;
    sp.row_labels = r.tokens;
    sp.col_labels = r.tokens;
    sp.scale = {ui.settings.colormap, 0.0f, 1.0f};
    sp.color_bar = false;
    sp.selected_row = which == 0 ? k.winner : k.query;
    sp.selected_col = which == 0 ? std::max(0, k.winner - 1) : k.winner;
    sp.size = {0, map_h};
    draw_heatmap(widgets(ui), sp);
  }
  ImGui::EndChild();
}

// The guide: four steps by radio button, the one shown, and Back / Next.
void draw_circuit_guide(Ui& ui, LmPanel& p, const LmRun& r, const CircuitView& k,
                        const std::pair<int, int>& target, bool slide) {
  const char* steps[] = {"1  Previous-token head", "2  Induction head", "3  Why this key wins",
                         "4  The prediction"};
  // The steps by name, or by number where a name does not fit the column (the heading under
  // them names the one shown).
  // On a slide the steps share one line: their numbers, the heading naming the one shown.
  bool names = true;
  float line_w = 0;
  for (const char* step : steps) {
    names = names && radio_width(step) <= ImGui::GetContentRegionAvail().x;
    line_w += radio_width(step) + ImGui::GetStyle().ItemSpacing.x;
  }
  if (slide && line_w > ImGui::GetContentRegionAvail().x) names = false;
  for (int i = 0; i < 4; ++i) {
    const std::string label = names ? steps[i] : std::string(steps[i], 1);
    if (i) same_line_if_fits(radio_width(label.c_str()));
    if (ImGui::RadioButton((label + "##circuit-step").c_str(), p.circuit_step == i))
      p.circuit_step = i;
    if (!names && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", steps[i] + 3);
  }
  ImGui::Separator();
  ImGui::Spacing();
  if (ui.fonts.bold) ImGui::PushFont(ui.fonts.bold);
  text_wrapped_at_spaces(steps[p.circuit_step] + 3);
  if (ui.fonts.bold) ImGui::PopFont();
  switch (p.circuit_step) {
    case 0:
      draw_step_previous(ui, r, k, slide);
      break;
    case 1:
      draw_step_induction(ui, r, k, target);
      break;
    case 2:
      draw_step_why(p, r, k, slide);
      break;
    default:
      draw_step_prediction(r, k);
  }
  // On a slide the step numbers above are the way between steps.
  if (slide) return;
  ImGui::Spacing();
  if (p.circuit_step > 0 && ImGui::Button("Back")) --p.circuit_step;
  if (p.circuit_step > 0 && p.circuit_step < 3) ImGui::SameLine();
  if (p.circuit_step < 3 && ImGui::Button("Next")) ++p.circuit_step;
}

void draw_lm_circuit(Ui& ui, LmPanel& p) {
  LmSession& s = p.session;
  const LmRun* r = s.run();
  const lm::Config& c = r->model->config;
  const float fs = ImGui::GetFontSize();
  // On a slide the lesson's words introduce the circuit, and the guide takes the stage's width
  // (its steps, the score split) with the two heads' maps left to Tab's full view.
  const bool slide = ui.lesson_view.slide.on;
  if (!slide) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "How a transformer copies: “… A B … A → B”. Two heads work together (Elhage et al. "
        "2021, Olsson et al. 2022). Type a sentence that repeats, or press “Repeat it”.");
    ImGui::PopTextWrapPos();
  }
  if (c.n_layer < 2) {
    ImGui::TextColored(kAccent,
                       "This model has one layer: an induction circuit needs two (a head whose "
                       "keys read what an earlier head wrote).");
    return;
  }
  const auto targets = lm::induction_targets(r->ids);
  if (targets.empty()) {
    ImGui::TextColored(kAccent,
                       "No token of this sentence appeared before (two tokens back or more), so "
                       "there is nothing to copy. Press “Repeat it” above.");
    return;
  }
  int prev = p.circuit_prev, ind = p.circuit_ind;
  pick_heads(c, r->scores, prev, ind);
  // The query: one of the tokens seen before (the last one unless the student picks another).
  int qi = static_cast<int>(targets.size()) - 1;
  for (int i = 0; i < static_cast<int>(targets.size()); ++i)
    if (targets[static_cast<size_t>(i)].first == p.circuit_query) qi = i;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Query");
  ImGui::SameLine();
  // On a slide the query shares its line with the guide's step numbers.
  ImGui::SetNextItemWidth(fs * (slide ? 6 : 10));
  const int q0 = targets[static_cast<size_t>(qi)].first;
  const std::string qlabel = "“" + r->tokens[static_cast<size_t>(q0)] + "” @" + std::to_string(q0);
  if (ImGui::SliderInt("##query", &qi, 0, static_cast<int>(targets.size()) - 1, qlabel.c_str()))
    p.circuit_query = targets[static_cast<size_t>(qi)].first;
  // Each combo on the same line when it fits, else on the next. On a slide the heads are the
  // ones found (the guide names them) and their lines go to the guide.
  const float combo_w = fs * 9 + ImGui::GetStyle().ItemInnerSpacing.x + fs;
  if (!slide) {
    ImGui::SameLine(0, fs);
    if (ImGui::GetContentRegionAvail().x < combo_w + ImGui::CalcTextSize("previous-token head").x)
      ImGui::NewLine();
    if (head_combo("previous-token head", c, prev, 0, ind / c.n_head - 1)) p.circuit_prev = prev;
    ImGui::SameLine(0, fs);
    if (ImGui::GetContentRegionAvail().x < combo_w + ImGui::CalcTextSize("induction head").x)
      ImGui::NewLine();
    if (head_combo("induction head", c, ind, 1, c.n_layer - 1)) {
      p.circuit_ind = ind;
      if (prev / c.n_head >= ind / c.n_head) p.circuit_prev = -1;
    }
  }
  const auto target = targets[static_cast<size_t>(qi)];
  const CircuitView* k = s.circuit(target.first, prev, ind);
  if (!k) {
    ImGui::TextDisabled("Computing the score parts…");
    return;
  }

  // Left: the two heads' weights, the query row and its winning key marked.
  const float left_w = std::round(ImGui::GetContentRegionAvail().x * 0.42f);
  if (!slide) {
    draw_circuit_maps(ui, p, *r, *k, left_w);
    ImGui::SameLine();
  }

  // Right: the guide.
  // On a slide the guide is drawn in the tab itself, which scrolls when it must.
  if (!slide) ImGui::BeginChild("circuit-guide", {0, 0}, false);
  if (slide) ImGui::SameLine(0, fs);
  draw_circuit_guide(ui, p, *r, *k, target, slide);
  if (!slide) ImGui::EndChild();
}

}  // namespace attn
