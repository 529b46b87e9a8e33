// A run's loss curves: training.json read back (lm/training_history.h), the chart's step labels
// thinned so a long run's do not collide (render/chart.h), and `lm curve` end to end — every
// history point drawn where its loss puts it, runs compared only at the same steps, bad input
// exit 2 with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <regex>

#include "lm/training_history.h"
#include "npy_fixture.h"
#include "reference.h"
#include "render/chart.h"
#include "render/scene.h"

namespace attn::lm {
namespace {

using test::read_bytes;
using test::run_cli;
using test::temp_path;
using test::write_bytes;

std::string folder_with(const std::string& name, const std::string& training_json) {
  const std::string d = temp_path(name);
  const auto r = run_cli("lm init --layers 1 --heads 1 --embd 8 --positions 8 --out '" + d + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  write_bytes(d + "/training.json", training_json);
  return d;
}

const char* kTwoPoints = R"({"command": "attention-lab lm train --steps 40", "history": [
  {"step": 0, "train_loss": 5.5, "heldout_loss": 5.25,
   "eval_corpus": {"tokens": 90, "loss": 5.75}},
  {"step": 40, "train_loss": 3.0, "heldout_loss": 3.5,
   "eval_corpus": {"tokens": 90, "loss": 4.0}}]})";

TEST(TrainingHistory, ReadsEveryPointAndPrefersTheHeldOutText) {
  const std::string d = folder_with("curve-two", kTwoPoints);
  TrainingHistory h;
  std::string error;
  ASSERT_TRUE(read_training_history(d, h, error)) << error;
  EXPECT_EQ(h.command, "attention-lab lm train --steps 40");
  EXPECT_EQ(h.steps, (std::vector<int>{0, 40}));
  EXPECT_EQ(h.train_loss, (std::vector<double>{5.5, 3.0}));
  EXPECT_TRUE(h.heldout_is_corpus);
  EXPECT_EQ(h.heldout_loss, (std::vector<double>{5.75, 4.0}));
  // One point without the text's figures: the trainer's held-out batch for every point.
  write_bytes(d + "/training.json", R"({"history": [
    {"step": 0, "train_loss": 5.5, "heldout_loss": 5.25},
    {"step": 40, "train_loss": 3.0, "heldout_loss": 3.5, "eval_corpus": {"loss": 4.0}}]})");
  ASSERT_TRUE(read_training_history(d, h, error)) << error;
  EXPECT_FALSE(h.heldout_is_corpus);
  EXPECT_EQ(h.heldout_loss, (std::vector<double>{5.25, 3.5}));
}

TEST(TrainingHistory, BadFilesNameWhatIsWrong) {
  const std::string d = folder_with("curve-bad", "{");
  TrainingHistory h;
  std::string error;
  auto fails_with = [&](const std::string& json, const std::string& words) {
    write_bytes(d + "/training.json", json);
    error.clear();
    EXPECT_FALSE(read_training_history(d, h, error)) << json;
    EXPECT_NE(error.find(words), std::string::npos) << error;
    EXPECT_NE(error.find("training.json"), std::string::npos) << error;
  };
  fails_with("{", "not a JSON object");
  fails_with(R"({"history": []})", "no \"history\"");
  fails_with(R"({"history": [{"train_loss": 1, "heldout_loss": 1}]})", "history[0] has no step");
  fails_with(R"({"history": [{"step": 5, "train_loss": 1, "heldout_loss": 1},
                             {"step": 5, "train_loss": 1, "heldout_loss": 1}]})",
             "history[1]: step 5 does not come after step 5");
  fails_with(R"({"history": [{"step": 0, "train_loss": null, "heldout_loss": 1}]})",
             "(step 0) has no finite");
  EXPECT_FALSE(read_training_history(temp_path("curve-no-such-folder"), h, error));
}

// 61 steps in one chart: every point is drawn, every k-th step labelled, and no two labels overlap.
TEST(LineChartLabels, ManyStepsAreThinnedSoLabelsDoNotCollide) {
  std::string error;
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  ASSERT_TRUE(text) << error;
  LineChart c;
  c.title = "loss";
  c.series = {"training"};
  c.values.resize(1);
  for (int i = 0; i <= 60; ++i) {
    c.x_labels.push_back(std::to_string(i * 200));
    c.values[0].push_back(8.0 - i * 0.05);
  }
  c.y_min = 4;
  c.y_max = 8;
  c.y_steps = 4;
  ASSERT_EQ(check_line_chart(c), "");
  const ScenePage page = compose_line_chart(c, *text);
  std::vector<const SceneItem*> labels;
  size_t grid = 0, points = 0;
  for (const SceneItem& it : page.items) {
    // The x labels are centred under their step; the y labels end at the axis.
    if (it.cls == "tick-label" && it.anchor == TextAnchor::kMiddle) labels.push_back(&it);
    if (it.cls == "grid") ++grid;
    if (it.cls == "series") points = it.points.size() / 2;
  }
  EXPECT_EQ(points, 61u);
  EXPECT_EQ(grid, 5u);  // y_steps + 1 lines, the axis among them
  ASSERT_GE(labels.size(), 5u);
  ASSERT_LT(labels.size(), 61u);
  EXPECT_EQ(labels.front()->text, "0");
  const Font f{13, false, false, false};
  for (size_t i = 1; i < labels.size(); ++i) {
    const double gap = labels[i]->x - labels[i - 1]->x;
    const double half_widths =
        (text->width(labels[i]->text, f) + text->width(labels[i - 1]->text, f)) / 2;
    EXPECT_GT(gap, half_widths + 4) << labels[i - 1]->text << " and " << labels[i]->text;
  }
  EXPECT_LE(page.width, 1200);
  c.y_steps = 0;
  EXPECT_EQ(check_line_chart(c), "the chart needs 1 to 20 y steps");
}

// The SVG's data lines (cairo writes each as a path "M x y L x y …" of stroke width 2.5): the
// (x, y) pairs of each, in the order drawn.
std::vector<std::vector<double>> data_lines(const std::string& svg) {
  std::vector<std::vector<double>> out;
  const std::regex line(R"re(<path style="[^"]*stroke-width:2\.5;[^"]*" d="([^"]*)")re");
  const std::regex num(R"(-?[0-9]+(?:\.[0-9]+)?)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
       ++it) {
    std::vector<double> nums;
    const std::string p = (*it)[1];
    for (auto n = std::sregex_iterator(p.begin(), p.end(), num); n != std::sregex_iterator(); ++n)
      nums.push_back(std::stod((*n)[0]));
    out.push_back(nums);
  }
  return out;
}

TEST(LmCurveCli, DrawsTheRunsCurvesAndRefusesWhatItCannotDraw) {
  const std::string d = folder_with("curve-cli", kTwoPoints);
  const std::string svg = temp_path("curve.svg");
  auto r = run_cli("lm curve --model '" + d + "' --title 'The run' --out '" + svg + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2 evaluated steps, held-out loss on the --eval-corpus text"),
            std::string::npos)
      << r.out;
  const std::string drawn = read_bytes(svg);
  ASSERT_NE(drawn.find("<svg"), std::string::npos);
  // Two lines of two points each, at the same steps, every y on one linear scale of the loss
  // (higher loss higher up): training 5.5 → 3.0, held-out text 5.75 → 4.0.
  const auto lines = data_lines(drawn);
  ASSERT_EQ(lines.size(), 2u) << drawn.substr(0, 2000);
  ASSERT_EQ(lines[0].size(), 4u);
  ASSERT_EQ(lines[1].size(), 4u);
  EXPECT_DOUBLE_EQ(lines[0][0], lines[1][0]);
  EXPECT_DOUBLE_EQ(lines[0][2], lines[1][2]);
  EXPECT_LT(lines[0][0], lines[0][2]);
  const double per_nat = (lines[0][3] - lines[0][1]) / (5.5 - 3.0);
  EXPECT_GT(per_nat, 20);
  EXPECT_NEAR((lines[1][3] - lines[1][1]) / (5.75 - 4.0), per_nat, 1e-3 * per_nat);
  EXPECT_NEAR(lines[1][1] - lines[0][1], (5.5 - 5.75) * per_nat, 1e-2);
  const std::string png = temp_path("curve.png");
  r = run_cli("lm curve --model '" + d + "' --model '" + d + "' --name a --name b --out '" + png +
              "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_bytes(png).substr(1, 3), "PNG");

  // Other steps than the first run's: refused, naming both.
  const std::string other = folder_with("curve-other", R"({"history": [
    {"step": 0, "train_loss": 5, "heldout_loss": 5}, {"step": 50, "train_loss": 4,
     "heldout_loss": 4}]})");
  const std::string never = temp_path("curve-never.png");
  r = run_cli("lm curve --model '" + d + "' --model '" + other + "' --out '" + never + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("was evaluated at other steps than"), std::string::npos) << r.err;
  r = run_cli("lm curve --model /no/such/model --out '" + never + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("error: --model: '/no/such/model' is neither a folder", 0), 0u) << r.err;
  r = run_cli("lm curve --model '" + d + "' --name a --name b --out '" + never + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--name: 2 names for 1 models"), std::string::npos) << r.err;
  r = run_cli("lm curve --model '" + d + "' --out '" + temp_path("curve.gif") + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  write_bytes(other + "/training.json", "[1, 2]");
  r = run_cli("lm curve --model '" + other + "' --out '" + never + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("error: --model: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a JSON object"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(never), "");
}

}  // namespace
}  // namespace attn::lm
