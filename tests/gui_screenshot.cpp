// The real app under Xvfb: `gui --screenshot` renders, and the pixels of the heatmap cells must
// carry the colour-map colours of the weights this test computes itself in double. Skips without
// DISPLAY.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <tuple>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "io/atomic_file.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "png_image.h"
#include "reference.h"
#include "render/colormap.h"

namespace attn {
namespace {

using nlohmann::json;

using Image = test::RgbImage;

json load_json(const std::string& path) {
  std::string text, error;
  if (!read_text_file(path, text, error)) return json();
  return json::parse(text, nullptr, false);
}

// The colour the app must show for value x: the map's table entry nearest to x on [vmin, vmax].
Rgb expected_color(const std::string& map, double x, double vmin, double vmax) {
  const double t = std::clamp((x - vmin) / (vmax - vmin), 0.0, 1.0);
  return colormap_color(map, std::round(t * 255.0) / 255.0);
}

class UnderXvfb : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* d = std::getenv("DISPLAY");
    if (!d || !*d) GTEST_SKIP() << "DISPLAY is not set: run under xvfb-run (scripts/test.sh does)";
  }
};

// Checks every visible, unhidden cell of the screenshot's main heatmap against the reference
// weights of head h; hidden cells must show the neutral hatch (grey). Returns cells checked.
int check_weights_pixels(const std::string& png, const AttentionProblem& p, int h,
                         int max_cells = 1 << 30) {
  Image img = test::load_png_rgb(png);
  EXPECT_FALSE(img.empty()) << png;
  json side = load_json(png + ".json");
  EXPECT_TRUE(side.is_object()) << "no sidecar " << png << ".json";
  if (!side.is_object() || img.w == 0) return 0;
  EXPECT_EQ(side["stage"], "weights");
  EXPECT_EQ(side["colormap"], "viridis");
  const test::RefResult ref = test::reference_attention(p);
  const test::RefMat& w = ref.weights[h];
  // Weights use [0, 1] for a few keys, [0, largest weight] for many (> 32).
  double wmax = 0;
  for (double x : w.a) wmax = std::max(wmax, x);
  const double vmax = w.cols <= 32 ? 1.0 : wmax;
  EXPECT_EQ(side["vmin"].get<double>(), 0.0);
  EXPECT_NEAR(side["vmax"].get<double>(), vmax, 1e-5);
  EXPECT_EQ(side["rows"].get<int>(), w.rows);
  EXPECT_EQ(side["cols"].get<int>(), w.cols);
  const double ox = side["origin"][0], oy = side["origin"][1];
  const double cw = side["cell_w"], ch = side["cell_h"];
  const double cx0 = side["clip"][0], cy0 = side["clip"][1], cx1 = side["clip"][2],
               cy1 = side["clip"][3];
  int checked = 0;
  for (int i = 0; i < w.rows && checked < max_cells; ++i)
    for (int j = 0; j < w.cols && checked < max_cells; ++j) {
      // A point inside the cell away from its grid lines and its centred number.
      const double x0 = ox + j * cw, y0 = oy + i * ch;
      const int px = static_cast<int>(cw >= 12 ? x0 + 4 : x0 + cw / 2);
      const int py = static_cast<int>(ch >= 12 ? y0 + 4 : y0 + ch / 2);
      const double e = 0.5;  // the layout is in float pixels
      if (x0 < cx0 - e || y0 < cy0 - e || x0 + cw > cx1 + e || y0 + ch > cy1 + e) continue;
      if (cw < 2 || ch < 2) continue;  // too small to sample one cell alone
      const Rgb got = img.at(px, py);
      const bool hidden = std::isinf(ref.masked[h](i, j));
      if (hidden) {
        EXPECT_LE(std::abs(got.r - got.b), 12) << "hidden cell " << i << "," << j << " not grey";
      } else {
        const Rgb want = expected_color("viridis", w(i, j), 0.0, vmax);
        EXPECT_LE(test::max_channel_diff(got, want), 3)
            << "cell " << i << "," << j << " weight " << w(i, j) << " at (" << px << "," << py
            << "): got " << int(got.r) << "," << int(got.g) << "," << int(got.b) << " want "
            << int(want.r) << "," << int(want.g) << "," << int(want.b);
      }
      ++checked;
    }
  return checked;
}

TEST_F(UnderXvfb, FearIsTheWeightsCarryTheColourMapColours) {
  const std::string png = test::temp_path("fear-weights.png");
  test::CliResult r = test::run_cli("gui --example fear-is-the --step weights --screenshot '" +
                                    png + "' --frames 5");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string error;
  std::optional<Scenario> s = load_example("fear-is-the", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(check_weights_pixels(png, to_problem(*s), 0), 9);
}

TEST_F(UnderXvfb, OpenClBackendShowsTheSameWeights) {
  const std::vector<std::string> b = available_backends();
  if (std::find(b.begin(), b.end(), "opencl") == b.end()) GTEST_SKIP() << "no OpenCL in this build";
  const std::string png = test::temp_path("fear-weights-opencl.png");
  test::CliResult r = test::run_cli(
      "gui --example fear-is-the --step weights --backend opencl "
      "--screenshot '" +
      png + "' --frames 3");
  if (r.status == 1 && r.err.find("--backend opencl") != std::string::npos)
    GTEST_SKIP() << "no OpenCL platform here: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  std::string error;
  std::optional<Scenario> s = load_example("fear-is-the", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(check_weights_pixels(png, to_problem(*s), 0), 9);
}

TEST_F(UnderXvfb, GqaHeadAndAnEditShowTheNewWeights) {
  // Head 3 of the GQA example after editing one query value: the pixels follow the edit.
  const std::string png = test::temp_path("gqa-weights.png");
  test::CliResult r = test::run_cli(
      "gui --example gqa --step weights --head 3 --edit q:3:4:0=2.5 "
      "--theme dark --screenshot '" +
      png + "' --frames 4");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string error;
  std::optional<Scenario> s = load_example("gqa", error);
  ASSERT_TRUE(s) << error;
  s->qkv.q[3](4, 0) = 2.5f;
  EXPECT_EQ(check_weights_pixels(png, to_problem(*s), 3), 25);
}

// The box of the "ink" inside cell (i, j) of a screenshot's main heatmap: pixels far from the
// cell's most common colour (its fill), i.e. the number drawn in it. Empty when nothing is drawn.
struct Ink {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1, pixels = 0;
  int height() const { return y1 >= y0 ? y1 - y0 + 1 : 0; }
  int width() const { return x1 >= x0 ? x1 - x0 + 1 : 0; }
};
Ink cell_ink(const Image& img, const json& side, int i, int j) {
  const double ox = side["origin"][0], oy = side["origin"][1];
  const double cw = side["cell_w"], ch = side["cell_h"];
  // Inside the cell, clear of its grid lines and selection frame.
  const int x0 = static_cast<int>(ox + j * cw) + 4, x1 = static_cast<int>(ox + (j + 1) * cw) - 4;
  const int y0 = static_cast<int>(oy + i * ch) + 4, y1 = static_cast<int>(oy + (i + 1) * ch) - 4;
  std::map<std::tuple<int, int, int>, int> count;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const Rgb c = img.at(x, y);
      ++count[{c.r, c.g, c.b}];
    }
  std::tuple<int, int, int> fill{0, 0, 0};
  int most = 0;
  for (const auto& [c, n] : count)
    if (n > most) most = n, fill = c;
  Ink ink;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const Rgb c = img.at(x, y);
      const int d = std::max({std::abs(c.r - std::get<0>(fill)), std::abs(c.g - std::get<1>(fill)),
                              std::abs(c.b - std::get<2>(fill))});
      if (d < 90) continue;
      ++ink.pixels;
      ink.x0 = std::min(ink.x0, x);
      ink.x1 = std::max(ink.x1, x);
      ink.y0 = std::min(ink.y0, y);
      ink.y1 = std::max(ink.y1, y);
    }
  return ink;
}

// In presentation mode the heatmap fills the room: large cells, and in every cell a number as
// tall as the sidecar says it was drawn (digits are about 0.73 of the font size tall).
void check_presentation(const std::string& png, int rows, int cols, double min_cell,
                        double min_number_px) {
  Image img = test::load_png_rgb(png);
  ASSERT_FALSE(img.empty()) << png;
  json side = load_json(png + ".json");
  ASSERT_TRUE(side.is_object());
  EXPECT_EQ(side["presentation"], true);
  ASSERT_EQ(side["rows"].get<int>(), rows);
  ASSERT_EQ(side["cols"].get<int>(), cols);
  EXPECT_GE(side["cell_w"].get<double>(), min_cell);
  EXPECT_GE(side["cell_h"].get<double>(), min_cell);
  EXPECT_TRUE(side["numbers_shown"].get<bool>());
  const double number_px = side["number_px"];
  EXPECT_GE(number_px, min_number_px);
  EXPECT_EQ(side["labels_dropped"].get<int>(), 0);
  EXPECT_EQ(side["labels_abbreviated"].get<int>(), 0);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const Ink ink = cell_ink(img, side, i, j);
      EXPECT_GE(ink.height(), 0.6 * number_px) << "cell " << i << "," << j << " of " << png;
      EXPECT_LE(ink.height(), 1.1 * number_px) << "cell " << i << "," << j << " of " << png;
      EXPECT_GE(ink.width(), 0.3 * number_px) << "cell " << i << "," << j << " of " << png;
    }
}

TEST_F(UnderXvfb, PresentationAt1280x720FillsTheScreenWithReadableNumbers) {
  const std::string png = test::temp_path("presentation-1280.png");
  test::CliResult r = test::run_cli(
      "gui --presentation --size 1280x720 --example fear-is-the --step weights --screenshot '" +
      png + "' --frames 5");
  ASSERT_EQ(r.status, 0) << r.err;
  // 3 × 3 weights on a 1280 × 720 projector: cells of at least 90 px, numbers of 28 px.
  check_presentation(png, 3, 3, 90, 28);
  std::string error;
  std::optional<Scenario> s = load_example("fear-is-the", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(check_weights_pixels(png, to_problem(*s), 0), 9);
}

TEST_F(UnderXvfb, PresentationAt1920x1080WithLargeFontsKeepsEveryLabelAndNumber) {
  const std::string png = test::temp_path("presentation-1920.png");
  test::CliResult r = test::run_cli(
      "gui --presentation --size 1920x1080 --font-size 28 --example sliding-window --step "
      "weights --screenshot '" +
      png + "' --frames 5");
  ASSERT_EQ(r.status, 0) << r.err;
  check_presentation(png, 8, 8, 50, 20);
  std::string error;
  std::optional<Scenario> s = load_example("sliding-window", error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(check_weights_pixels(png, to_problem(*s), 0), 64);
}

TEST_F(UnderXvfb, EveryExampleAndStageRenders) {
  for (const char* ex : {"cross-attention", "sliding-window", "multi-head", "padding", "mqa"})
    for (const char* step : {"qkv", "scaled", "masked", "output"}) {
      const std::string png = test::temp_path(std::string(ex) + "-" + step + ".png");
      test::CliResult r = test::run_cli(std::string("gui --example ") + ex + " --step " + step +
                                        " --select 1,0 --screenshot '" + png + "' --frames 3");
      ASSERT_EQ(r.status, 0) << ex << " " << step << ": " << r.err;
      Image img = test::load_png_rgb(png);
      ASSERT_FALSE(img.empty());
      EXPECT_EQ(img.w, 1600);
      EXPECT_EQ(img.h, 1000);
    }
}

// A random n-token head, zoomed and panned every frame (`--animate`) for `frames` frames: the
// cells fully on screen in the last one carry their weights' colours.
void check_zoomed_heatmap(int n, int frames) {
  std::mt19937 rng(11);
  Scenario s;
  s.name = "big-" + std::to_string(n);
  const int d = 16;
  s.qkv.q = {test::random_matrix(n, d, rng, -2, 2)};
  s.qkv.k = {test::random_matrix(n, d, rng, -2, 2)};
  s.qkv.v = {test::random_matrix(n, d, rng)};
  for (int i = 0; i < n; ++i) s.query_tokens.push_back("t" + std::to_string(i));
  const std::string file = test::temp_path("big-" + std::to_string(n) + ".json");
  std::string error;
  ASSERT_TRUE(save_scenario_file(s, file, error)) << error;
  const std::string png = test::temp_path("big-" + std::to_string(n) + ".png");
  test::CliResult r =
      test::run_cli("gui --scenario '" + file + "' --step weights --animate --frame-stats " +
                    "--frames " + std::to_string(frames) + " --screenshot '" + png + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m, std::regex("mean ([0-9.]+) ms  median [0-9.]+ ms  max ([0-9.]+) ms")))
      << r.out;
  std::cout << n << " x " << n << " heatmap, zooming and panning under Xvfb: " << r.out;
  ::testing::Test::RecordProperty("frame_ms_mean", m[1].str());
  ::testing::Test::RecordProperty("frame_ms_max", m[2].str());
  // The cells are small but the ones fully on screen still carry their weights' colours.
  std::optional<Scenario> back = load_scenario_file(file, error);
  ASSERT_TRUE(back) << error;
  EXPECT_GT(check_weights_pixels(png, to_problem(*back), 0, 400), 50);
}

TEST_F(UnderXvfb, A1024TokenHeatmapZoomsAndPans) { check_zoomed_heatmap(1024, 60); }

// 2048 × 2048 texels at the finest level are more than the renderer uploads whole: zoomed in,
// its texture holds the cells on screen and a margin (heatmap_texture.cpp), which must land
// where those cells are. Frame 45 is the scripted zoom's closest (8×: cells of 2 pixels).
TEST_F(UnderXvfb, A2048TokenHeatmapZoomedInShowsTheCellsOnScreen) {
  check_zoomed_heatmap(2048, 46);
}

TEST(GuiCli, BadInputIsExit2BeforeAnyWindow) {
  test::CliResult r = test::run_cli("gui --example fear-is-the --step nonsense --screenshot x.png");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --step"), std::string::npos) << r.err;
  const std::string bad = test::temp_path("bad.json");
  std::string e;
  ASSERT_TRUE(write_file_atomically(
      bad, "{\"q\": [[1, 2]], \"k\": [[1, 2]], \"v\": [[1]], \"scale\": \"x\"}", e));
  r = test::run_cli("gui --scenario '" + bad + "' --screenshot x.png");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scale"), std::string::npos) << r.err;
  r = test::run_cli("gui --edit q:0:0:0=nan --screenshot x.png");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--edit"), std::string::npos) << r.err;
  r = test::run_cli("gui --select 9,9 --screenshot x.png");
  EXPECT_EQ(r.status, 2);
  r = test::run_cli("gui --screenshot shot.jpg");
  EXPECT_EQ(r.status, 2);
}

TEST(GuiCli, NoDisplayIsAClearErrorNotACrash) {
  std::string saved_display = std::getenv("DISPLAY") ? std::getenv("DISPLAY") : "";
  std::string saved_wayland = std::getenv("WAYLAND_DISPLAY") ? std::getenv("WAYLAND_DISPLAY") : "";
  unsetenv("DISPLAY");
  unsetenv("WAYLAND_DISPLAY");
  test::CliResult r = test::run_cli("gui --screenshot '" + test::temp_path("none.png") + "'");
  test::CliResult bare = test::run_cli("");
  if (!saved_display.empty()) setenv("DISPLAY", saved_display.c_str(), 1);
  if (!saved_wayland.empty()) setenv("WAYLAND_DISPLAY", saved_wayland.c_str(), 1);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error: cannot open a window: no display (set DISPLAY or run under xvfb-run)\n");
  EXPECT_EQ(bare.status, 1);  // a bare attention-lab opens the app, so the same message
  EXPECT_EQ(bare.err, r.err);
}

}  // namespace
}  // namespace attn
