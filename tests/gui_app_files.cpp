// Issue 28, classes 7 and 10 in the app: the text helpers draw a text of any length without
// ImGui's 16-bit index limit aborting the frame, and fonts from ATTN_FONT_DIR that are garbage, a
// FIFO or /dev/zero are passed over with a warning while the app runs on (docs/robustness.md).
#include <gtest/gtest.h>
#include <imgui.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gui/ui.h"
#include "lessons/lesson.h"
#include "npy_fixture.h"
#include "reference.h"

namespace attn {
namespace {

using test::run_cli;
using test::temp_dir;
using test::temp_path;
using test::write_bytes;

// A formula breaks only between its parts: after a comma outside brackets, or in the gap of two
// spaces between two formulas; every other space is a no-break space (U+00A0).
TEST(TextHelpers, FormulasBreakOnlyBetweenTheirParts) {
  const std::string nb = "\xc2\xa0";
  EXPECT_EQ(
      formula_for_wrapping("masked = scaled if j ≤ i, else −∞"),
      "masked =" + nb + "scaled" + nb + "if" + nb + "j" + nb + "≤" + nb + "i, else" + nb + "−∞");
  EXPECT_EQ(formula_for_wrapping("w = exp(s(i, j))"), "w =" + nb + "exp(s(i," + nb + "j))");
  EXPECT_EQ(formula_for_wrapping("Q = X·W  K = X·W"), "Q =" + nb + "X·W  K =" + nb + "X·W");
  // Before each ×, never inside "head size".
  EXPECT_EQ(formula_for_wrapping("bytes = 2 × K/V heads × head size"),
            "bytes =" + nb + "2 ×" + nb + "K/V" + nb + "heads ×" + nb + "head" + nb + "size");
  // Inside brackets an operator keeps its operands: "(a + b)" stays whole.
  EXPECT_EQ(formula_for_wrapping("y = (a + b) · c"),
            "y =" + nb + "(a" + nb + "+" + nb + "b) ·" + nb + "c");
  EXPECT_EQ(formula_for_wrapping(""), "");
  // Allowed inside brackets too, where a part would not fit a line whole.
  EXPECT_EQ(formula_for_wrapping("e = tanh(W s + U h)", true),
            "e =" + nb + "tanh(W" + nb + "s +" + nb + "U" + nb + "h)");
}

// A formula keeps its parts whole where each fits the width; where one does not, it may break
// before an operator inside brackets (else ImGui would break it between any two characters).
TEST(TextHelpers, AFormulaTooWideForItsBoxBreaksInsideItsBrackets) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = {1600, 1000};
  unsigned char* px = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsAlpha8(&px, &w, &h);
  ImGui::NewFrame();
  const std::string f = "e_ij = v_a tanh(W_a s_{i-1} + U_a h_j)";
  // The widest part of a formula split at its spaces (the no-break ones hold).
  auto widest = [](const std::string& s) {
    float most = 0;
    for (size_t a = 0; a <= s.size();) {
      size_t b = s.find(' ', a);
      if (b == std::string::npos) b = s.size();
      most = std::max(most, ImGui::CalcTextSize(s.c_str() + a, s.c_str() + b).x);
      a = b + 1;
    }
    return most;
  };
  const std::string strict = formula_for_wrapping(f), loose = formula_for_wrapping(f, true);
  ASSERT_LT(widest(loose), widest(strict));
  EXPECT_EQ(formula_fitting(f, widest(strict)), strict);
  EXPECT_EQ(formula_fitting(f, widest(strict) - 1), loose);
  ImGui::EndFrame();
  ImGui::DestroyContext();
}

TEST(TextHelpers, TextsOfAnyLengthAreDrawnWithinImGuisIndexLimit) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = {1600, 1000};
  io.DeltaTime = 1.0f / 60;
  // As the app's OpenGL 3 renderer: meshes may pass 65,536 vertices between draws, never within
  // one text.
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
  unsigned char* px = nullptr;
  int w = 0, h = 0;
  io.Fonts->GetTexDataAsAlpha8(&px, &w, &h);
  std::string words;
  while (words.size() < 30000) words += "attention ";
  const std::string one_word(30000, 'x');
  ImGui::NewFrame();
  ImGui::SetNextWindowPos({0, 0});
  // Sized to its content, so every line is visible and drawn (the case that aborted).
  ImGui::Begin("long", nullptr, ImGuiWindowFlags_AlwaysAutoResize);
  text_wrapped_at_spaces(words);
  text_disabled_wrapped(one_word);
  const std::string elided = elide_to_width(one_word, 300);
  ImGui::TextUnformatted(elided.c_str());
  ImGui::End();
  ImGui::Render();
  ASSERT_NE(ImGui::GetDrawData(), nullptr);
  EXPECT_LE(ImGui::CalcTextSize(elided.c_str()).x, 300);
  EXPECT_EQ(elided.substr(elided.size() - 3), "…");
  EXPECT_GT(elided.size(), 10u);
  // A text that fits is left whole.
  EXPECT_EQ(elide_to_width("short", 300), "short");
  ImGui::DestroyContext();
}

class UnderXvfb : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* d = std::getenv("DISPLAY");
    if (!d || !*d) GTEST_SKIP() << "DISPLAY is not set: run under xvfb-run (scripts/test.sh does)";
  }
};

TEST_F(UnderXvfb, BrokenFontsInTheFontFolderArePassedOverWithAWarning) {
  const std::string dir = temp_dir("fonts");
  ASSERT_TRUE(write_bytes(dir + "/DejaVuSans.ttf", std::string(5000, 'g')));
  ASSERT_EQ(::mkfifo((dir + "/DejaVuSans-Bold.ttf").c_str(), 0600), 0);
  ASSERT_EQ(::symlink("/dev/zero", (dir + "/DejaVuSansMono.ttf").c_str()), 0);
  const std::string shot = temp_path("fonts.png");
  const test::CliResult r =
      run_cli("gui --example fear-is --screenshot " + shot + " --frames 3", "ATTN_FONT_DIR=" + dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: cannot use font '" + dir + "/DejaVuSans.ttf'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("DejaVuSans-Bold.ttf': it is a FIFO"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("character device"), std::string::npos) << r.err;
  struct stat st {};
  EXPECT_EQ(::stat(shot.c_str(), &st), 0);
  // A folder in place of a font.
  const std::string dir2 = temp_dir("fonts2");
  ASSERT_EQ(::mkdir((dir2 + "/DejaVuSans.ttf").c_str(), 0700), 0);
  const test::CliResult r2 =
      run_cli("gui --example fear-is --screenshot " + temp_path("f2.png") + " --frames 2",
              "ATTN_FONT_DIR=" + dir2);
  EXPECT_EQ(r2.status, 0) << r2.err;
  EXPECT_NE(r2.err.find("directory"), std::string::npos) << r2.err;
}

TEST_F(UnderXvfb, ALessonAtEveryStringLimitIsDrawn) {
  // The longest strings a lesson may hold (core/lessons/lesson.h), drawn by the real app in a
  // window and in presentation mode: no frame may abort on ImGui's vertex limit.
  std::string paragraph;
  while (paragraph.size() + 10 <= kMaxLessonTextBytes) paragraph += "attention ";
  std::string text = "[";
  for (size_t i = 0; i < kMaxLessonParagraphs; ++i) text += (i ? ", \"" : "\"") + paragraph + "\"";
  text += "]";
  const std::string lesson =
      "{\"title\": \"" + std::string(kMaxLessonTitleBytes, 'T') + "\", \"steps\": [{\"title\": \"" +
      std::string(kMaxLessonTitleBytes, 'S') + "\", \"example\": \"fear-is\", \"formula\": \"" +
      std::string(kMaxLessonLineBytes, 'f') + "\", \"text\": " + text + "}]}";
  const std::string path = temp_path("limits-lesson.json");
  ASSERT_TRUE(write_bytes(path, lesson));
  for (const char* extra : {"--size 1280x720", "--size 1600x1000 --presentation"}) {
    SCOPED_TRACE(extra);
    const test::CliResult r = run_cli("gui --lesson " + path + " " + extra + " --screenshot " +
                                      temp_path("limits.png") + " --frames 3");
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

}  // namespace
}  // namespace attn
