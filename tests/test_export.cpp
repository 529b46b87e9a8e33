// Colour maps and the heatmap exporter: published colour-map values, exported PNG pixels checked
// against weights and scores computed here in double, SVG content and structure, and the export
// command's errors (exit 2, flag named, nothing written).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "png_image.h"
#include "reference.h"
#include "render/colormap.h"
#include "render/heatmap_export.h"
#include "render/heatmap_layout.h"

namespace attn {
namespace {

using Table = std::vector<std::vector<double>>;

// The fear-is-the example's Q, K, V (assets/examples/fear-is-the.json), causal.
const Table kQ = {{0.2, 0.1, 0.8}, {0.5, 0.2, 0.3}, {0.1, 0.6, 0.3}};
const Table kK = {{0.3, 0.5, 0.2}, {0.1, 0.4, 0.6}, {0.4, 0.2, 0.5}};

// A cross-attention scenario with signed values, n_q = 2, n_k = 4, d_k = 2, d_v = 3, and a
// lower-right causal mask (query i sits at position i + 2).
const char* kCrossJson = R"({
  "format": "attention-lab-scenario", "version": 1, "name": "cross-2x4",
  "query_tokens": ["le", "chat"], "key_tokens": ["the", "black", "cat", "sat"],
  "q": [[0.9, -0.4], [-0.3, 0.8]],
  "k": [[0.5, 0.1], [-0.7, 0.2], [0.1, 0.9], [0.4, -0.6]],
  "v": [[1, 0, -0.5], [0, 1, 0.5], [-1, 0.5, 0], [0.2, -0.2, 1]],
  "mask": {"causal": "lower-right"}
})";
const Table kCrossQ = {{0.9, -0.4}, {-0.3, 0.8}};
const Table kCrossK = {{0.5, 0.1}, {-0.7, 0.2}, {0.1, 0.9}, {0.4, -0.6}};
const Table kCrossV = {{1, 0, -0.5}, {0, 1, 0.5}, {-1, 0.5, 0}, {0.2, -0.2, 1}};

// Four queries, two keys, lower-right causal: queries 0 and 1 see no key at all.
const char* kEmptyRowsJson = R"({
  "format": "attention-lab-scenario", "version": 1, "name": "empty-rows",
  "query_tokens": ["a", "b", "c", "d"], "key_tokens": ["x", "y"],
  "q": [[0.9, -0.4], [-0.3, 0.8], [0.2, 0.2], [1, -1]],
  "k": [[0.5, 0.1], [-0.7, 0.2]], "v": [[1, 0, -0.5], [0, 1, 0.5]],
  "mask": {"causal": "lower-right"}
})";

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = test::temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Scores Q·Kᵀ of plain tables.
Table dot_scores(const Table& q, const Table& k) {
  Table s(q.size(), std::vector<double>(k.size(), 0.0));
  for (size_t i = 0; i < q.size(); ++i)
    for (size_t j = 0; j < k.size(); ++j)
      for (size_t d = 0; d < q[i].size(); ++d) s[i][j] += q[i][d] * k[j][d];
  return s;
}

// Softmax over the visible keys of each row after scaling by 1/√d_k; hidden weights are 0.
Table masked_softmax(const Table& scores, double d_k,
                     const std::vector<std::vector<bool>>& visible) {
  Table w = scores;
  for (size_t i = 0; i < scores.size(); ++i) {
    double mx = -1e300, sum = 0;
    for (size_t j = 0; j < scores[i].size(); ++j)
      if (visible[i][j]) mx = std::max(mx, scores[i][j] / std::sqrt(d_k));
    for (size_t j = 0; j < scores[i].size(); ++j) {
      w[i][j] = visible[i][j] ? std::exp(scores[i][j] / std::sqrt(d_k) - mx) : 0.0;
      sum += w[i][j];
    }
    for (size_t j = 0; j < scores[i].size(); ++j) w[i][j] = sum > 0 ? w[i][j] / sum : 0.0;
  }
  return w;
}

using Image = test::RgbImage;
using test::max_channel_diff;

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

double luminance(Rgb c) { return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b; }

AttentionTrace trace_of_example(const std::string& name) {
  std::string error;
  auto s = load_example(name, error);
  EXPECT_TRUE(s) << error;
  auto cpu = make_backend("cpu", error);
  return compute_scenario_trace(*s, *cpu);
}

AttentionTrace trace_of_file(const std::string& path) {
  std::string error;
  auto s = load_scenario_file(path, error);
  EXPECT_TRUE(s) << error;
  auto cpu = make_backend("cpu", error);
  return compute_scenario_trace(*s, *cpu);
}

// Samples a cell near its top-left and bottom-right corners, away from the number in the middle.
void expect_cell_colour(const Image& img, const HeatmapLayout& L, int i, int j, Rgb want,
                        const std::string& what) {
  PixelRect r = L.cell_rect(i, j);
  ASSERT_GE(r.w, 8) << what;
  for (auto [x, y] : {std::pair{r.x + 3, r.y + 3}, std::pair{r.right() - 4, r.bottom() - 4}}) {
    Rgb got = img.at(x, y);
    EXPECT_LE(max_channel_diff(got, want), 2)
        << what << " cell (" << i << ", " << j << ") at pixel (" << x << ", " << y << "): got "
        << hex(got) << ", expected " << hex(want);
  }
}

// Checks that every opened tag is closed in order (a tiny XML well-formedness check; attribute
// values never contain '>' because the writer escapes it).
bool tags_balanced(const std::string& xml, std::string& why) {
  std::vector<std::string> stack;
  size_t pos = xml.find("<svg");
  if (pos == std::string::npos) {
    why = "no <svg>";
    return false;
  }
  while ((pos = xml.find('<', pos)) != std::string::npos) {
    size_t end = xml.find('>', pos);
    if (end == std::string::npos) {
      why = "unterminated tag";
      return false;
    }
    bool closing = xml[pos + 1] == '/';
    size_t name_start = pos + (closing ? 2 : 1);
    size_t name_end = xml.find_first_of(" />", name_start);
    std::string name = xml.substr(name_start, name_end - name_start);
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        why = "unexpected </" + name + ">";
        return false;
      }
      stack.pop_back();
    } else if (xml[end - 1] != '/') {
      stack.push_back(name);
    }
    pos = end + 1;
  }
  if (!stack.empty()) why = "unclosed <" + stack.back() + ">";
  return stack.empty();
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size()))
    ++n;
  return n;
}

// ---- Colour maps ----

TEST(Colormap, PublishedValues) {
  // matplotlib's viridis and magma, and their five-step palettes (0, .25, .5, .75, 1).
  const std::pair<double, Rgb> viridis[] = {{0.0, {0x44, 0x01, 0x54}},
                                            {0.25, {0x3b, 0x52, 0x8b}},
                                            {0.5, {0x21, 0x91, 0x8c}},
                                            {0.75, {0x5e, 0xc9, 0x62}},
                                            {1.0, {0xfd, 0xe7, 0x25}}};
  for (auto [t, want] : viridis)
    EXPECT_LE(max_channel_diff(colormap_color("viridis", t), want), 2) << "viridis " << t;
  const std::pair<double, Rgb> magma[] = {{0.0, {0x00, 0x00, 0x04}},
                                          {0.25, {0x51, 0x12, 0x7c}},
                                          {0.5, {0xb7, 0x37, 0x79}},
                                          {0.75, {0xfc, 0x89, 0x61}},
                                          {1.0, {0xfc, 0xfd, 0xbf}}};
  for (auto [t, want] : magma)
    EXPECT_LE(max_channel_diff(colormap_color("magma", t), want), 2) << "magma " << t;
  EXPECT_LE(max_channel_diff(colormap_color("cividis", 0.0), {0x00, 0x22, 0x4e}), 1);
  EXPECT_LE(max_channel_diff(colormap_color("cividis", 1.0), {0xfe, 0xe8, 0x38}), 1);
  EXPECT_LE(max_channel_diff(colormap_color("grayscale", 0.0), {0, 0, 0}), 0);
  EXPECT_LE(max_channel_diff(colormap_color("grayscale", 1.0), {255, 255, 255}), 0);
  EXPECT_LE(max_channel_diff(colormap_color("grayscale", 0.5), {128, 128, 128}), 1);
  // ColorBrewer RdBu, blue for negative: dark blue, neutral #f7f7f7 at the centre, dark red.
  EXPECT_LE(max_channel_diff(colormap_color("diverging", 0.0), {0x05, 0x30, 0x61}), 0);
  EXPECT_LE(max_channel_diff(colormap_color("diverging", 0.5), {0xf7, 0xf7, 0xf7}), 0);
  EXPECT_LE(max_channel_diff(colormap_color("diverging", 1.0), {0x67, 0x00, 0x1f}), 0);
}

TEST(Colormap, ClampsOutOfRangeAndNaN) {
  for (const auto& name : colormap_names()) {
    EXPECT_EQ(hex(colormap_color(name, -3.0)), hex(colormap_color(name, 0.0))) << name;
    EXPECT_EQ(hex(colormap_color(name, 7.0)), hex(colormap_color(name, 1.0))) << name;
    EXPECT_EQ(hex(colormap_color(name, std::nan(""))), hex(colormap_color(name, 0.0))) << name;
  }
}

TEST(Colormap, SequentialMapsGetSteadilyLighter) {
  // The property the perceptual maps are designed for; a garbled anchor table breaks it.
  for (const char* name : {"viridis", "cividis", "magma", "grayscale"}) {
    double prev = -1;
    for (int k = 0; k <= 64; ++k) {
      double l = luminance(colormap_color(name, k / 64.0));
      EXPECT_GT(l, prev) << name << " at " << k / 64.0;
      prev = l;
    }
  }
}

TEST(Colormap, DivergingIsLightestAtZeroBlueBelowRedAbove) {
  double centre = luminance(colormap_color("diverging", 0.5));
  for (int k = 1; k <= 32; ++k) {
    double d = k / 64.0;
    Rgb lo = colormap_color("diverging", 0.5 - d), hi = colormap_color("diverging", 0.5 + d);
    EXPECT_LT(luminance(lo), centre) << d;
    EXPECT_LT(luminance(hi), centre) << d;
    EXPECT_GT(lo.b, lo.r) << "negative side should be blue at " << d;
    EXPECT_GT(hi.r, hi.b) << "positive side should be red at " << d;
    if (k > 1) {
      EXPECT_LT(luminance(lo), luminance(colormap_color("diverging", 0.5 - (k - 1) / 64.0)));
      EXPECT_LT(luminance(hi), luminance(colormap_color("diverging", 0.5 + (k - 1) / 64.0)));
    }
  }
}

TEST(Colormap, NamesAndDefaults) {
  for (const char* n : {"viridis", "cividis", "magma", "grayscale", "diverging"})
    EXPECT_TRUE(is_colormap(n)) << n;
  EXPECT_FALSE(is_colormap("jet"));
  EXPECT_TRUE(is_diverging("diverging"));
  EXPECT_FALSE(is_diverging("viridis"));
  EXPECT_EQ(default_colormap_for("weights", 0.0), "viridis");
  EXPECT_EQ(default_colormap_for("scores", -0.5), "diverging");
  EXPECT_EQ(default_colormap_for("scores", 0.1), "viridis");
  EXPECT_EQ(default_colormap_for("q", -1.0), "diverging");
  EXPECT_EQ(default_colormap_for("projected", -1.0), "diverging");
  EXPECT_EQ(default_colormap_for("output", 0.0), "viridis");
}

// ---- PNG pixels ----

TEST(ExportPng, FearIsTheWeightsMatchTheColourMap) {
  std::vector<std::vector<bool>> causal = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  Table w = masked_softmax(dot_scores(kQ, kK), 3.0, causal);
  double max_w = 0;
  for (const auto& row : w)
    for (double x : row) max_w = std::max(max_w, x);
  EXPECT_NEAR(max_w, 1.0, 1e-12);  // the first query sees only itself

  std::string out = test::temp_path("fit-weights.png");
  auto r = test::run_cli("export --example fear-is-the --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  Image img = test::load_png_rgb(out);
  ASSERT_GT(img.w, 0) << "stbi_load failed on " << out;

  AttentionTrace t = trace_of_example("fear-is-the");
  HeatmapOptions o;
  o.step = "weights";
  HeatmapLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(img.w, L.width);
  EXPECT_EQ(img.h, L.height);
  EXPECT_EQ(L.colormap, "viridis");
  EXPECT_TRUE(L.annotate);
  Rgb masked_seen{0, 0, 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (causal[i][j]) {
        expect_cell_colour(img, L, i, j, colormap_color("viridis", w[i][j] / max_w), "weights");
      } else {
        // Masked: a light grey hatch, unlike any viridis colour.
        PixelRect c = L.cell_rect(i, j);
        for (int y = c.y + 2; y < c.y + 8; ++y) {
          Rgb p = img.at(c.x + 2, y);
          EXPECT_EQ(p.r, p.g);
          EXPECT_EQ(p.g, p.b);
          EXPECT_GE(p.r, 170);
          masked_seen = p;
        }
      }
    }
  EXPECT_GE(masked_seen.r, 170);
}

TEST(ExportPng, SignedScoresUseADivergingMapCentredOnZero) {
  std::string scen = write_temp("cross.json", kCrossJson);
  Table s = dot_scores(kCrossQ, kCrossK);
  double m = 0, mn = 0;
  for (const auto& row : s)
    for (double x : row) {
      m = std::max(m, std::fabs(x));
      mn = std::min(mn, x);
    }
  ASSERT_LT(mn, 0.0);

  std::string out = test::temp_path("cross-scores.png");
  auto r = test::run_cli("export --scenario '" + scen + "' --step scores --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  Image img = test::load_png_rgb(out);
  ASSERT_GT(img.w, 0);
  AttentionTrace t = trace_of_file(scen);
  HeatmapOptions o;
  o.step = "scores";
  HeatmapLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(L.colormap, "diverging");
  EXPECT_EQ(L.rows, 2);
  EXPECT_EQ(L.cols, 4);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      expect_cell_colour(img, L, i, j, colormap_color("diverging", 0.5 + 0.5 * s[i][j] / m),
                         "scores");
}

TEST(ExportPng, OutputIsNonSquareAndUsesItsOwnRange) {
  std::string scen = write_temp("cross.json", kCrossJson);
  // Lower-right causal with n_q = 2, n_k = 4: query i sees keys j ≤ i + 2.
  std::vector<std::vector<bool>> visible = {{1, 1, 1, 0}, {1, 1, 1, 1}};
  Table w = masked_softmax(dot_scores(kCrossQ, kCrossK), 2.0, visible);
  Table out_v(2, std::vector<double>(3, 0.0));
  double m = 0;
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c) {
      for (int j = 0; j < 4; ++j) out_v[i][c] += w[i][j] * kCrossV[j][c];
      m = std::max(m, std::fabs(out_v[i][c]));
    }
  std::string out = test::temp_path("cross-output.png");
  auto r = test::run_cli("export --scenario '" + scen + "' --step output --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  Image img = test::load_png_rgb(out);
  AttentionTrace t = trace_of_file(scen);
  HeatmapOptions o;
  o.step = "output";
  HeatmapLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(L.rows, 2);
  EXPECT_EQ(L.cols, 3);
  ASSERT_EQ(L.colormap, "diverging");  // the output has negative components
  for (int i = 0; i < 2; ++i)
    for (int c = 0; c < 3; ++c)
      expect_cell_colour(img, L, i, c, colormap_color("diverging", 0.5 + 0.5 * out_v[i][c] / m),
                         "output");
}

TEST(ExportPng, ChosenColourMapAndWidth) {
  std::vector<std::vector<bool>> causal = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  Table w = masked_softmax(dot_scores(kQ, kK), 3.0, causal);
  std::string out = test::temp_path("fit-magma.png");
  auto r = test::run_cli(
      "export --example fear-is-the --step weights --colormap magma --width 1000 --out '" + out +
      "'");
  ASSERT_EQ(r.status, 0) << r.err;
  Image img = test::load_png_rgb(out);
  EXPECT_EQ(img.w, 1000);
  AttentionTrace t = trace_of_example("fear-is-the");
  HeatmapOptions o;
  o.step = "weights";
  o.colormap = "magma";
  o.width = 1000;
  HeatmapLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(L.width, 1000);
  EXPECT_EQ(L.height, img.h);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j)
      expect_cell_colour(img, L, i, j, colormap_color("magma", w[i][j]), "magma weights");
  // Cells are square and inside the image, the colour bar beside the grid.
  EXPECT_EQ(L.cell_rect(0, 0).w, L.cell_rect(0, 0).h);
  EXPECT_LE(L.colorbar.right(), L.width);
  EXPECT_GT(L.colorbar.x, L.grid.right());
  EXPECT_LE(L.grid.bottom(), L.height);
}

// ---- SVG ----

TEST(ExportSvg, MaskedStageHasTokensTitleAndMinusInfinity) {
  std::string out = test::temp_path("fit-masked.svg");
  auto r = test::run_cli("export --example fear-is-the --step masked --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = slurp(out);
  std::string why;
  EXPECT_FALSE(tags_balanced("<svg><g><rect/></svg>", why));  // the checker itself can fail
  EXPECT_TRUE(tags_balanced(svg, why)) << why;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("font-family=\"DejaVu Sans, sans-serif\""), std::string::npos);
  for (const char* token : {">Fear</text>", ">is</text>", ">the</text>"})
    EXPECT_EQ(count(svg, token), 2) << token << " (once down the side, once along the top)";
  EXPECT_NE(svg.find(">Masked scores</text>"), std::string::npos);
  EXPECT_NE(svg.find("masked = scaled"), std::string::npos);
  // The three hidden cells of the causal mask, hatched and marked −∞.
  EXPECT_EQ(count(svg, "class=\"cell masked\""), 3);
  EXPECT_EQ(count(svg, ">−∞</text>"), 3);
  EXPECT_NE(svg.find("hidden by the mask"), std::string::npos);

  // Geometry and colours are those of the layout (the PNG's): check every visible cell.
  AttentionTrace t = trace_of_example("fear-is-the");
  HeatmapOptions o;
  o.step = "masked";
  HeatmapLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_NE(svg.find("width=\"" + std::to_string(L.width) + "\" height=\"" +
                     std::to_string(L.height) + "\""),
            std::string::npos);
  Table s = dot_scores(kQ, kK);
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j) {
      lo = std::min(lo, s[i][j] / std::sqrt(3.0));
      hi = std::max(hi, s[i][j] / std::sqrt(3.0));
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j) {
      PixelRect c = L.cell_rect(i, j);
      Rgb want = colormap_color("viridis", (s[i][j] / std::sqrt(3.0) - lo) / (hi - lo));
      std::string rect = "<rect class=\"cell\" data-row=\"" + std::to_string(i) + "\" data-col=\"" +
                         std::to_string(j) + "\" x=\"" + std::to_string(c.x) + "\" y=\"" +
                         std::to_string(c.y) + "\" width=\"" + std::to_string(c.w) +
                         "\" height=\"" + std::to_string(c.h) + "\" fill=\"";
      size_t p = svg.find(rect);
      ASSERT_NE(p, std::string::npos) << rect;
      Rgb got{};
      unsigned rr = 0, gg = 0, bb = 0;
      ASSERT_EQ(std::sscanf(svg.c_str() + p + rect.size(), "#%02x%02x%02x", &rr, &gg, &bb), 3);
      got = {static_cast<uint8_t>(rr), static_cast<uint8_t>(gg), static_cast<uint8_t>(bb)};
      EXPECT_LE(max_channel_diff(got, want), 2) << "cell " << i << "," << j;
    }
}

TEST(ExportSvg, WeightsShowRowSumsAndEmptyRows) {
  std::string scen = write_temp("empty.json", kEmptyRowsJson);
  std::string out = test::temp_path("empty-weights.svg");
  auto r = test::run_cli("export --scenario '" + scen + "' --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = slurp(out);
  std::string why;
  EXPECT_TRUE(tags_balanced(svg, why)) << why;
  EXPECT_EQ(count(svg, ">Σ = 0 (all hidden)</text>"), 2);
  EXPECT_EQ(count(svg, ">Σ = 1.00</text>"), 2);
  // Hidden weights are 0 and hatched: rows a and b entirely, row c's second key.
  EXPECT_EQ(count(svg, "class=\"cell masked\""), 5);
  EXPECT_NE(svg.find("Attention weights"), std::string::npos);
}

TEST(ExportSvg, DimensionLabelsForQ) {
  std::string scen = write_temp("cross.json", kCrossJson);
  std::string out = test::temp_path("cross-q.svg");
  auto r = test::run_cli("export --scenario '" + scen + "' --step q --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = slurp(out);
  EXPECT_NE(svg.find(">d0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">d1</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">d2</text>"), std::string::npos);  // d_k = 2
  EXPECT_NE(svg.find(">le</text>"), std::string::npos);
  EXPECT_NE(svg.find(">chat</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"cell\""), 4);
}

TEST(ExportSvg, MultiHeadNamesTheHeadAndItsKeyValueHead) {
  // gqa: 4 query heads in 2 groups, so head 3 reads key/value head 1.
  std::string out = test::temp_path("gqa-k.svg");
  auto r = test::run_cli("export --example gqa --step k --head 3 --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(out).find("kv head 1 (used by head 3)"), std::string::npos);
  out = test::temp_path("gqa-w.svg");
  r = test::run_cli("export --example gqa --step weights --head 2 --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(out).find("head 2 (kv 1)"), std::string::npos);
}

std::string random_scenario(int n, int d) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  auto mat = [&] {
    std::string s = "[";
    for (int i = 0; i < n; ++i) {
      s += i ? ",[" : "[";
      for (int j = 0; j < d; ++j) s += (j ? "," : "") + std::to_string(u(rng));
      s += "]";
    }
    return s + "]";
  };
  std::string tokens = "[";
  for (int i = 0; i < n; ++i) tokens += (i ? ",\"tok" : "\"tok") + std::to_string(i) + "\"";
  tokens += "]";
  return R"({"format": "attention-lab-scenario", "version": 1, "name": "random", "query_tokens": )" +
         tokens + ", \"q\": " + mat() + ", \"k\": " + mat() + ", \"v\": " + mat() +
         R"(, "mask": {"causal": true}})";
}

TEST(ExportSvg, NumbersByDefaultOnlyUpTo16x16) {
  std::string big = write_temp("r24.json", random_scenario(24, 8));
  std::string out = test::temp_path("r24.svg");
  auto r = test::run_cli("export --scenario '" + big + "' --step scores --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string svg = slurp(out);
  EXPECT_EQ(count(svg, "class=\"num\""), 0);
  EXPECT_EQ(count(svg, "class=\"cell\""), 24 * 24);
  r = test::run_cli("export --scenario '" + big + "' --step scores --annotate --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(slurp(out), "class=\"num\""), 24 * 24);

  std::string sixteen = write_temp("r16.json", random_scenario(16, 4));
  r = test::run_cli("export --scenario '" + sixteen + "' --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(slurp(out), "class=\"num\""), 16 * 16);
  r = test::run_cli("export --scenario '" + sixteen + "' --step weights --no-annotate --out '" +
                    out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(slurp(out), "class=\"num\""), 0);
}

TEST(ExportSvg, LargeMatricesStayBoundedAndThinTheirLabels) {
  std::string big = write_temp("r200.json", random_scenario(200, 4));
  AttentionTrace t = trace_of_file(big);
  HeatmapOptions o;
  o.step = "weights";
  HeatmapScene scene;
  std::string error;
  ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
  EXPECT_LE(scene.layout.width, 1400);
  EXPECT_LE(scene.layout.height, 1400);
  EXPECT_FALSE(scene.layout.annotate);
  int labels = 0;
  for (const auto& it : scene.items) labels += it.cls == "label";
  EXPECT_LT(labels, 2 * 200);  // thinned
  EXPECT_GT(labels, 10);
  // Every item lies inside the image.
  for (const auto& it : scene.items)
    if (it.kind != SceneItem::Kind::kText) {
      EXPECT_GE(it.rect.x, 0);
      EXPECT_GE(it.rect.y, 0);
      EXPECT_LE(it.rect.right(), scene.layout.width);
      EXPECT_LE(it.rect.bottom(), scene.layout.height);
    }
}

TEST(ExportScene, ColourBarHasThreeToFiveDistinctTicksWithinTheRange) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double scale : {0.001, 0.03, 0.7, 1.0, 13.0, 250.0, 9000.0}) {
    std::string json =
        R"({"format": "attention-lab-scenario", "version": 1, "query_tokens": ["a", "b", "c"], "q": [)";
    for (int i = 0; i < 3; ++i)
      json += std::string(i ? "," : "") + "[" + std::to_string(u(rng) * scale) + "," +
              std::to_string(u(rng) * scale) + "]";
    json += R"(], "k": [[1, 0.5], [-0.3, 0.2], [0.7, -0.9]], "v": [[1, 2], [3, 4], [5, 6]]})";
    AttentionTrace t = trace_of_file(write_temp("ticks.json", json));
    for (const char* step : {"scores", "weights", "output", "q"}) {
      HeatmapOptions o;
      o.step = step;
      HeatmapScene scene;
      std::string error;
      ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
      std::set<std::string> labels;
      int ticks = 0;
      for (const auto& it : scene.items) {
        if (it.cls != "tick-label") continue;
        ++ticks;
        labels.insert(it.text);
        EXPECT_GE(it.y, scene.layout.colorbar.y) << step << " " << scale;
        EXPECT_LE(it.y, scene.layout.colorbar.bottom() + it.size) << step << " " << scale;
      }
      EXPECT_GE(ticks, 3) << step << " scale " << scale;
      EXPECT_LE(ticks, 5) << step << " scale " << scale;
      EXPECT_EQ(static_cast<int>(labels.size()), ticks) << step << " scale " << scale;
    }
  }
}

// ---- Errors and atomic writes ----

TEST(ExportCli, BadOptionsExitTwoNameTheFlagAndWriteNothing) {
  std::string out = test::temp_path("never.png");
  const std::pair<std::string, std::string> cases[] = {
      {"--example fear-is-the --step nope --out '" + out + "'", "--step"},
      {"--example fear-is-the --step weights --head 3 --out '" + out + "'", "--head"},
      {"--example fear-is-the --step weights --head -1 --out '" + out + "'", "--head"},
      {"--example fear-is-the --step weights --colormap jet --out '" + out + "'", "--colormap"},
      {"--example fear-is-the --step weights --width 50 --out '" + out + "'", "--width"},
      {"--example fear-is-the --step weights --width 100000 --out '" + out + "'", "--width"},
      {"--example fear-is-the --step weights --width wide --out '" + out + "'", "--width"},
      {"--example fear-is-the --step weights --out '" + out + ".jpg'", "--out"},
      {"--example fear-is-the --step weights --out '" + out + "_noext'", "--out"},
      {"--example fear-is-the --step weights --out /nonexistent-folder/x.png", "--out"},
      {"--example fear-is-the --out '" + out + "'", "--step"},
      {"--example fear-is-the --step weights", "--out"},
      {"--example fear-is-the --step weights --annotate --no-annotate --out '" + out + "'",
       "annotate"},
      {"--example no-such-example --step weights --out '" + out + "'", "no-such-example"},
      {"--step weights --out '" + out + "'", "--example"},
  };
  for (const auto& [args, flag] : cases) {
    auto r = test::run_cli("export " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(exists(out)) << args;
    EXPECT_FALSE(exists(out + ".jpg")) << args;
    EXPECT_FALSE(exists(out + "_noext")) << args;
  }
  auto r = test::run_cli("export --example fear-is-the --step nope --out '" + out + "'");
  for (const char* id : {"scores", "scaled", "masked", "weights", "output"})
    EXPECT_NE(r.err.find(id), std::string::npos) << "valid ids are listed: " << r.err;
  r = test::run_cli("export --example fear-is-the --step weights --colormap jet --out '" + out +
                    "'");
  for (const char* name : {"viridis", "cividis", "magma", "grayscale", "diverging"})
    EXPECT_NE(r.err.find(name), std::string::npos) << "colour maps are listed: " << r.err;
  r = test::run_cli("export --example fear-is-the --step weights --out '" + out + ".jpg'");
  EXPECT_NE(r.err.find(".png"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".svg"), std::string::npos) << r.err;
}

TEST(ExportCli, WritesAtomicallyAndLeavesNoTemporaryFiles) {
  std::string dir = test::temp_path("atomic");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  std::string out = dir + "/slide.png";
  std::ofstream(out) << "old";
  // A failed export leaves the existing file exactly as it was.
  auto r = test::run_cli("export --example fear-is-the --step weights --colormap jet --out '" +
                         out + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(slurp(out), "old");
  // A successful one replaces it with a whole PNG, and nothing else is left in the folder.
  r = test::run_cli("export --example fear-is-the --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string png = slurp(out);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
  r = test::run_cli("export --example fear-is-the --step weights --out '" + dir + "/slide.SVG'");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"slide.SVG", "slide.png"}));
}

TEST(ExportCli, MissingFontIsARuntimeErrorThatSaysWhatToInstall) {
  std::string out = test::temp_path("nofont.png");
  auto r = test::run_cli("export --example fear-is-the --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;  // the same command works with the system font
  std::remove(out.c_str());
  std::string cmd = std::string("env ATTN_FONT_DIR=/nonexistent-fonts '") + ATTN_CLI_PATH +
                    "' export --example fear-is-the --step weights --out '" + out + "' 2>&1";
  std::string output;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) output += buf;
  int status = ::pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_EQ(output.rfind("error: ", 0), 0u) << output;
  EXPECT_NE(output.find("/nonexistent-fonts/DejaVuSans.ttf"), std::string::npos) << output;
  EXPECT_NE(output.find("fonts-dejavu-core"), std::string::npos) << output;
  EXPECT_FALSE(exists(out));
}

TEST(ExportApi, ReportsBadOptions) {
  AttentionTrace t = trace_of_example("fear-is-the");
  EXPECT_FALSE(image_format_of("api.gif"));
  EXPECT_NE(image_format_error("api.gif").find(".png or .svg"), std::string::npos);
  EXPECT_EQ(image_format_of("API.PNG"), ImageFormat::kPng);
  EXPECT_EQ(image_format_of("a.b/api.svg"), ImageFormat::kSvg);
  EXPECT_FALSE(image_format_of("a.png/api"));
  HeatmapOptions o;
  o.step = "weights";
  o.head = 1;
  std::string bytes, error;
  EXPECT_FALSE(render_heatmap(t, o, ImageFormat::kPng, bytes, error));
  EXPECT_NE(error.find("--head"), std::string::npos) << error;
  o.head = 0;
  EXPECT_TRUE(render_heatmap(t, o, ImageFormat::kPng, bytes, error)) << error;
  EXPECT_EQ(bytes.rfind("\x89PNG", 0), 0u);
}

}  // namespace
}  // namespace attn
