// The lesson player: a window in the narration's place (with the narration as its second tab)
// showing the step's text, formula and question, progress, and previous/next; the highlighted
// cells on the main heatmap; opening lessons and recording the current view as a step.
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <filesystem>

#include "gui/model/lesson_player.h"
#include "gui/panel_class.h"
#include "gui/panel_lm.h"
#include "gui/panel_seq2seq.h"
#include "gui/ui.h"
#include "io/data_dir.h"
#include "io/examples.h"
#include "io/shipped.h"

namespace attn {
namespace {

const ImVec4 kRight{0.10f, 0.55f, 0.20f, 1}, kWrong{0.80f, 0.15f, 0.10f, 1};

// A highlight reads on every colour map, in both themes: a thick orange frame with a dark edge.
constexpr ImU32 kHighlight = IM_COL32(255, 140, 0, 255), kHighlightEdge = IM_COL32(0, 0, 0, 200);

bool lesson_open(const Ui& ui) { return ui.lesson && ui.lesson->is_open(); }

// The button that shows the answer: in class mode it reveals it to the class's devices too.
const char* show_answer_label(const Ui& ui) {
  return class_mode_on(ui) ? "Reveal to the class" : "Show answer";
}

// The question, its choices and the feedback (in the part that scrolls when the room is short);
// `first`: at the top of the lesson's column, with no step text above it to set it apart from.
void draw_question(Ui& ui, LessonPlayer& p, const LessonQuestion& q, bool first) {
  AppState& st = ui.state;
  StepAnswer& a = p.answer();
  const float top = ImGui::GetCursorPosY();
  if (!first) {  // under the step's text
    ImGui::Spacing();
    ImGui::Separator();
  }
  ImGui::PushFont(ui.fonts.bold);
  text_wrapped_at_spaces(q.prompt);  // never "0." on one line and "2×0.3" on the next
  ImGui::PopFont();
  // The child starts at its top at each step: the prompt and the choices are in view when
  // their last line is inside the child's clip rectangle.
  const float clip_bottom = ImGui::GetCurrentWindow()->ClipRect.Max.y + 1;
  ui.lesson_view.prompt_shown = ImGui::GetItemRectMax().y <= clip_bottom;
  ui.lesson_view.choices_shown = ui.lesson_view.prompt_shown;
  if (q.kind != QuestionKind::kNumber) {
    const std::vector<std::string> options = question_options(q, st.trace());
    std::vector<std::string> labels;
    bool short_labels = true;  // every choice fits on half a line: they flow like words
    for (size_t i = 0; i < options.size(); ++i) {
      labels.push_back(q.kind == QuestionKind::kKey
                           ? options[i]
                           : std::string(1, static_cast<char>('A' + i)) + ".  " + options[i]);
      short_labels = short_labels &&
                     radio_width(labels.back().c_str()) <= ImGui::GetContentRegionAvail().x * 0.5f;
    }
    // Choice rows no taller than their text: a choice question fits a small projector's column.
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding,
                        {ImGui::GetStyle().FramePadding.x, ImGui::GetFontSize() * 0.08f});
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing,
                        {ImGui::GetStyle().ItemSpacing.x, ImGui::GetFontSize() * 0.2f});
    for (size_t i = 0; i < options.size(); ++i) {
      const int k = static_cast<int>(i);
      if (q.kind == QuestionKind::kKey || short_labels) {
        const std::string label = labels[i] + "##choice" + std::to_string(i);
        if (i > 0) same_line_if_fits(radio_width(labels[i].c_str()));
        if (ImGui::RadioButton(label.c_str(), a.picked == k)) a.picked = k;
      } else {
        // A sentence: wrapped beside its button, its later lines under its first.
        if (ImGui::RadioButton(("##choice" + std::to_string(i)).c_str(), a.picked == k))
          a.picked = k;
        ImGui::SameLine();
        ImGui::BeginGroup();
        text_wrapped_at_spaces(labels[i]);
        ImGui::EndGroup();
      }
      ui.lesson_view.choices_shown = ImGui::GetItemRectMax().y <= clip_bottom;
    }
    ImGui::PopStyleVar(2);
  }
  draw_class_question(ui);  // class mode: the counts, and on Reveal the class's answers
  if (!a.verdict.feedback.empty()) {
    const ImVec4 colour = a.answered ? (a.verdict.correct ? kRight : kWrong)
                          : a.shown  ? ImGui::GetStyle().Colors[ImGuiCol_Text]
                                     : kWrong;
    ImGui::PushStyleColor(ImGuiCol_Text, colour);
    text_wrapped_at_spaces(a.verdict.feedback);
    ImGui::PopStyleColor();
    // The feedback is what the class reads next: bring it into view once.
    if (a.scroll_to_feedback) {
      ImGui::SetScrollHereY(1.0f);
      a.scroll_to_feedback = false;
    }
  }
  ui.lesson_view.question_h = ImGui::GetCursorPosY() - top + ImGui::GetStyle().ItemSpacing.y;
}

// The step's title: large, but in presentation mode (where all the text is large) bold at the
// text's size, leaving the lines to the text.
void draw_step_title(Ui& ui, const LessonStep& s) {
  ImGui::PushFont(ui.presentation ? ui.fonts.bold : ui.fonts.title);
  text_wrapped_at_spaces(s.title, &ui.lesson_view.line_bottoms);
  ImGui::PopFont();
  ImGui::Spacing();
}

// The step's paragraphs and formula, wrapped at spaces only: a number such as 0.27 or 0.2×0.3
// never breaks over two lines.
void draw_step_text(Ui& ui, const LessonStep& s) {
  const float fs = ImGui::GetFontSize();
  for (const std::string& para : s.text) {
    text_wrapped_at_spaces(para, &ui.lesson_view.line_bottoms);
    ImGui::Spacing();
  }
  if (s.formula.empty()) return;
  // In a box, in monospace, in the text colour: it reads on a projector in either theme.
  ImGui::PushFont(ui.fonts.mono);
  const ImVec2 pad{fs * 0.5f, fs * 0.35f};
  const float wrap = ImGui::GetContentRegionAvail().x - 2 * pad.x;
  const std::string formula = formula_fitting(s.formula, wrap);
  const ImVec2 size = ImGui::CalcTextSize(formula.c_str(), nullptr, false, wrap);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(at,
                                            {at.x + wrap + 2 * pad.x, at.y + size.y + 2 * pad.y},
                                            ImGui::GetColorU32(ImGuiCol_FrameBg), fs * 0.2f);
  ImGui::SetCursorScreenPos({at.x + pad.x, at.y + pad.y});
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
  ImGui::TextUnformatted(formula.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetCursorScreenPos({at.x, at.y + size.y + 2 * pad.y});
  ImGui::Dummy({0, fs * 0.3f});
  ui.lesson_view.line_bottoms.push_back(item_content_bottom());
  ImGui::PopFont();
}

// The answer box (a number question's field) with Check and Show answer: one row that stays in
// view under the question, whatever its length.
void draw_answer_row(Ui& ui, LessonPlayer& p, const LessonQuestion& q) {
  AppState& st = ui.state;
  StepAnswer& a = p.answer();
  bool check = false;
  if (q.kind == QuestionKind::kNumber) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
    check = ImGui::InputTextWithHint("##answer", "number", &a.typed,
                                     ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
  }
  if (ImGui::Button(a.answered ? "Check again" : "Check")) check = true;
  ui.lesson_view.answer_box = {ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y,
                               ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y};
  // The answer without a guess: for a class that is stuck, or a teacher moving on.
  if (!a.revealed()) {
    const char* show = show_answer_label(ui);
    same_line_if_fits(button_width(show));
    if (ImGui::Button(show)) {
      p.show_answer(st.trace(), st.precision);
      a.scroll_to_feedback = true;
    }
  }
  if (check) {
    p.check(st.trace(), st.precision);
    a.scroll_to_feedback = true;
  }
}

}  // namespace

namespace {

// The heatmap's decimals: the step's while it is on screen, the user's again after. A change the
// user made meanwhile (View → Decimals in cells) is theirs and stays.
void apply_step_decimals(Ui& ui, int decimals) {
  if (ui.lesson_view.decimals_shown >= 0) {
    if (ui.settings.decimals == ui.lesson_view.decimals_shown)
      ui.settings.decimals = ui.lesson_view.decimals_user;
    ui.lesson_view.decimals_shown = ui.lesson_view.decimals_user = -1;
  }
  if (decimals < 0) return;
  ui.lesson_view.decimals_user = ui.settings.decimals;
  ui.lesson_view.decimals_shown = ui.settings.decimals = decimals;
}

// The step's title and text, then its question (with its choices and feedback) and the answer
// row, in `room` above the `buttons_h` the answer row and Previous / Next take.
// The question first: the step's text keeps at least its title's line and scrolls, in whole
// lines (no half line cut at its foot). Where even that leaves the question short of room (its
// height measured last frame), the question comes first in one child that scrolls, the step's
// title and text under it.
void draw_step_and_question(Ui& ui, LessonPlayer& p, float room, float buttons_h) {
  const LessonStep& s = p.step();
  const int k = p.step_index();
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const bool tight = s.question && ui.lesson_view.question_h + line_h * 2 > room;
  const std::string id = "lesson-step-" + std::to_string(k);
  if (tight) {
    ui.lesson_view.line_bottoms.clear();
    ImGui::BeginChild((id + "-tight").c_str(), {0, -buttons_h}, false);
    draw_question(ui, p, *s.question, true);
    ImGui::Separator();
    draw_step_title(ui, s);
    draw_step_text(ui, s);
    ImGui::EndChild();
  } else {
    float text_h = -buttons_h;
    if (s.question) {
      const float question_h = std::max(0.0f, std::min(ui.lesson_view.question_h, room - line_h));
      // Ending under the last line that fits whole (where the lines ended last frame), and no
      // taller than the text: the question follows it.
      const float most = room - question_h;
      text_h = line_h;
      for (float bottom : ui.lesson_view.line_bottoms)
        if (bottom + 2 <= most) text_h = std::max(text_h, bottom + 2);
      if (ui.lesson_view.text_h > 0)
        text_h = std::min(std::max(text_h, line_h), ui.lesson_view.text_h);
    }
    ui.lesson_view.line_bottoms.clear();
    ImGui::BeginChild(id.c_str(), {0, text_h}, false);
    draw_step_title(ui, s);
    draw_step_text(ui, s);
    ui.lesson_view.text_h = ImGui::GetCursorPosY();
    ImGui::EndChild();
  }
  if (s.question) {
    if (!tight) {
      ImGui::BeginChild(("lesson-question-" + std::to_string(k)).c_str(), {0, -buttons_h}, false);
      draw_question(ui, p, *s.question, false);
      ImGui::EndChild();
    }
    draw_answer_row(ui, p, *s.question);
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    ui.lesson_view.question_rect = {at.x, at.y, at.x + size.x, at.y + size.y};
  }
}

// Previous, the score and Next (or Next lesson, or Finish), one row at the column's foot.
void draw_lesson_nav(Ui& ui) {
  LessonPlayer& p = *ui.lesson;
  const float fs = ImGui::GetFontSize();
  const int n = p.step_count(), k = p.step_index();
  const float avail = ImGui::GetContentRegionAvail().x, sp = ImGui::GetStyle().ItemSpacing.x;
  const float bw = std::min(std::max(fs * 6.5f, (avail - sp * 2) / 3), (avail - sp) / 2);
  ImGui::BeginDisabled(k == 0);
  if (ImGui::Button("◀ Previous", {bw, 0}))
    ui.defer([&ui] {
      if (ui.lesson && ui.lesson->previous()) apply_lesson_step(ui);
    });
  ImGui::EndDisabled();
  // The score between the buttons, when there is room for it.
  const int q = p.question_count();
  const std::string score =
      q > 0 ? std::to_string(p.correct_count()) + " of " + std::to_string(q) + " right" : "";
  const float gap = ImGui::GetContentRegionAvail().x - 2 * bw;
  const float tw = ImGui::CalcTextSize(score.c_str()).x;
  if (q > 0 && tw + 2 * ImGui::GetStyle().ItemSpacing.x <= gap) {
    ImGui::SameLine(0, (gap - tw) / 2);
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", score.c_str());
  }
  ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - bw);
  if (k + 1 < n) {
    if (ImGui::Button("Next ▶", {bw, 0}))
      ui.defer([&ui] {
        if (ui.lesson && ui.lesson->next()) apply_lesson_step(ui);
      });
  } else if (!p.next_lesson.empty()) {
    if (ImGui::Button("Next lesson ▶", {bw, 0}))
      ui.defer([&ui] {
        std::string error;
        const std::string next = ui.lesson->next_lesson;
        if (!open_lesson(ui, next, error)) ui.state.set_message(error, true);
      });
  } else if (ImGui::Button("Finish", {bw, 0})) {
    ui.defer([&ui] { close_lesson(ui); });
  }
  ui.lesson_view.nav_bottom = ImGui::GetItemRectMax().y;
}

// How many rows the answer row takes at the column's width: one, or two when Show answer does
// not fit beside the field and Check (0 without a question).
int answer_rows(const Ui& ui, const LessonPlayer& p, float width) {
  const LessonStep& s = p.step();
  if (!s.question) return 0;
  const float fs = ImGui::GetFontSize(), spacing = ImGui::GetStyle().ItemSpacing.x;
  const float answer_w = (s.question->kind == QuestionKind::kNumber ? fs * 4.5f + spacing : 0) +
                         button_width(p.answer().answered ? "Check again" : "Check") + spacing +
                         (p.answer().revealed() ? 0 : button_width(show_answer_label(ui)));
  return answer_w <= width ? 1 : 2;
}

float buttons_height(const Ui& ui, const LessonPlayer& p, float width) {
  return ImGui::GetFrameHeightWithSpacing() * static_cast<float>(1 + answer_rows(ui, p, width)) +
         ImGui::GetStyle().ItemSpacing.y;
}

}  // namespace

UiSettings user_settings(const Ui& ui) {
  UiSettings s = ui.settings;
  if (ui.lesson_view.decimals_shown >= 0 && s.decimals == ui.lesson_view.decimals_shown)
    s.decimals = ui.lesson_view.decimals_user;
  return s;
}

std::string lesson_tab_label(const Ui& ui) {
  if (!lesson_open(ui)) return "Lesson###lesson";
  return "Lesson · step " + std::to_string(ui.lesson->step_index() + 1) + " of " +
         std::to_string(ui.lesson->step_count()) + "###lesson";
}

bool apply_lesson_step(Ui& ui) {
  if (!lesson_open(ui)) return false;
  LessonPlayer& p = *ui.lesson;
  ui.state.playing = false;
  if (!p.apply(ui.state)) return false;
  // "Opened sliding-window" from loading the step's example says nothing about the step (and
  // stayed through the steps after); an error stays.
  if (!ui.state.message_is_error()) ui.state.set_message("", false);
  const LessonStep& s = p.step();
  apply_step_decimals(ui, s.decimals);
  if (!s.seq2seq_model.empty() || !s.seq2seq_tab.empty()) {
    Seq2seqPanel& sp = ui.seq2seq.get();
    std::string error;
    if (!s.seq2seq_model.empty()) {
      if (std::optional<std::string> path =
              resolve_shipped(kSeq2seqModels, s.seq2seq_model, error)) {
        sp.session.open_model = *path;
        sp.session.find_models();  // selects the step's model
      }
    }
    // The bottleneck tab opens on its result, not on an Evaluate button: the evaluation starts
    // now (from the session's cache when these model files were evaluated before).
    Seq2seqSession& ss = sp.session;
    if (s.seq2seq_tab == "bottleneck" && ss.compare_rows.empty() && !ss.compare_job.running()) {
      ss.ensure_models();
      ss.start_compare();
    }
    sp.select_tab = s.seq2seq_tab;
    sp.place_beside_lesson = true;
    ui.seq2seq.open = true;
    ui.lesson_view.opened_seq2seq = true;
  } else if (ui.lesson_view.opened_seq2seq) {
    ui.seq2seq.open = false;  // a window the lesson opened closes when the lesson moves on
    ui.lesson_view.opened_seq2seq = false;
  }
  if (!s.lm_model.empty()) {
    LmPanel& lp = ui.lm.get();
    if (!s.lm_text.empty()) {
      lp.text_buffer = s.lm_text;
      lp.text_initialised = true;
      lp.session.set_text(s.lm_text);  // before open, so the model runs on this sentence
    }
    std::string error;
    const std::optional<std::string> path = resolve_shipped(kLmModels, s.lm_model, error);
    if (path && !lp.session.open(*path))
      ui.state.set_message("The lesson's model: " + lp.session.error(), true);
    // What the step's words point at: the head (bounded by the model once it has loaded) and
    // the token whose lines, circuit query and prediction are shown.
    if (s.lm_layer >= 0) {
      lp.session.select(s.lm_layer, s.lm_head);
      lp.all_heads = false;
    }
    lp.session.position = s.lm_position;
    lp.pinned_token = s.lm_position;
    lp.pinned_is_key = false;
    lp.circuit_query = s.lm_position;
    lp.select_tab = s.lm_stepper                                     ? ""
                    : s.lm_tab == "sinks" || s.lm_tab == "induction" ? "roles"
                    : s.lm_tab == "circuit-why"                      ? "circuit"
                                                                     : s.lm_tab;
    if (s.lm_tab == "sinks") lp.role = 1;                // the first-token score, with its sink box
    if (s.lm_tab == "induction") lp.role = 3;            // the induction score
    if (s.lm_tab == "circuit-why") lp.circuit_step = 2;  // why the winning key wins
    lp.opened_by_lesson = true;
    if (s.lm_stepper) {
      // The head goes into the stepper when the model has run (poll_lm_panel); the model's
      // window stays closed behind it.
      const int view = s.lm_tab == "angles"     ? kRopeAngles
                       : s.lm_tab == "turned"   ? kRopeTurned
                       : s.lm_tab == "distance" ? kRopeDistance
                                                : -1;
      lp.lesson_stepper = {s.lm_layer, std::max(0, s.lm_head), *s.lm_stepper, view};
      ui.lm.open = false;
    } else {
      lp.lesson_stepper.layer = -1;
      ui.lm.open = true;
      lp.place_beside_lesson = true;
    }
  } else if (ui.lm.state && ui.lm.state->opened_by_lesson) {
    ui.lm.open = false;
    ui.lm.state->opened_by_lesson = false;
  }
  return true;
}

bool open_lesson(Ui& ui, const std::string& name_or_path, std::string& error) {
  auto player = std::make_shared<LessonPlayer>();
  if (!player->open(name_or_path)) {
    error = player->error();
    return false;
  }
  ui.lesson = player;
  // In the built-in course, the last step leads on to the next lesson.
  player->next_lesson.clear();
  std::string ignored;
  const std::vector<LessonInfo> course = list_course(ignored);
  for (size_t i = 0; i + 1 < course.size(); ++i)
    if (course[i].path == player->lesson().path) player->next_lesson = course[i + 1].path;
  if (!apply_lesson_step(ui)) {
    error = ui.state.message();
    return false;
  }
  ui.lesson_view.select_tab = true;
  ui.state.set_message("Opened the lesson: " + player->lesson().title, false);
  return true;
}

void close_lesson(Ui& ui) {
  ui.lesson.reset();
  apply_step_decimals(ui, -1);
  if (ui.lesson_view.opened_seq2seq) ui.seq2seq.open = false;
  ui.lesson_view.opened_seq2seq = false;
  if (ui.lm.state && ui.lm.state->opened_by_lesson) {
    ui.lm.open = false;
    ui.lm.state->opened_by_lesson = false;
  }
}

std::string record_lesson_step(Ui& ui, const std::string& path) {
  AppState& st = ui.state;
  if (!st.has_trace()) return "nothing to record yet";
  const StageInfo stage = st.current_stage();
  bool example = false;
  for (const ExampleInfo& e : list_examples()) example = example || e.name == st.origin();
  const std::string title = std::string(stage.title) + " — " + st.scenario().name;
  const std::string step =
      step_json_for_view(title, st.scenario(), example ? st.origin() : "", stage.id, st.head(),
                         st.selection().query, st.selection().key);
  std::string error;
  if (!append_step_to_file(path, "My lesson", step, error)) return error;
  // Recording into the open lesson: show the new step at once.
  if (lesson_open(ui) && std::filesystem::path(ui.lesson->lesson().path) == path) {
    const int count = ui.lesson->step_count();
    if (ui.lesson->open(path)) ui.lesson->go_to(count);
  }
  st.set_message("Recorded “" + title + "” as a step of " + path, false);
  return "";
}

std::string suggested_lesson_path(const Ui& ui) {
  // A built-in lesson is not the teacher's to change: suggest a file of their own.
  if (lesson_open(ui)) {
    const std::string& p = ui.lesson->lesson().path;
    const std::string shared = data_dir();
    if (shared.empty() || p.rfind(shared, 0) != 0) return p;
  }
  return "my-lesson.json";
}

void draw_lesson_contents(Ui& ui) {
  if (!lesson_open(ui)) return;
  // Where the lesson is, so a seq2seq window a step opens goes beside it.
  ui.lesson_view.rect = {ImGui::GetWindowPos().x, ImGui::GetWindowPos().y, ImGui::GetWindowSize().x,
                         ImGui::GetWindowSize().y};
  LessonPlayer& p = *ui.lesson;
  const Lesson& l = p.lesson();
  const float fs = ImGui::GetFontSize();

  // The lesson's title is the window's (draw_lesson_window); in a tabbed column, it is here.
  if (!ui.lesson_view.titled) {
    text_disabled_wrapped(l.title);
  }
  ui.lesson_view.titled = false;
  // The step's number is in the tab's label (lesson_tab_label); a thin bar shows how far along.
  const int n = p.step_count(), k = p.step_index();
  ImGui::ProgressBar(static_cast<float>(k + 1) / static_cast<float>(n), {-1, fs * 0.3f}, "");

  // The step's text and question (draw_step_and_question), then the answer row and the buttons,
  // always in view.
  const float buttons_h = buttons_height(ui, p, ImGui::GetContentRegionAvail().x);
  const float room = ImGui::GetContentRegionAvail().y - buttons_h;
  ui.lesson_view.question_room = room;
  draw_step_and_question(ui, p, room, buttons_h);

  draw_lesson_nav(ui);
}

namespace {

// The choices as draw_question lays them out: flowing like words when every one fits on half a
// line, else one sentence a row wrapped beside its button.
float choices_height(const Ui& ui, const LessonQuestion& q, float width) {
  if (q.kind == QuestionKind::kNumber || !ui.state.has_trace()) return 0;
  const float fs = ImGui::GetFontSize();
  const float row = fs * 1.16f + fs * 0.2f;  // the radio's frame (padding 0.08 em) and spacing
  const std::vector<std::string> options = question_options(q, ui.state.trace());
  std::vector<std::string> labels;
  bool short_labels = true;
  for (size_t i = 0; i < options.size(); ++i) {
    labels.push_back(q.kind == QuestionKind::kKey
                         ? options[i]
                         : std::string(1, static_cast<char>('A' + i)) + ".  " + options[i]);
    short_labels = short_labels && radio_width(labels.back().c_str()) <= width * 0.5f;
  }
  if (q.kind == QuestionKind::kKey || short_labels) {
    int rows = labels.empty() ? 0 : 1;
    float x = 0;
    const float gap = ImGui::GetStyle().ItemSpacing.x;
    for (const std::string& l : labels) {
      const float w = radio_width(l.c_str());
      if (x > 0 && x + gap + w > width) {
        ++rows;
        x = 0;
      }
      x += (x > 0 ? gap : 0) + w;
    }
    return static_cast<float>(rows) * row;
  }
  const float text_w =
      width - ImGui::GetFrameHeight() - ImGui::GetStyle().ItemSpacing.x;  // beside its button
  float h = 0;
  for (const std::string& l : labels) {
    const float lines = static_cast<float>(wrapped_lines(l, std::max(text_w, fs * 4)).size());
    h += std::max(fs * 1.16f, lines * fs + (lines - 1) * fs * 0.2f) + fs * 0.2f;
  }
  return h;
}

// The slide's step: title, paragraphs, formula, question, choices and feedback, as drawn by
// draw_step_title, draw_step_text and draw_question in one column of `width`.
float slide_body_height(const Ui& ui, const LessonPlayer& p, float width) {
  const LessonStep& s = p.step();
  const float fs = ImGui::GetFontSize(), sp = ImGui::GetStyle().ItemSpacing.y;
  float h = wrapped_height(s.title, width, ui.fonts.bold) + sp;
  for (const std::string& para : s.text) h += wrapped_height(para, width, ui.fonts.regular) + sp;
  if (!s.formula.empty()) {
    ImGui::PushFont(ui.fonts.mono);
    const float mono = ImGui::GetFontSize();
    const float wrap = width - mono;  // the box's padding, half an em a side
    h += ImGui::CalcTextSize(formula_fitting(s.formula, wrap).c_str(), nullptr, false, wrap).y +
         mono * 0.7f + mono * 0.3f + sp;
    ImGui::PopFont();
  }
  if (s.question) {
    const LessonQuestion& q = *s.question;
    h += sp + 1 + sp;  // Spacing and Separator
    h += wrapped_height(q.prompt, width, ui.fonts.bold);
    h += choices_height(ui, q, width);
    if (class_mode_on(ui)) h += (fs + sp) * 2;  // the class's counts under the question
    const StepAnswer& a = p.answer();
    if (!a.verdict.feedback.empty())
      h += wrapped_height(a.verdict.feedback, width, ui.fonts.regular);
  }
  return h + fs * 0.25f;  // a quarter line to spare: rounding in the wrapped lines' widths
}

float slide_header_height() {
  return ImGui::GetFontSize() * 1.15f + ImGui::GetStyle().ItemSpacing.y;
}

}  // namespace

float lesson_slide_height(Ui& ui, float width) {
  if (!lesson_open(ui)) return 0;
  const ImVec2 pad = ImGui::GetStyle().WindowPadding;
  const float inner = width - pad.x * 2;
  const LessonPlayer& p = *ui.lesson;
  return pad.y * 2 + slide_header_height() + slide_body_height(ui, p, inner) +
         buttons_height(ui, p, inner);
}

// The lesson's column as a slide: how far along (in the bar), the step whole (title, words,
// formula, question, choices, feedback) with nothing to scroll when the layout found it room,
// then the answer row and Previous / Next at the foot.
void draw_lesson_slide(Ui& ui) {
  LessonPlayer& p = *ui.lesson;
  const LessonStep& s = p.step();
  const float fs = ImGui::GetFontSize();
  ui.lesson_view.rect = {ImGui::GetWindowPos().x, ImGui::GetWindowPos().y, ImGui::GetWindowSize().x,
                         ImGui::GetWindowSize().y};
  const int n = p.step_count(), k = p.step_index();
  const std::string where = "Step " + std::to_string(k + 1) + " of " + std::to_string(n);
  ImGui::ProgressBar(static_cast<float>(k + 1) / static_cast<float>(n), {-1, fs * 1.15f},
                     where.c_str());
  const float width = ImGui::GetContentRegionAvail().x;
  const float buttons_h = buttons_height(ui, p, width);
  ui.lesson_view.slide.needed = lesson_slide_height(ui, ImGui::GetWindowSize().x);
  ui.lesson_view.slide.body = slide_body_height(ui, p, width);
  ui.lesson_view.slide.room = ImGui::GetWindowSize().y;
  ui.lesson_view.question_room = ImGui::GetContentRegionAvail().y - buttons_h;
  ui.lesson_view.line_bottoms.clear();
  // Held whole, it has no scrollbar (whose width, left over from a size where the step did not
  // fit, would rewrap the words longer than the room); a step too long for any width scrolls.
  const ImGuiWindowFlags fixed =
      ui.lesson_view.slide.fits ? ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse
                                : 0;
  ImGui::BeginChild(("lesson-slide-" + std::to_string(k)).c_str(), {0, -buttons_h}, false, fixed);
  if (ui.lesson_view.slide.fits) ImGui::SetScrollY(0);
  draw_step_title(ui, s);
  draw_step_text(ui, s);
  ui.lesson_view.prompt_shown = ui.lesson_view.choices_shown = true;
  if (s.question) draw_question(ui, p, *s.question, false);
  ui.lesson_view.slide.choices_whole = ui.lesson_view.choices_shown && ui.lesson_view.prompt_shown;
  ui.lesson_view.slide.drawn = ImGui::GetCursorPosY();  // the body's height as drawn
  ui.lesson_view.slide.scroll_max = ImGui::GetScrollMaxY();
  ui.lesson_view.slide.scroll_max_x = ImGui::GetScrollMaxX();
  ImGui::EndChild();
  if (s.question) {
    draw_answer_row(ui, p, *s.question);
    const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
    ui.lesson_view.question_rect = {at.x, at.y, at.x + size.x, at.y + size.y};
  }
  draw_lesson_nav(ui);
}

void draw_lesson_window(Ui& ui) {
  // The narration's window id: the lesson takes its place and keeps it as the second tab.
  const std::string title =
      (lesson_open(ui) ? "Lesson: " + ui.lesson->lesson().title : std::string("Lesson")) +
      "###narration";
  // In presentation mode the menu bar names the lesson (draw_menu_bar), leaving its line here to
  // the question.
  const ImGuiWindowFlags flags =
      ImGuiWindowFlags_NoCollapse | (ui.presentation ? ImGuiWindowFlags_NoTitleBar : 0);
  if (ui.lesson_view.slide.on && lesson_open(ui)) {
    if (ImGui::Begin(title.c_str(), nullptr, flags | ImGuiWindowFlags_NoScrollbar))
      draw_lesson_slide(ui);
    ImGui::End();
    return;
  }
  if (ImGui::Begin(title.c_str(), nullptr, flags)) {
    ui.lesson_view.titled = true;
    if (ImGui::BeginTabBar("lesson-tabs")) {
      const ImGuiTabItemFlags f =
          ui.lesson_view.select_tab ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
      if (ImGui::BeginTabItem(lesson_tab_label(ui).c_str(), nullptr, f)) {
        draw_lesson_contents(ui);
        ImGui::EndTabItem();
      }
      if (ImGui::BeginTabItem("Narration")) {
        draw_narration_contents(ui);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
      ui.lesson_view.select_tab = false;
    }
  }
  ImGui::End();
}

bool lesson_shortcuts(Ui& ui) {
  if (!lesson_open(ui) || ImGui::GetIO().WantTextInput) return false;
  // Page Down / Page Up: what a presentation clicker sends.
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageDown), false) && ui.lesson->next())
    return apply_lesson_step(ui);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageUp), false) && ui.lesson->previous())
    return apply_lesson_step(ui);
  // R: the question's answer shown (in class mode, revealed to the class) without reaching for
  // the mouse.
  LessonPlayer& p = *ui.lesson;
  if (ImGui::IsKeyPressed(kKeyR, false) && !ImGui::GetIO().KeyCtrl && p.step().question &&
      !p.answer().revealed()) {
    p.show_answer(ui.state.trace(), ui.state.precision);
    p.answer().scroll_to_feedback = true;
  }
  return false;
}

void draw_lesson_highlights(Ui& ui, StageId stage) {
  if (!lesson_open(ui)) return;
  const LessonStep& s = ui.lesson->step();
  if (s.highlights.empty()) return;
  const auto it = ui.views.find("main");
  if (it == ui.views.end() || !it->second.drawn) return;
  const HeatmapViewport& v = it->second;
  const bool per_key = is_query_key(stage);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect({v.clip.x, v.clip.y}, {v.clip.z, v.clip.w}, true);
  const float w = std::max(3.0f, ImGui::GetFontSize() * 0.18f);
  for (const Highlight& h : s.highlights) {
    if (h.query >= v.rows) continue;
    const bool cell = per_key && h.key >= 0 && h.key < v.cols;
    const ImVec2 a = v.cell_min(h.query, cell ? h.key : 0);
    const ImVec2 b{a.x + (cell ? v.cell_w : v.cell_w * v.cols), a.y + v.cell_h};
    dl->AddRect({a.x - w * 0.5f, a.y - w * 0.5f}, {b.x + w * 0.5f, b.y + w * 0.5f}, kHighlightEdge,
                0, 0, w + 2);
    dl->AddRect({a.x - w * 0.5f, a.y - w * 0.5f}, {b.x + w * 0.5f, b.y + w * 0.5f}, kHighlight, 0,
                0, w);
  }
  dl->PopClipRect();
}

}  // namespace attn
