// The Help menu's own windows: the "Getting started" tour (a page at a time, Back and Next), every
// keyboard shortcut, the About window (version, what the app is, the libraries and fonts it uses
// and their licences), and the first start's one-line pointer to the tour and the Lessons menu.
#include <imgui.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "gui/ui.h"

#ifndef ATTN_VERSION
#define ATTN_VERSION "unknown"
#endif

namespace attn {
namespace {

struct TourPage {
  const char* title;
  const char* text;
  const char* keys;  // the keys the page mentions, in a line of their own
};

// About a minute of reading in all: what is on the screen, what to click, where the lessons are,
// and how to put it on a projector.
const TourPage kTour[] = {
    {"The stages of attention",
     "The strip along the top is attention from start to finish: Q, K and V, then the scores "
     "Q·Kᵀ, the scaling by 1/√d_k, the mask, the softmax weights and the output. Click a stage, "
     "or step with the arrow keys; Space plays them one after the other.",
     "← / →  previous / next stage    Home / End  first / last    Space  play"},
    {"Click a cell to see its arithmetic",
     "The big heatmap is the current stage. Click any cell and the narration beside it writes "
     "out how that number was computed, with the real numbers: the dot product term by term, "
     "each exponential, the weighted sum. Click a query token on the left for its whole row. "
     "P asks the class to predict a number before it is revealed.",
     "P  predict    Esc  clear the selection"},
    {"Edit Q, K and V",
     "The Inputs tab of the Scenario panel holds Q, K and V. Type a new value into any cell and "
     "every stage recomputes at once; the cells that changed light up. The Variants tab adds "
     "masks, a temperature or more heads. Undo takes any edit back.",
     "Ctrl+Z  undo    Ctrl+Shift+Z  redo    Ctrl+S  save"},
    {"Lessons",
     "The Lessons menu holds a short course: each lesson steps through a scenario with a few "
     "sentences and a question for the class. Page Down moves to the next step, Page Up goes "
     "back. File → Open example has more scenarios to explore on your own.",
     "Page Down / Page Up  next / previous lesson step"},
    {"On a projector",
     "F11 switches to presentation mode: full screen, large type, the heatmap and the narration "
     "only. Tab brings the side panels back; Esc leaves. Ctrl+= and Ctrl+− make all text larger "
     "or smaller. Help → Keyboard shortcuts lists every key.",
     "F11  presentation    Tab  side panels    Ctrl+= / Ctrl+−  text size"},
};

// A help window's place: centred the first time, no larger than the room under the menu bar.
void place_help_window(float width_fonts, float height_fonts) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float fs = ImGui::GetFontSize();
  const float bars = ImGui::GetFrameHeight() * 2 + ImGui::GetStyle().WindowPadding.y;
  const float w = std::min(fs * width_fonts, vp->Size.x - fs * 2);
  const float h = std::min(fs * height_fonts, vp->Size.y - bars - fs);
  ImGui::SetNextWindowPos(vp->GetCenter(), ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({w, h}, ImGuiCond_Appearing);
  // Kept inside the screen when the font or the window size changes.
  ImGui::SetNextWindowSizeConstraints({std::min(fs * 12, w), std::min(fs * 6, h)},
                                      {vp->Size.x - fs, vp->Size.y - bars});
}

}  // namespace

int tour_page_count() { return static_cast<int>(std::size(kTour)); }

void open_tour(Ui& ui) {
  ui.tour.open = true;
  ui.tour.page = 0;
  ui.settings.welcomed = true;
}

void draw_tour_window(Ui& ui) {
  ui.tour.page = std::clamp(ui.tour.page, 0, tour_page_count() - 1);
  const TourPage& page = kTour[ui.tour.page];
  place_help_window(30, 17);
  if (ImGui::Begin("Getting started###tour", &ui.tour.open, ImGuiWindowFlags_NoCollapse)) {
    const ImGuiStyle& style = ImGui::GetStyle();
    // The page scrolls above the buttons when the type is large and the screen small.
    if (ImGui::BeginChild("page", {0, -(ImGui::GetFrameHeight() + style.ItemSpacing.y)})) {
      ImGui::PushFont(ui.fonts.bold);
      text_wrapped_at_spaces(page.title);
      ImGui::PopFont();
      ImGui::Spacing();
      text_wrapped_at_spaces(page.text);
      ImGui::Spacing();
      ImGui::PushStyleColor(ImGuiCol_Text, style.Colors[ImGuiCol_TextDisabled]);
      text_wrapped_at_spaces(page.keys);
      ImGui::PopStyleColor();
    }
    ImGui::EndChild();
    const bool first = ui.tour.page == 0, last = ui.tour.page + 1 == tour_page_count();
    ImGui::BeginDisabled(first);
    if (ImGui::Button("◀ Back")) --ui.tour.page;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button(last ? "Done" : "Next ▶")) {
      if (last)
        ui.tour.open = false;
      else
        ++ui.tour.page;
    }
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%d / %d", ui.tour.page + 1, tour_page_count());
  }
  ImGui::End();
}

namespace {

// Every key and mouse gesture handle_shortcuts (app_ui.cpp), lesson_shortcuts
// (panel_lesson.cpp) and the heatmap widget answer, by what they are for.
struct Shortcut {
  const char* keys;
  const char* what;
};
struct ShortcutGroup {
  const char* title;
  std::vector<Shortcut> rows;
};

const std::vector<ShortcutGroup>& shortcut_groups() {
  static const std::vector<ShortcutGroup> groups = {
      {"Stages",
       {{"← / →", "previous / next stage"},
        {"Home / End", "first / last stage"},
        {"Space", "play the stages / pause"}}},
      {"Teaching",
       {{"Page Down / Page Up", "next / previous step of the open lesson"},
        {"P", "predict: ask the class for the selected cell's number first"},
        {"R", "show the lesson question's answer (in class mode: reveal it to the class)"},
        {"Esc", "cancel the question, else clear the selection, else leave presentation mode"}}},
      {"Edits and files",
       {{"Ctrl+Z", "undo"},
        {"Ctrl+Shift+Z, Ctrl+Y", "redo"},
        {"Ctrl+O", "open a scenario"},
        {"Ctrl+S", "save the scenario"}}},
      {"Screen",
       {{"F11", "presentation mode (full screen, large type)"},
        {"Tab", "side panels in presentation mode"},
        {"Ctrl+= / Ctrl+−", "larger / smaller text (also Ctrl with the keypad's + and −)"}}},
      {"Mouse",
       {{"Click a cell", "its arithmetic in the narration"},
        {"Click a query token", "the arithmetic of its whole row"},
        {"Mouse wheel", "zoom a heatmap about the pointer"},
        {"Drag", "pan a zoomed heatmap"},
        {"Right double-click", "fit the heatmap again"}}},
  };
  return groups;
}

}  // namespace

void draw_shortcuts_window(Ui& ui) {
  place_help_window(32, 24);
  if (ImGui::Begin("Keyboard shortcuts###shortcuts", &ui.shortcuts.open,
                   ImGuiWindowFlags_NoCollapse)) {
    const float keys_w = ImGui::GetContentRegionAvail().x * 0.38f;
    for (const ShortcutGroup& g : shortcut_groups()) {
      ImGui::PushFont(ui.fonts.bold);
      ImGui::TextUnformatted(g.title);
      ImGui::PopFont();
      // Both columns wrap: at 32 px on a 1280 × 720 projector a row may need two lines.
      if (ImGui::BeginTable(g.title, 2,
                            ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
        ImGui::TableSetupColumn("keys", ImGuiTableColumnFlags_WidthFixed, keys_w);
        ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
        for (const Shortcut& r : g.rows) {
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          text_wrapped_at_spaces(r.keys);
          ImGui::TableNextColumn();
          text_wrapped_at_spaces(r.what);
        }
        ImGui::EndTable();
      }
      ImGui::Spacing();
    }
  }
  ImGui::End();
}

void draw_about_window(Ui& ui) {
  place_help_window(30, 20);
  if (ImGui::Begin("About Attention Lab###about", &ui.about.open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::PushFont(ui.fonts.bold);
    text_wrapped_at_spaces(std::string("Attention Lab ") + ATTN_VERSION);
    ImGui::PopFont();
    text_wrapped_at_spaces(
        "A desktop app and command line for teaching the attention mechanism of transformers: "
        "every stage from Q, K and V to the output, live, with the arithmetic of any cell in "
        "words and numbers, editable inputs, lessons, and real models to look inside.");
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextUnformatted("Built with");
    ImGui::PopFont();
    const char* libraries[] = {
        "Dear ImGui " IMGUI_VERSION " — MIT licence",
        "GLFW — zlib licence",
        "Eigen — Mozilla Public License 2.0",
        "cairo — LGPL 2.1 or MPL 1.1",
        "Pango, GLib — LGPL 2 or later",
        "fontconfig — MIT-style licence",
        "ICU — Unicode licence",
        "nlohmann/json — MIT licence",
        "CLI11 — BSD 3-clause licence",
        "stb_image, stb_image_write — public domain (or MIT)",
        "OpenCL ICD loader — BSD 2-clause licence",
    };
    for (const char* l : libraries) text_wrapped_at_spaces(std::string("·  ") + l);
    ImGui::Spacing();
    ImGui::PushFont(ui.fonts.bold);
    ImGui::TextUnformatted("Fonts");
    ImGui::PopFont();
    text_wrapped_at_spaces(
        "·  DejaVu Sans, DejaVu Sans Mono — the Bitstream Vera font licence; DejaVu's changes "
        "are in the public domain");
  }
  ImGui::End();
}

bool first_start_hint_shown(const Ui& ui) { return !ui.settings.welcomed && !ui.lesson; }

void draw_first_start_hint(Ui& ui) {
  if (!first_start_hint_shown(ui)) return;
  ImGui::PushStyleColor(ImGuiCol_Text, ui.settings.light_theme ? ImVec4(0.05f, 0.35f, 0.7f, 1)
                                                               : ImVec4(0.5f, 0.75f, 1.0f, 1));
  text_wrapped_at_spaces(
      "New here? Help → Getting started, or pick a lesson from the Lessons menu.");
  ImGui::PopStyleColor();
  if (ImGui::SmallButton("Getting started")) open_tour(ui);
  same_line_if_fits(button_width("Not now"));
  if (ImGui::SmallButton("Not now")) ui.settings.welcomed = true;
  ImGui::Separator();
}

}  // namespace attn
