// Class mode in the app, headless, talking HTTP to the app's own server on 127.0.0.1: off unless
// asked for; gui --class-mode's flags; a lesson question answered by devices and counted beside
// the question; the picture students get hides the answer until Reveal and shows it after; the
// distribution drawn on Reveal; the class following Page Down; the results saved as CSV; and the
// join screen laid out whole at 1280×720 in presentation mode.
// Eigen (through the app's headers) comes before httplib.h: the resolver header httplib includes
// defines `_res`, which would rename a parameter of Eigen's templates.
// clang-format off
#include "gui/panel_class.h"
#include "gui_headless.h"
// clang-format on

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "attention/format.h"
#include "gui/gui.h"
#include "gui/model/lesson_player.h"
#include "gui_support/layout_check.h"
#include "reference.h"

namespace attn {
namespace {

using nlohmann::json;

constexpr const char* kCode = "4821";

class ClassGui : public test::HeadlessApp {
 protected:
  // The app on lesson 05 ("Fear is" by hand) at `step` (1-based) with class mode on a free port.
  void start(int step) {
    GuiOptions o;
    o.lesson = "05-fear-is-by-hand";
    o.lesson_step = step;
    o.class_mode = true;
    o.class_bind = "127.0.0.1";
    o.class_port = 0;
    o.class_code = kCode;
    std::string error;
    ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
    ASSERT_TRUE(class_mode_on(ui));
    client = std::make_unique<httplib::Client>("127.0.0.1", ui.class_mode.state->port);
    client->set_read_timeout(5, 0);
  }
  ClassModePanel& panel() { return *ui.class_mode.state; }

  // Frames until the room has a picture for the current step, newer than `after` (its number in
  // the state), drawn on the worker thread.
  int picture_after(int after) {
    for (int i = 0; i < 600; ++i) {
      frame();
      const json s = state_json();
      if (s.value("picture", 0) > after && !panel().picture_job.running() &&
          !panel().room->picture().empty())
        return s["picture"].get<int>();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "no picture after 6 s";
    return after;
  }
  json state_json() {
    const httplib::Result r = client->Get(std::string("/api/state?code=") + kCode);
    if (!r || r->status != 200) {
      ADD_FAILURE() << "GET /api/state: " << (r ? r->status : -1);
      return json::object();
    }
    return json::parse(r->body);
  }
  std::string svg() {
    const httplib::Result r = client->Get(std::string("/step.svg?code=") + kCode);
    EXPECT_TRUE(r && r->status == 200);
    return r ? r->body : "";
  }
  int answer(const std::string& client_id, const std::string& text) {
    const json body = {{"code", kCode}, {"client", client_id}, {"answer", text}};
    const httplib::Result r = client->Post("/api/answer", body.dump(), "application/json");
    return r ? r->status : -1;
  }
  std::unique_ptr<httplib::Client> client;
};

// The picture's words are checked where they are made (test_lesson_sheets: every question's
// picture hides its answer); here the bytes are checked to be a picture at all.
bool looks_like_svg(const std::string& s) { return s.find("<svg") != std::string::npos; }

TEST_F(ClassGui, NothingListensUnlessAsked) {
  GuiOptions o;
  o.lesson = "05-fear-is-by-hand";
  std::string error;
  ASSERT_TRUE(setup_from_options(ui, o, error)) << error;
  frames(3);
  EXPECT_FALSE(class_mode_on(ui));
  EXPECT_FALSE(ui.class_mode.state) << "class mode made a room without being asked";
}

TEST_F(ClassGui, FlagsAreChecked) {
  GuiOptions o;
  o.class_mode = true;
  o.class_bind = "127.0.0.1";
  o.class_port = 0;
  o.class_code = "12";
  std::string error;
  EXPECT_FALSE(setup_from_options(ui, o, error));
  EXPECT_EQ(error.rfind("--class-code: expected 4 to 16 letters or digits", 0), 0u) << error;
  EXPECT_FALSE(class_mode_on(ui));
  o.class_code = "12ab";
  o.class_bind = "203.0.113.7";  // TEST-NET-3: never this computer's
  EXPECT_FALSE(setup_from_options(ui, o, error));
  EXPECT_NE(error.find("--class-bind 203.0.113.7"), std::string::npos) << error;
  EXPECT_FALSE(class_mode_on(ui));
  // A port another server holds is named too.
  ClassRoom other("9999");
  ClassServer holder(other);
  ASSERT_EQ(holder.start("127.0.0.1", 0), "");
  o.class_bind = "127.0.0.1";
  o.class_port = holder.port();
  EXPECT_FALSE(setup_from_options(ui, o, error));
  EXPECT_NE(error.find("--class-port " + std::to_string(holder.port())), std::string::npos)
      << error;
}

TEST_F(ClassGui, AQuestionIsAnsweredCountedAndRevealed) {
  // Step 6: "What weight does “Fear” give itself?" softmax(0.27/√3, 0.54/√3)[0]
  // = 1 / (1 + e^{0.27/√3}) = 0.46112…
  start(6);
  const double truth = 1 / (1 + std::exp(0.27 / std::sqrt(3.0)));
  ASSERT_NEAR(truth, 0.4611, 1e-4);
  const int first = picture_after(0);
  json s = state_json();
  EXPECT_EQ(s["step"], 6);
  EXPECT_EQ(s["kind"], "number");
  EXPECT_EQ(s["question"], "What weight does “Fear” give itself?");
  EXPECT_FALSE(s["revealed"].get<bool>());
  EXPECT_FALSE(s.contains("answer")) << s.dump();
  const std::string hidden = svg();
  EXPECT_TRUE(looks_like_svg(hidden));

  // Three devices answer: right, near, wrong; one changes its mind. Counted, never named.
  EXPECT_EQ(answer("device-a", format_fixed(truth, 4)), 200);
  EXPECT_EQ(answer("device-b", "0.5"), 200);
  EXPECT_EQ(answer("device-c", "0.2"), 200);
  EXPECT_EQ(answer("device-c", "0.46"), 200);
  EXPECT_EQ(answer("device-d", "a lot"), 400);
  frames(2);
  EXPECT_EQ(panel().counts.answered, 3);
  EXPECT_EQ(panel().counts.joined, 4) << "every device that sent a request has joined";
  EXPECT_FALSE(panel().distribution_drawn) << "the distribution shows only on Reveal";

  // Reveal (the lesson's "Reveal to the class"): the state carries the answer, answers close,
  // the picture is drawn again without the blanks, and the histogram is on the teacher's screen.
  ui.lesson->show_answer(state.trace(), state.precision);
  frames(2);
  s = state_json();
  EXPECT_TRUE(s["revealed"].get<bool>());
  EXPECT_EQ(s["answer"], "0.4611");
  EXPECT_TRUE(panel().distribution_drawn);
  const ClassDistribution d = panel().room->distribution(10);
  EXPECT_EQ(d.total, 3);
  EXPECT_EQ(d.right, 2) << "0.4611 and 0.46 are right at the lesson's tolerance; 0.5 is not";
  ASSERT_TRUE(d.truth);
  EXPECT_NEAR(*d.truth, truth, 1e-6);
  EXPECT_EQ(answer("device-e", "0.46"), 400) << "answers close on Reveal";
  picture_after(first);
  EXPECT_NE(svg(), hidden) << "the revealed picture is the one without blanks";

  // The results, saved as the teacher's CSV: the question and its three answers.
  const std::string path = std::string(ATTN_TEST_TMP) + "/class-results.csv";
  std::remove(path.c_str());
  EXPECT_EQ(save_class_results(ui, path), "");
  std::ifstream in(path);
  std::stringstream csv;
  csv << in.rdbuf();
  EXPECT_NE(csv.str().find("What weight does"), std::string::npos) << csv.str();
}

TEST_F(ClassGui, TheClassFollowsTheLesson) {
  start(3);  // a choice question: what went wrong in the source's step 1
  picture_after(0);
  json s = state_json();
  EXPECT_EQ(s["kind"], "choice");
  ASSERT_EQ(s["choices"].size(), 3u);
  EXPECT_EQ(answer("device-a", s["choices"][0].get<std::string>()), 200);
  EXPECT_EQ(answer("device-b", "none of them"), 400) << "only the lesson's choices are answers";
  // Page Down, as a clicker sends it: the state is the next step's within a frame or two.
  press(ImGui::GetKeyIndex(ImGuiKey_PageDown));
  frames(3);
  s = state_json();
  EXPECT_EQ(s["step"], 4);
  EXPECT_EQ(s["kind"], "number");
  EXPECT_EQ(s["answers"], 0) << "a new question starts with no answers";
  // R reveals, as the button does.
  press(kKeyR);
  frames(2);
  EXPECT_TRUE(state_json()["revealed"].get<bool>());
}

TEST_F(ClassGui, StoppingFreesThePort) {
  start(6);
  const int port = panel().port;
  stop_class_mode(ui);
  EXPECT_FALSE(class_mode_on(ui));
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get(std::string("/api/state?code=") + kCode)) << "still serving after stop";
  frames(2);  // and the app goes on without it
}

TEST_F(ClassGui, TheJoinScreenIsWholeOnAProjector) {
  ui.presentation = true;
  for (const float px : {20.0f, 32.0f}) {
    ui.settings.font_px = px;
    for (const auto& [w, h] : {std::pair{1280, 720}, std::pair{1920, 1080}}) {
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " at " + std::to_string(px));
      if (!ui.class_mode.state) start(6);
      resize_to(w, h);
      ui.class_mode.open = true;
      ImGui::GetIO().DisplaySize = {static_cast<float>(w), static_cast<float>(h)};
      frames(2);  // the fonts and window settle at this size
      std::vector<PlacedText> texts;
      std::vector<test::ItemBox> items;
      ui.probes.text_log = &texts;
      test::record_items(&items);
      frame();
      test::record_items(nullptr);
      ui.probes.text_log = nullptr;
      // Readable from the back: a code at least twice the text's size, a QR code of at least
      // 240 px (about 7 px a module for this URL's 25 or 29 modules plus the quiet zone).
      EXPECT_GE(panel().code_px, 2 * ImGui::GetFontSize());
      EXPECT_GE(panel().qr_px, 240.0f);
      bool code_shown = false;
      for (const PlacedText& t : texts) code_shown = code_shown || t.text == kCode;
      EXPECT_TRUE(code_shown);
      EXPECT_EQ(test::check_layout(items, texts), 0);
    }
  }
}

}  // namespace
}  // namespace attn
