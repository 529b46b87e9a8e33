// Class mode in the app: starting and stopping the server, the join screen, handing the room the
// step on screen (its picture drawn on a worker thread, the question's answer hidden until it is
// revealed), the counts beside the question and the distribution of answers on Reveal.
#include "gui/panel_class.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <stdexcept>

#include "attention/format.h"
#include "gui/heatmap_widget.h"
#include "gui/model/lesson_player.h"
#include "lessons/lesson_sheet.h"
#include "render/worksheet.h"

namespace attn {

namespace {

// A picture of a scenario's stage larger than this says nothing on a phone, and copying its trace
// for the worker would cost the frame: above it the step has no picture.
constexpr long kClassPictureMaxCells = 64L * 64L * 16L;

const ImVec4 kAccent{0.18f, 0.44f, 0.87f, 1};
const ImU32 kRightColour = IM_COL32(46, 125, 50, 255);

std::string random_code() {
  std::random_device rd;
  std::uniform_int_distribution<int> digit(0, 9);
  std::string code;
  for (int i = 0; i < 4; ++i) code += static_cast<char>('0' + digit(rd));
  return code;
}

// A session code a student can type on a phone: 4 to 16 letters or digits.
bool valid_code(const std::string& code) {
  return code.size() >= 4 && code.size() <= 16 &&
         std::all_of(code.begin(), code.end(),
                     [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; });
}

ClassModePanel& panel(Ui& ui) { return ui.class_mode.get(); }

bool lesson_open(const Ui& ui) { return ui.lesson && ui.lesson->is_open(); }

// `text` at `px` pixels in `font`, as an item (so layouts and tests see it), in `colour`.
void big_text(Ui& ui, ImFont* font, float px, const std::string& text, ImU32 colour) {
  const ImVec2 at = ImGui::GetCursorScreenPos();
  draw_text(widgets(ui), ImGui::GetWindowDrawList(), font, px, at, colour, text, false);
  ImGui::Dummy({text_width(font, px, text), px});
}

// The largest size up to `most` pixels at which `text` fits `width`.
float fitting_px(ImFont* font, const std::string& text, float width, float most) {
  const float w = text_width(font, most, text);
  return w <= width ? most : std::max(8.0f, most * width / w);
}

// The QR code at `at`, `side` pixels square with its quiet zone: dark modules on white whatever
// the theme (a phone's camera reads dark on light).
void draw_qr(const QrMatrix& qr, ImVec2 at, float side) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(at, {at.x + side, at.y + side}, IM_COL32_WHITE);
  const int modules = qr.width + 8;  // four light modules each side
  const float m = std::floor(side / static_cast<float>(modules));
  if (m < 1) return;
  const float pad = std::floor((side - m * static_cast<float>(qr.width)) / 2);
  for (int y = 0; y < qr.width; ++y)
    for (int x = 0; x < qr.width; ++x)
      if (qr.at(x, y)) {
        const ImVec2 a{at.x + pad + m * static_cast<float>(x),
                       at.y + pad + m * static_cast<float>(y)};
        dl->AddRectFilled(a, {a.x + m, a.y + m}, IM_COL32_BLACK);
      }
}

// The first form of the window, and the one after a failed start: where to listen.
void draw_start_form(Ui& ui, ClassModePanel& c) {
  const float fs = ImGui::GetFontSize();
  text_wrapped_at_spaces(
      "Class mode lets every student answer the question on the screen from a phone or laptop on "
      "this network: the app serves one page, and nothing else, until class mode stops.");
  ImGui::Spacing();
  if (!c.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.8f, 0.1f, 0.1f, 1));
    text_wrapped_at_spaces(c.error);
    ImGui::PopStyleColor();
    ImGui::Spacing();
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Port");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(fs * 6);
  ImGui::InputInt("##class-port", &c.port, 0, 0);
  c.port = std::clamp(c.port, 1, 65535);
  ImGui::SameLine();
  ImGui::Checkbox("Only this computer (a test)", &c.local_only);
  if (ImGui::Button("Start class mode")) {
    std::string error;
    start_class_mode(ui, c.local_only ? "127.0.0.1" : kClassDefaultBind, c.port, "", error);
  }
}

// The counts, one line: "12 joined · 7 answered".
std::string counts_line(const ClassCounts& n, bool question) {
  std::string s = std::to_string(n.joined) + " joined";
  if (question) s += " · " + std::to_string(n.answered) + " answered";
  return s;
}

// The numbers' histogram: a bar per bin over [lo, hi] with its count above it, the axis's ends
// under it, and under those the true value marked ▲ in green at its place.
void draw_histogram(Ui& ui, const ClassDistribution& d, int precision, float width, float height) {
  const float fs = ImGui::GetFontSize(), small = fs * 0.85f;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const ImU32 bar = ImGui::GetColorU32(kAccent);
  const float top = at.y + small * 1.2f;           // room for the tallest bar's count
  const float bottom = at.y + height - fs * 2.6f;  // the axis; its labels and the answer below
  const int most = std::max(1, *std::max_element(d.bins.begin(), d.bins.end()));
  const float bw = width / static_cast<float>(d.bins.size());
  for (size_t b = 0; b < d.bins.size(); ++b) {
    if (d.bins[b] == 0) continue;
    const float x0 = at.x + bw * static_cast<float>(b);
    const float h = (bottom - top) * static_cast<float>(d.bins[b]) / static_cast<float>(most);
    dl->AddRectFilled({x0 + 1, bottom - h}, {x0 + bw - 1, bottom}, bar);
    const std::string n = std::to_string(d.bins[b]);
    const float tw = text_width(ui.fonts.regular, small, n);
    draw_text(widgets(ui), dl, ui.fonts.regular, small,
              {x0 + (bw - tw) / 2, bottom - h - small * 1.15f}, ink, n, false);
  }
  dl->AddLine({at.x, bottom}, {at.x + width, bottom}, dim);
  const std::string lo = format_fixed(d.lo, precision, true);
  const std::string hi = format_fixed(d.hi, precision, true);
  draw_text(widgets(ui), dl, ui.fonts.regular, small, {at.x, bottom + 2}, dim, lo, false);
  draw_text(widgets(ui), dl, ui.fonts.regular, small,
            {at.x + width - text_width(ui.fonts.regular, small, hi), bottom + 2}, dim, hi, false);
  if (d.truth) {
    const double span = d.hi > d.lo ? d.hi - d.lo : 1;
    const float thick = std::max(2.0f, fs * 0.1f);
    const float x = std::clamp(at.x + static_cast<float>((*d.truth - d.lo) / span) * width,
                               at.x + thick, at.x + width - thick);
    dl->AddLine({x, top}, {x, bottom}, kRightColour, thick);
    // The triangle right under the line, the words on the side with room.
    const std::string value = "answer " + format_fixed(*d.truth, precision, true);
    const bool left = x > at.x + width / 2;
    const std::string t = left ? value + " ▲" : "▲ " + value;
    const float tw = text_width(ui.fonts.bold, fs, t);
    const float tri = text_width(ui.fonts.bold, fs, "▲");
    const float tx = std::clamp(left ? x + tri / 2 - tw : x - tri / 2, at.x, at.x + width - tw);
    draw_text(widgets(ui), dl, ui.fonts.bold, fs, {tx, bottom + small * 1.3f}, kRightColour, t,
              false);
  }
  ImGui::Dummy({width, height});
}

// A bar per choice: its label (lettered as the lesson shows a statement's choices), then a bar
// as long as its share, the right one in green.
void draw_choice_bars(Ui& ui, const ClassDistribution& d, bool lettered, float width) {
  const float fs = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int most = std::max(1, *std::max_element(d.counts.begin(), d.counts.end()));
  const float label_w = std::min(width * 0.45f, fs * 9);
  for (size_t i = 0; i < d.choices.size(); ++i) {
    const bool right = static_cast<int>(i) == d.right_choice;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const std::string text =
        lettered ? std::string(1, static_cast<char>('A' + i)) + ". " + d.choices[i] : d.choices[i];
    const std::string label = elide_to_width(text, label_w - fs * 0.4f);
    draw_text(widgets(ui), dl, right ? ui.fonts.bold : ui.fonts.regular, fs, at,
              right ? kRightColour : ImGui::GetColorU32(ImGuiCol_Text), label, false);
    const std::string n = std::to_string(d.counts[i]) + (right ? "  ◀ right" : "");
    const float n_w = text_width(ui.fonts.regular, fs, n) + fs * 0.4f;
    const float room = std::max(0.0f, width - label_w - n_w);
    const float len = room * static_cast<float>(d.counts[i]) / static_cast<float>(most);
    const float y0 = at.y + fs * 0.15f, y1 = at.y + fs * 0.95f;
    dl->AddRectFilled({at.x + label_w, y0}, {at.x + label_w + std::max(len, 2.0f), y1},
                      right ? kRightColour : ImGui::GetColorU32(kAccent));
    draw_text(widgets(ui), dl, ui.fonts.regular, fs, {at.x + label_w + len + fs * 0.3f, at.y},
              ImGui::GetColorU32(ImGuiCol_Text), n, false);
    ImGui::Dummy({width, fs * 1.15f});
  }
}

// The room is told about the step on screen: what it asks, the trace answers are checked on, and
// (on a worker) its picture, with the answer hidden unless `revealed`.
void publish_step(Ui& ui, ClassModePanel& c, bool revealed) {
  AppState& st = ui.state;
  const AttentionTrace& t = st.trace();
  ClassStep s;
  std::optional<LessonStep> step;
  StageId stage = st.current_stage().id;
  int head = st.head();
  if (lesson_open(ui)) {
    const LessonPlayer& p = *ui.lesson;
    step = p.step();
    s.index = p.step_index();
    s.title = step->title;
    s.question = step->question;
  } else {
    s.index = 0;
    s.title = std::string(st.current_stage().title) + " — " + st.scenario().name;
  }
  const long cells = static_cast<long>(t.n_q) * t.n_k * std::max(1, t.num_heads);
  const bool small = cells <= kClassPictureMaxCells;
  // The trace answers are checked on: the step's own, as the app checks the teacher's.
  if (s.question || small) s.trace = t;
  s.precision = st.precision;
  const bool picture = small || (step && !(step->lm_model.empty() && step->seq2seq_model.empty()));
  AttentionTrace for_picture = picture && small ? s.trace : AttentionTrace{};
  c.room->publish(std::move(s));
  if (revealed) c.room->reveal();
  if (!picture) {
    c.picture_job.cancel();
    return;
  }
  // What the picture hides: the step's answer until revealed, and later steps' answers it holds.
  QuestionSecret hide;
  if (lesson_open(ui)) {
    hide = ui.lesson->later_secret(t);
    if (!revealed && step && step->question) {
      QuestionSecret own = question_secret(*step->question, t);
      own.later = std::move(hide.later);
      hide = std::move(own);
    }
  }
  c.picture_job.start([trace = std::move(for_picture), step, stage, head,
                       hide = std::move(hide)](JobControl&) -> std::string {
    std::string error;
    SheetFigure f;
    if (step) {
      f = lesson_step_figure(*step, trace, hide, error);
    } else if (stage != StageId::kInputs && trace.find(stage)) {
      f.trace = &trace;
      f.stage = stage;
      f.head = head;
    }
    if (!f.drawn()) {
      if (!error.empty()) throw std::runtime_error(error);
      return "";
    }
    std::string bytes;
    if (!render_sheet_figure(f, kClassPictureW, kClassPictureH, ImageFormat::kSvg, bytes, error))
      throw std::runtime_error(error);
    return bytes;
  });
}

}  // namespace

bool class_mode_on(const Ui& ui) { return ui.class_mode.state && ui.class_mode.state->running(); }

bool start_class_mode(Ui& ui, const std::string& bind, int port, const std::string& code_given,
                      std::string& error) {
  ClassModePanel& c = panel(ui);
  ui.class_mode.open = true;
  const std::string code = code_given.empty() ? random_code() : code_given;
  if (!valid_code(code)) {
    error = "--class-code: expected 4 to 16 letters or digits, got '" + printable_text(code) + "'";
    c.error = error;
    return false;
  }
  stop_class_mode(ui);
  c.bind = bind;
  c.port = port;
  c.server.reset();
  c.room = std::make_unique<ClassRoom>(code);
  c.server = std::make_unique<ClassServer>(*c.room);
  error = c.server->start(bind, port);
  if (!error.empty()) {
    c.error = "Class mode could not start on " + bind + ":" + std::to_string(port) + ": " + error +
              ". Choose another port, or close the program that uses it.";
    c.server.reset();
    ui.state.set_message(c.error, true);
    return false;
  }
  c.error.clear();
  c.port = c.server->port();
  c.other_hosts.clear();
  if (bind == "0.0.0.0") {
    std::vector<std::string> hosts = local_ipv4_addresses();
    c.host = hosts.empty() ? "127.0.0.1" : hosts.front();
    if (hosts.size() > 1) c.other_hosts.assign(hosts.begin() + 1, hosts.end());
  } else {
    c.host = bind;
  }
  c.url = class_url(c.host, c.port, code);
  std::string qr_error;
  c.qr = qr_matrix(c.url, qr_error);
  c.published_key.clear();
  c.published_revealed = false;
  ui.state.set_message("Class mode: students open http://" + c.host + ":" + std::to_string(c.port) +
                           " and type the code " + code,
                       false);
  return true;
}

void stop_class_mode(Ui& ui) {
  if (!ui.class_mode.state) return;
  ClassModePanel& c = *ui.class_mode.state;
  c.picture_job.cancel();
  if (c.server) c.server->stop();
  c.server.reset();
  ui.class_mode.training = false;
}

void poll_class_mode(Ui& ui) {
  if (!ui.class_mode.state) return;
  ClassModePanel& c = *ui.class_mode.state;
  // Answers arrive from other threads: wake a few times a second to show the counts.
  ui.class_mode.training = c.running();
  if (std::optional<JobResult<std::string>> done = c.picture_job.poll()) {
    if (done->ok() && c.room) {
      c.room->set_picture(*done->value);
      c.picture_error.clear();
    } else if (!done->cancelled) {
      c.picture_error = done->error;
    }
  }
  if (!c.running()) return;
  c.counts = c.room->counts();
  AppState& st = ui.state;
  // The step's numbers are not in yet: the room keeps the last step until they are.
  if (!st.has_trace() || st.computing()) return;
  std::string key;
  bool revealed = false;
  if (lesson_open(ui)) {
    const LessonPlayer& p = *ui.lesson;
    key = "lesson " + p.lesson().path + " " + std::to_string(p.step_index());
    revealed = p.step().question && p.answer().revealed();
  } else {
    key = std::string("stage ") + st.current_stage().name + " " + std::to_string(st.head());
  }
  key += " " + std::to_string(st.trace_serial()) + " " + std::to_string(st.precision);
  if (key == c.published_key && revealed == c.published_revealed) return;
  if (lesson_open(ui) && c.published_key.rfind("lesson " + ui.lesson->lesson().path + " ", 0) != 0)
    c.room->start_lesson(ui.lesson->lesson().title);
  // The class has joined once the lesson moves on: the join screen leaves the stage to the step
  // (the status bar's "Class …" brings it back for a latecomer).
  const std::string step_part = key.substr(0, key.rfind(' ', key.rfind(' ') - 1));
  if (!c.published_key.empty() && c.published_key.rfind(step_part + " ", 0) != 0)
    ui.class_mode.open = false;
  publish_step(ui, c, revealed);
  c.published_key = key;
  c.published_revealed = revealed;
}

void draw_class_window(Ui& ui) {
  ClassModePanel& c = panel(ui);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float fs = ImGui::GetFontSize();
  // Centred over the stage, and placed again when the screen or the text size changes (a
  // projector plugged in, Ctrl+=): the teacher can still move it.
  const ImVec4 placed_for{vp->Size.x, vp->Size.y, fs, 0};
  const ImGuiCond cond = placed_for.x != c.placed_for.x || placed_for.y != c.placed_for.y ||
                                 placed_for.z != c.placed_for.z
                             ? ImGuiCond_Always
                             : ImGuiCond_Appearing;
  c.placed_for = placed_for;
  ImGui::SetNextWindowPos(vp->GetCenter(), cond, {0.5f, 0.5f});
  ImGui::SetNextWindowSize(
      {std::min(vp->Size.x * 0.92f, fs * 46), std::min(vp->Size.y * 0.84f, fs * 24)}, cond);
  if (!ImGui::Begin("Class mode###class-mode", &ui.class_mode.open, ImGuiWindowFlags_NoCollapse)) {
    ImGui::End();
    return;
  }
  if (!c.running()) {
    draw_start_form(ui, c);
    ImGui::End();
    return;
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  const float buttons_h = ImGui::GetFrameHeightWithSpacing() + style.ItemSpacing.y;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // The QR code as large as the window allows beside the words (under them when narrow).
  const bool side_by_side = avail.x >= avail.y * 1.3f;
  const float qr_side =
      std::max(0.0f, side_by_side ? std::min(avail.y - buttons_h, avail.x * 0.42f)
                                  : std::min(avail.x, (avail.y - buttons_h) * 0.5f));
  if (c.qr && qr_side > 0) {
    draw_qr(*c.qr, ImGui::GetCursorScreenPos(), qr_side);
    ImGui::Dummy({qr_side, qr_side});
    c.qr_px = qr_side;
    if (side_by_side) ImGui::SameLine(0, fs * 1.2f);
  }
  ImGui::BeginGroup();
  const float words_w = side_by_side ? ImGui::GetContentRegionAvail().x : avail.x;
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const std::string scan = "Scan the code, or open in a browser:";
  big_text(ui, ui.fonts.regular, fitting_px(ui.fonts.regular, scan, words_w, fs), scan, dim);
  const std::string address = "http://" + c.host + ":" + std::to_string(c.port);
  big_text(ui, ui.fonts.cells, fitting_px(ui.fonts.cells, address, words_w, fs * 2.2f), address,
           ImGui::GetColorU32(kAccent));
  for (const std::string& h : c.other_hosts) {
    const std::string also = "or http://" + h + ":" + std::to_string(c.port);
    big_text(ui, ui.fonts.regular, fitting_px(ui.fonts.regular, also, words_w, fs * 0.85f), also,
             dim);
  }
  ImGui::Dummy({0, fs * 0.4f});
  big_text(ui, ui.fonts.regular,
           std::min(fs, fitting_px(ui.fonts.regular, "Session code", words_w, fs)), "Session code",
           dim);
  const std::string& code = c.room->code();
  c.code_px = fitting_px(ui.fonts.cells, code, words_w, fs * 4.5f);
  big_text(ui, ui.fonts.cells, c.code_px, code, ink);
  ImGui::Dummy({0, fs * 0.4f});
  const bool question = lesson_open(ui) && ui.lesson->step().question.has_value();
  const std::string counts = counts_line(c.counts, question);
  big_text(ui, ui.fonts.title,
           fitting_px(ui.fonts.title, counts, words_w, ui.fonts.title->FontSize), counts, ink);
  if (!c.picture_error.empty()) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + words_w);
    ImGui::TextDisabled("The picture students see could not be drawn: %s", c.picture_error.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::EndGroup();
  // The buttons at the foot of the window.
  ImGui::SetCursorPosY(std::max(ImGui::GetCursorPosY(),
                                ImGui::GetWindowContentRegionMax().y - ImGui::GetFrameHeight()));
  if (ImGui::Button("Hide")) ui.class_mode.open = false;
  ImGui::SameLine();
  if (ImGui::Button("Save results…")) {
    ui.dialogs.path = PathDialog::kClassResults;
    ui.dialogs.buffer = c.saved_path.empty() ? "class-results.csv" : c.saved_path;
  }
  ImGui::SameLine();
  if (ImGui::Button("Stop class mode")) ui.defer([&ui] { stop_class_mode(ui); });
  ImGui::End();
}

void draw_class_question(Ui& ui) {
  if (!class_mode_on(ui) || !lesson_open(ui)) return;
  ClassModePanel& c = *ui.class_mode.state;
  const LessonPlayer& p = *ui.lesson;
  if (!p.step().question) return;
  const float fs = ImGui::GetFontSize();
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
  ImGui::PushFont(ui.fonts.bold);
  text_wrapped_at_spaces("Class: " + counts_line(c.counts, true));
  ImGui::PopFont();
  ImGui::PopStyleColor();
  c.distribution_drawn = false;
  // From the frame the answer is shown (the room closes to answers on the next poll).
  if (!p.answer().revealed()) return;
  const ClassDistribution d = c.room->distribution(10);
  if (d.total == 0) {
    ImGui::TextDisabled("No answers from the class.");
    return;
  }
  text_wrapped_at_spaces(std::to_string(d.right) + " of " + std::to_string(d.total) + " right (" +
                         std::to_string((100 * d.right + d.total / 2) / d.total) + "%)");
  const float width = ImGui::GetContentRegionAvail().x;
  if (d.kind == ClassKind::kNumber && !d.bins.empty())
    draw_histogram(ui, d, ui.state.precision, width,
                   std::clamp(ImGui::GetContentRegionAvail().y - fs * 2, fs * 5.5f, fs * 8));
  else if (d.kind == ClassKind::kChoice)
    draw_choice_bars(ui, d, p.step().question->kind == QuestionKind::kStatement, width);
  c.distribution_drawn = true;
}

void draw_class_status(Ui& ui) {
  if (!class_mode_on(ui)) return;
  const ClassModePanel& c = *ui.class_mode.state;
  const std::string s =
      "Class " + c.room->code() + " · " + std::to_string(c.counts.joined) + " joined";
  ImGui::PushStyleColor(ImGuiCol_Text, kAccent);
  ImGui::TextUnformatted(s.c_str());
  ImGui::PopStyleColor();
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Class mode is on: click to show how to join");
  if (ImGui::IsItemClicked()) ui.class_mode.open = true;
  ImGui::SameLine();
}

std::string save_class_results(Ui& ui, const std::string& path) {
  if (!ui.class_mode.state || !ui.class_mode.state->room) return "class mode has no results yet";
  ClassModePanel& c = *ui.class_mode.state;
  std::string error;
  if (!c.room->save_results_csv(path, error)) return error;
  c.saved_path = path;
  ui.state.set_message("Saved the class's results to " + path, false);
  return "";
}

}  // namespace attn
