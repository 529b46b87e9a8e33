// Colour maps, colour scales and the heatmap exporter: published colour-map values, exported PNG,
// SVG and PDF pixels checked against weights and scores computed here in double, the text of
// SVGs (XML-parsed) and PDFs (pdftotext), every stage on PDF pages, CJK tokens drawn as glyphs,
// and the export command's errors (exit 2, flag named, nothing written).
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "attention/scenario.h"
#include "backends/backend.h"
#include "backends/compute.h"
#include "documents.h"
#include "io/examples.h"
#include "io/scenario_json.h"
#include "png_image.h"
#include "reference.h"
#include "render/color_scale.h"
#include "render/colormap.h"
#include "render/heatmap_export.h"
#include "render/scene.h"

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
void expect_cell_colour(const Image& img, const MatrixLayout& L, int i, int j, Rgb want,
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
  EXPECT_EQ(default_colormap_for(StageId::kWeights, 0.0), "viridis");
  EXPECT_EQ(default_colormap_for(StageId::kScores, -0.5), "diverging");
  EXPECT_EQ(default_colormap_for(StageId::kScores, 0.1), "viridis");
  EXPECT_EQ(default_colormap_for(StageId::kQ, -1.0), "diverging");
  EXPECT_EQ(default_colormap_for(StageId::kProjected, -1.0), "diverging");
  EXPECT_EQ(default_colormap_for(StageId::kOutput, 0.0), "viridis");
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
  o.step = StageId::kWeights;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(img.w, L.width);
  EXPECT_EQ(img.h, L.height);
  EXPECT_EQ(L.scale.map, "viridis");
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
  o.step = StageId::kScores;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(L.scale.map, "diverging");
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
  o.step = StageId::kOutput;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(L.rows, 2);
  EXPECT_EQ(L.cols, 3);
  ASSERT_EQ(L.scale.map, "diverging");  // the output has negative components
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
  o.step = StageId::kWeights;
  o.maps = ColormapChoice::only("magma");
  o.width = 1000;
  MatrixLayout L;
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

// ---- SVG: the text layer (XML-parsed) and the pixels (rendered by librsvg) ----

// The SVG at `path` parsed; fails the test when it is not well-formed XML.
std::vector<test::SvgText> svg_texts(const std::string& path, std::string* width = nullptr,
                                     std::string* height = nullptr) {
  std::vector<test::SvgText> texts;
  std::string w, h, error;
  EXPECT_TRUE(test::parse_svg(slurp(path), texts, w, h, error)) << path << ": " << error;
  if (width) *width = w;
  if (height) *height = h;
  return texts;
}

TEST(ExportSvg, TheParserRejectsBrokenXml) {
  std::vector<test::SvgText> texts;
  std::string w, h, error;
  EXPECT_FALSE(test::parse_svg("<svg><g><rect/></svg>", texts, w, h, error));
  EXPECT_TRUE(test::parse_svg("<svg width=\"3px\"><text class=\"a\">x &amp; y</text></svg>", texts,
                              w, h, error))
      << error;
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts[0].text, "x & y");
  EXPECT_EQ(w, "3px");
}

TEST(ExportSvg, MaskedStageHasTokensTitleAndMinusInfinity) {
  std::string out = test::temp_path("fit-masked.svg");
  auto r = test::run_cli("export --example fear-is-the --step masked --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(out).rfind("<?xml", 0), 0u);
  std::string width, height;
  const auto texts = svg_texts(out, &width, &height);
  const auto labels = texts_of(texts, "label");
  for (const char* token : {"Fear", "is", "the"})
    EXPECT_EQ(std::count(labels.begin(), labels.end(), token), 2)
        << token << " (once down the side, once along the top)";
  EXPECT_EQ(texts_of(texts, "title"), std::vector<std::string>{"Masked scores"});
  ASSERT_EQ(texts_of(texts, "formula").size(), 1u);
  EXPECT_NE(texts_of(texts, "formula")[0].find("masked = scaled"), std::string::npos);
  // The three hidden cells of the causal mask are marked −∞, the others carry their numbers.
  const auto nums = texts_of(texts, "num");
  EXPECT_EQ(nums.size(), 9u);
  EXPECT_EQ(std::count(nums.begin(), nums.end(), "−∞"), 3);
  Table s = dot_scores(kQ, kK);
  for (const auto& t : texts)
    if (t.cls == "num" && t.col <= t.row) {
      char want[16];
      std::snprintf(want, sizeof want, "%.2f", s[t.row][t.col] / std::sqrt(3.0));
      EXPECT_EQ(t.text, want) << "cell " << t.row << "," << t.col;
    }
  ASSERT_EQ(texts_of(texts, "legend").size(), 1u);
  EXPECT_NE(texts_of(texts, "legend")[0].find("hidden by the mask"), std::string::npos);

  // The picture: the layout's size, and every visible cell in its colour (rendered by librsvg).
  AttentionTrace t = trace_of_example("fear-is-the");
  HeatmapOptions o;
  o.step = StageId::kMasked;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  EXPECT_EQ(width, std::to_string(L.width) + "px");
  EXPECT_EQ(height, std::to_string(L.height) + "px");
  Image img = test::svg_pixels(out);
  ASSERT_EQ(img.w, L.width) << "rsvg-convert (librsvg2-bin) is needed";
  double lo = 1e9, hi = -1e9;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j) {
      lo = std::min(lo, s[i][j] / std::sqrt(3.0));
      hi = std::max(hi, s[i][j] / std::sqrt(3.0));
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      if (j <= i) {
        expect_cell_colour(img, L, i, j,
                           colormap_color("viridis", (s[i][j] / std::sqrt(3.0) - lo) / (hi - lo)),
                           "svg masked");
      } else {
        Rgb p = img.at(L.cell_rect(i, j).x + 2, L.cell_rect(i, j).y + 2);
        EXPECT_EQ(p.r, p.g);
        EXPECT_EQ(p.g, p.b);
        EXPECT_GE(p.r, 170);
      }
    }
}

TEST(ExportSvg, WeightsShowRowSumsAndEmptyRows) {
  std::string scen = write_temp("empty.json", kEmptyRowsJson);
  std::string out = test::temp_path("empty-weights.svg");
  auto r = test::run_cli("export --scenario '" + scen + "' --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto texts = svg_texts(out);
  const auto sums = texts_of(texts, "sum");
  EXPECT_EQ(std::count(sums.begin(), sums.end(), "Σ = 0 (all hidden)"), 2);
  EXPECT_EQ(std::count(sums.begin(), sums.end(), "Σ = 1.00"), 2);
  EXPECT_EQ(texts_of(texts, "title"), std::vector<std::string>{"Attention weights"});
  // Hidden weights are 0 and hatched: rows a and b entirely, row c's second key.
  AttentionTrace t = trace_of_file(scen);
  HeatmapOptions o;
  MatrixScene scene;
  std::string error;
  ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
  int hatched = 0;
  for (const auto& it : scene.page.items) hatched += it.cls == "cell masked";
  EXPECT_EQ(hatched, 5);
}

TEST(ExportSvg, DimensionLabelsForQ) {
  std::string scen = write_temp("cross.json", kCrossJson);
  std::string out = test::temp_path("cross-q.svg");
  auto r = test::run_cli("export --scenario '" + scen + "' --step q --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto labels = texts_of(svg_texts(out), "label");
  EXPECT_EQ(labels, (std::vector<std::string>{"d0", "d1", "le", "chat"}));  // d_k = 2
}

TEST(ExportSvg, MultiHeadNamesTheHeadAndItsKeyValueHead) {
  // gqa: 4 query heads in 2 groups, so head 3 reads key/value head 1.
  std::string out = test::temp_path("gqa-k.svg");
  auto r = test::run_cli("export --example gqa --step k --head 3 --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  auto sub = texts_of(svg_texts(out), "subtitle");
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_NE(sub[0].find("kv head 1 (used by head 3)"), std::string::npos) << sub[0];
  out = test::temp_path("gqa-w.svg");
  r = test::run_cli("export --example gqa --step weights --head 2 --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  sub = texts_of(svg_texts(out), "subtitle");
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_NE(sub[0].find("head 2 (kv 1)"), std::string::npos) << sub[0];
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

int count_items(const MatrixScene& scene, const std::string& cls) {
  int n = 0;
  for (const auto& it : scene.page.items) n += it.cls == cls;
  return n;
}

TEST(ExportSvg, NumbersByDefaultOnlyUpTo16x16) {
  std::string big = write_temp("r24.json", random_scenario(24, 8));
  std::string out = test::temp_path("r24.svg");
  auto r = test::run_cli("export --scenario '" + big + "' --step scores --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(texts_of(svg_texts(out), "num").size(), 0u);
  AttentionTrace t = trace_of_file(big);
  HeatmapOptions o;
  o.step = StageId::kScores;
  MatrixScene scene;
  std::string error;
  ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
  EXPECT_EQ(count_items(scene, "cell"), 24 * 24);
  r = test::run_cli("export --scenario '" + big + "' --step scores --annotate --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(texts_of(svg_texts(out), "num").size(), 24u * 24u);

  std::string sixteen = write_temp("r16.json", random_scenario(16, 4));
  r = test::run_cli("export --scenario '" + sixteen + "' --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(texts_of(svg_texts(out), "num").size(), 16u * 16u);
  r = test::run_cli("export --scenario '" + sixteen + "' --step weights --no-annotate --out '" +
                    out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(texts_of(svg_texts(out), "num").size(), 0u);
}

TEST(ExportScene, LargeMatricesStayBoundedAndThinTheirLabels) {
  std::string big = write_temp("r200.json", random_scenario(200, 4));
  AttentionTrace t = trace_of_file(big);
  HeatmapOptions o;
  o.step = StageId::kWeights;
  MatrixScene scene;
  std::string error;
  ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
  EXPECT_LE(scene.layout.width, 1400);
  EXPECT_LE(scene.layout.height, 1400);
  EXPECT_FALSE(scene.layout.annotate);
  const int labels = count_items(scene, "label");
  EXPECT_LT(labels, 2 * 200);  // thinned
  EXPECT_GT(labels, 10);
  // Every shape lies inside the picture.
  for (const auto& it : scene.page.items)
    if (it.kind == SceneItem::Kind::kRect || it.kind == SceneItem::Kind::kHatch ||
        it.kind == SceneItem::Kind::kColorBar) {
      EXPECT_GE(it.rect.x, 0);
      EXPECT_GE(it.rect.y, 0);
      EXPECT_LE(it.rect.right(), scene.layout.width);
      EXPECT_LE(it.rect.bottom(), scene.layout.height);
    }
}

// A 150-token sliding window: the cells are 4 units, too small for separators or numbers, so
// they are one picture (a pixel per cell) rather than 22 500 shapes. In PNG, SVG (rendered by
// librsvg) and PDF (pdftoppm at 72 dpi) every visible cell still has its weight's colour,
// computed here in double, and every hidden cell the grey hatch.
TEST(ExportScene, ALongStageIsOnePictureWithEveryCellInItsColour) {
  const int n = 150, d = 4, window = 20;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  Table q(n, std::vector<double>(d)), k = q;
  for (auto* t : {&q, &k})
    for (auto& row : *t)
      for (double& x : row) x = std::round(u(rng) * 1000) / 1000;  // as written in the JSON
  auto json_of = [](const Table& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.size(); ++i) {
      s += i ? ",[" : "[";
      for (size_t j = 0; j < t[i].size(); ++j) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%.3f", j ? "," : "", t[i][j]);
        s += buf;
      }
      s += "]";
    }
    return s + "]";
  };
  std::string tokens = "[";
  for (int i = 0; i < n; ++i) tokens += (i ? ",\"t" : "\"t") + std::to_string(i) + "\"";
  const std::string scen = write_temp(
      "window150.json",
      R"({"format": "attention-lab-scenario", "version": 1, "name": "window-150", "query_tokens": )" +
          tokens + "], \"q\": " + json_of(q) + ", \"k\": " + json_of(k) + ", \"v\": " + json_of(k) +
          ", \"mask\": {\"causal\": true, \"window\": " + std::to_string(window) + "}}");
  std::vector<std::vector<bool>> visible(n, std::vector<bool>(n));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) visible[i][j] = j <= i && i - j <= window;
  const Table w = masked_softmax(dot_scores(q, k), d, visible);
  double max_w = 0;
  for (const auto& row : w)
    for (double x : row) max_w = std::max(max_w, x);

  AttentionTrace t = trace_of_file(scen);
  HeatmapOptions o;
  o.step = StageId::kWeights;
  MatrixScene scene;
  std::string error;
  ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
  const MatrixLayout& L = scene.layout;
  EXPECT_EQ(L.cell, 4);
  EXPECT_EQ(L.separator, 0);
  EXPECT_EQ(count_items(scene, "cell"), 0);
  EXPECT_EQ(count_items(scene, "cells"), 1);
  EXPECT_EQ(count_items(scene, "masked cells"), 1);
  EXPECT_LT(scene.page.items.size(), 400u);

  std::map<std::string, Image> pictures;
  for (const char* ext : {"png", "svg", "pdf"}) {
    const std::string out = test::temp_path(std::string("window150.") + ext);
    auto r = test::run_cli("export --scenario '" + scen + "' --step weights --out '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    pictures[ext] = ext == std::string("png")   ? test::load_png_rgb(out)
                    : ext == std::string("svg") ? test::svg_pixels(out)
                                                : test::pdf_page_pixels(out);
  }
  for (const auto& [ext, img] : pictures) {
    ASSERT_EQ(img.w, L.width) << ext;
    ASSERT_EQ(img.h, L.height) << ext;
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const PixelRect c = L.cell_rect(i, j);
        const Rgb got = img.at(c.x + 2, c.y + 2);
        if (visible[i][j]) {
          const Rgb want = colormap_color("viridis", w[i][j] / max_w);
          if (max_channel_diff(got, want) > 2 && ++wrong <= 5)
            ADD_FAILURE() << ext << " cell (" << i << ", " << j << "): got " << hex(got)
                          << ", expected " << hex(want);
        } else if (!(got.r == got.g && got.g == got.b && got.r >= 170) && ++wrong <= 5) {
          ADD_FAILURE() << ext << " hidden cell (" << i << ", " << j << "): got " << hex(got);
        }
      }
    EXPECT_EQ(wrong, 0) << ext;
  }

  // Numbers in 22 500 cells would be unreadable: --annotate says so and writes nothing.
  const std::string png = test::temp_path("window150-numbers.png");
  std::remove(png.c_str());
  auto r = test::run_cli("export --scenario '" + scen + "' --step weights --annotate --out '" +
                         png + "'");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--annotate: stage 'weights' has 150 × 150 cells, too many to number"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists(png));
}

TEST(ExportScene, ColourBarTicksAreDistinctAndLabelBothEnds) {
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
    for (StageId step : {StageId::kScores, StageId::kWeights, StageId::kOutput, StageId::kQ}) {
      HeatmapOptions o;
      o.step = step;
      MatrixScene scene;
      std::string error;
      ASSERT_TRUE(build_heatmap_scene(t, o, scene, error)) << error;
      std::vector<std::string> labels;
      std::vector<double> ys;
      for (const auto& it : scene.page.items) {
        if (it.cls != "tick-label") continue;
        labels.push_back(it.text);
        ys.push_back(it.y);
        EXPECT_GE(it.y, scene.layout.colorbar.y) << step << " " << scale;
        EXPECT_LE(it.y, scene.layout.colorbar.bottom() + it.font.size) << step << " " << scale;
      }
      EXPECT_GE(labels.size(), 3u) << step << " scale " << scale;
      EXPECT_LE(labels.size(), 6u) << step << " scale " << scale;
      EXPECT_EQ(std::set<std::string>(labels.begin(), labels.end()).size(), labels.size())
          << step << " scale " << scale;
      // The bottom label is the scale's low end, the top one its high end.
      const ColorScale& cs = scene.layout.scale;
      const auto ticks = colorbar_ticks(cs, static_cast<int>(labels.size()));
      EXPECT_EQ(ticks.front().value, cs.lo);
      EXPECT_EQ(ticks.back().value, cs.hi);
      // Ticks do not overlap: at least a line apart.
      std::sort(ys.begin(), ys.end());
      for (size_t k = 1; k < ys.size(); ++k)
        EXPECT_GE(ys[k] - ys[k - 1], 14.0) << step << " scale " << scale;
    }
  }
}

// ---- One colour scale for the app and every export ----

TEST(ColorScale, TheRuleForEachKindOfData) {
  Matrix w(2, 3);
  w << 0.2f, 0.3f, 0.5f, 0.67f, 0.33f, 0.0f;
  ColorScale s = color_scale_for(StageId::kWeights, w);
  EXPECT_EQ(s.map, "viridis");
  EXPECT_EQ(s.lo, 0.0);
  EXPECT_EQ(s.hi, 1.0);  // a few keys: 0.67 has the same colour in every example
  Matrix many = Matrix::Constant(2, 40, 1.0f / 40);
  many(0, 0) = 0.05f;
  s = color_scale_for(StageId::kWeights, many);
  EXPECT_EQ(s.lo, 0.0);
  EXPECT_NEAR(s.hi, 0.05, 1e-7);  // many keys: every weight is small
  Matrix signed_m(1, 3);
  signed_m << -0.2f, 0.5f, -std::numeric_limits<float>::infinity();
  s = color_scale_for(StageId::kScores, signed_m, {"magma", "diverging"});
  EXPECT_EQ(s.map, "diverging");
  EXPECT_NEAR(s.lo, -0.5, 1e-7);
  EXPECT_NEAR(s.hi, 0.5, 1e-7);  // symmetric, −∞ ignored
  Matrix pos(1, 2);
  pos << 0.25f, 0.75f;
  s = color_scale_for(StageId::kOutput, pos, {"magma", "diverging"});
  EXPECT_EQ(s.map, "magma");
  EXPECT_NEAR(s.lo, 0.25, 1e-7);
  EXPECT_NEAR(s.hi, 0.75, 1e-7);
  s = color_scale_for(StageId::kWeights, w, ColormapChoice::only("diverging"));
  EXPECT_EQ(s.lo, -s.hi);  // a diverging map always centres on 0
  Matrix flat = Matrix::Constant(2, 2, 3.0f);
  s = color_scale_for(StageId::kQ, flat);
  EXPECT_LT(s.lo, 3.0);
  EXPECT_GT(s.hi, 3.0);
  Matrix none = Matrix::Constant(1, 2, -std::numeric_limits<float>::infinity());
  s = color_scale_for(StageId::kMasked, none);
  EXPECT_LT(s.lo, s.hi);
}

// The range is read in one vectorised pass of 16 lanes: check it against a plain loop on sizes
// around the lane count, with the extremes and the −∞/NaN cells in every lane and in the tail.
TEST(ColorScale, TheRangeIsTheFiniteMinimumAndMaximumAtAnySize) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int cells : {1, 15, 16, 17, 35, 48, 1000}) {
    for (int where = 0; where < cells; where += std::max(1, cells / 7)) {
      Matrix m(1, cells);
      for (int k = 0; k < cells; ++k) m(0, k) = 1.0f + 0.001f * static_cast<float>((k * 37) % 101);
      m(0, where) = 7.5f;                               // the maximum
      m(0, (where + 3) % cells) = 0.25f;                // the minimum (unless it overwrote the max)
      if (cells > 2) m(0, (where + 1) % cells) = -inf;  // hidden cell
      if (cells > 5) m(0, (where + 5) % cells) = std::nanf("");
      if (cells > 6) m(0, (where + 6) % cells) = inf;
      double lo = inf, hi = -inf;
      for (int k = 0; k < cells; ++k)
        if (std::isfinite(m(0, k))) {
          lo = std::min(lo, static_cast<double>(m(0, k)));
          hi = std::max(hi, static_cast<double>(m(0, k)));
        }
      const ColorScale s = color_scale_for(StageId::kOutput, m);
      if (!(lo < hi)) continue;  // a flat or empty row: covered above
      EXPECT_EQ(s.lo, lo) << cells << " cells, extreme at " << where;
      EXPECT_EQ(s.hi, hi) << cells << " cells, extreme at " << where;
    }
  }
}

TEST(ColorScale, EveryExportedStageUsesTheRule) {
  for (const char* name : {"fear-is", "fear-is-the", "cross-attention", "sliding-window", "gqa"}) {
    AttentionTrace t = trace_of_example(name);
    for (const TraceStep& st : t.steps) {
      HeatmapOptions o;
      o.step = st.id;
      o.maps = {"cividis", "diverging"};
      MatrixLayout L;
      std::string error;
      ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
      const ColorScale want = color_scale_for(st.id, t.head(st, 0), o.maps);
      EXPECT_EQ(L.scale.map, want.map) << name << " " << st.id;
      EXPECT_EQ(L.scale.lo, want.lo) << name << " " << st.id;
      EXPECT_EQ(L.scale.hi, want.hi) << name << " " << st.id;
    }
  }
}

TEST(ColorScale, TickLabelsAreMeaningfulAtAnySize) {
  auto labels = [](double lo, double hi, int n) {
    std::vector<std::string> out;
    for (const auto& t : colorbar_ticks({"viridis", lo, hi}, n)) out.push_back(t.label);
    return out;
  };
  EXPECT_EQ(labels(0, 1, 6), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1"}));
  EXPECT_EQ(labels(0, 1, 2), (std::vector<std::string>{"0", "1"}));
  // A tiny maximum keeps its own precision: never "0.00 / 0.00 / 0.00".
  EXPECT_EQ(labels(0, 0.0123, 2), (std::vector<std::string>{"0", "0.0123"}));
  const auto small = labels(0, 0.00312, 4);
  EXPECT_EQ(small.front(), "0");
  EXPECT_EQ(small.back(), "0.00312");
  EXPECT_EQ(labels(-0.54, 0.54, 5),
            (std::vector<std::string>{"−0.54", "−0.25", "0", "0.25", "0.54"}));
  EXPECT_EQ(labels(0, 250, 2), (std::vector<std::string>{"0", "250"}));
  // Ends close together get the decimals that tell them apart.
  const auto close = labels(0.6541, 0.6547, 2);
  EXPECT_NE(close.front(), close.back());
  for (int n = 2; n <= 6; ++n)
    for (double hi : {1e-5, 0.004, 0.3, 7.0, 1234.0}) {
      const auto l = labels(0, hi, n);
      EXPECT_GE(l.size(), 2u);
      EXPECT_LE(static_cast<int>(l.size()), n);
      EXPECT_EQ(std::set<std::string>(l.begin(), l.end()).size(), l.size()) << hi << " " << n;
    }
}

// ---- PDF ----

TEST(ExportPdf, OneStageHasItsTextAndColours) {
  std::string out = test::temp_path("fit-weights.pdf");
  auto r = test::run_cli("export --example fear-is-the --step weights --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(out).rfind("%PDF-", 0), 0u);
  EXPECT_EQ(test::pdf_pages(out), 1) << "pdfinfo (poppler-utils) is needed";
  const std::string text = test::pdf_text(out);
  for (const char* s : {"Attention weights", "softmax", "Fear", "is", "the", "queries", "keys",
                        "Σ = 1.00", "0.50", "0.34", "0.32", "hidden by the mask"})
    EXPECT_NE(text.find(s), std::string::npos) << s << " in:\n" << text;
  // The page is the picture, in points: at 72 dpi its pixels are the layout's.
  AttentionTrace t = trace_of_example("fear-is-the");
  HeatmapOptions o;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  double pw = 0, ph = 0;
  ASSERT_TRUE(test::pdf_page_size(out, pw, ph));
  EXPECT_NEAR(pw, L.width, 0.5);
  EXPECT_NEAR(ph, L.height, 0.5);
  Image img = test::pdf_page_pixels(out);
  ASSERT_EQ(img.w, L.width) << "pdftoppm (poppler-utils) is needed";
  std::vector<std::vector<bool>> causal = {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}};
  Table w = masked_softmax(dot_scores(kQ, kK), 3.0, causal);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j <= i; ++j)
      expect_cell_colour(img, L, i, j, colormap_color("viridis", w[i][j]), "pdf weights");
}

TEST(ExportPdf, AllStagesPutEveryStageAndHeadOnItsOwnPage) {
  std::string out = test::temp_path("fit-all.pdf");
  auto r = test::run_cli("export --example fear-is-the --all-stages --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  AttentionTrace t = trace_of_example("fear-is-the");
  EXPECT_EQ(test::pdf_pages(out), static_cast<int>(t.steps.size()));
  double pw = 0, ph = 0;
  ASSERT_TRUE(test::pdf_page_size(out, pw, ph));
  EXPECT_EQ(pw, 960);  // a 16:9 slide
  EXPECT_EQ(ph, 540);
  const std::string text = test::pdf_text(out);
  size_t at = 0;
  for (const TraceStep& st : t.steps) {  // in order, one page each
    at = text.find(st.title, at);
    EXPECT_NE(at, std::string::npos) << st.title;
  }
  for (const char* s : {"Softmax along each row", "page 1 of 8", "page 8 of 8", "fear-is-the"})
    EXPECT_NE(text.find(s), std::string::npos) << s;

  // gqa: q and the stages per query head (4), k and v per key/value head (2).
  r = test::run_cli("export --example gqa --all-stages --paper a4 --out '" + out + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  AttentionTrace g = trace_of_example("gqa");
  int pages = 0;
  for (const TraceStep& st : g.steps) pages += st.num_heads();
  EXPECT_EQ(test::pdf_pages(out), pages);
  ASSERT_TRUE(test::pdf_page_size(out, pw, ph));
  EXPECT_NEAR(pw, 841.89, 0.5);  // A4 landscape
  EXPECT_NEAR(ph, 595.28, 0.5);
  const std::string gt = test::pdf_text(out);
  for (const char* s : {"kv head 1 (used by head 2)", "head 3 (kv 1)"})
    EXPECT_NE(gt.find(s), std::string::npos) << s;
}

// A slide is 540 points high; cells are whole units at layout time, so 600 rows did not fit and
// ran off the page. Every shape and line of text of every stage page stays inside the margins
// (36 around, 22 more for the footer), and the title keeps a readable size.
TEST(ExportPdf, AStageWithMoreRowsThanThePageHasPointsStaysOnThePage) {
  AttentionTrace t = trace_of_file(write_temp("r600.json", random_scenario(600, 4)));
  std::string error;
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  ASSERT_TRUE(text) << error;
  for (Paper paper : {Paper::kSlide, Paper::kA4}) {
    for (StageId step : {StageId::kQ, StageId::kWeights}) {
      HeatmapOptions o;
      o.step = step;
      ScenePage page;
      ASSERT_TRUE(stage_page(t, o, paper, 0, 1, *text, page, error)) << error;
      const auto [w, h] = paper_size(paper, true);
      EXPECT_EQ(page.width, w);
      EXPECT_EQ(page.height, h);
      const double left = 36, right = w - 36, bottom = h - 36 - 22 + 0.5;
      int images = 0;
      for (const SceneItem& it : page.items) {
        const std::string what =
            std::string(paper_name(paper)) + " " + stage_name(step) + " " + it.cls;
        if (it.cls == "footer" || it.cls == "rule") continue;
        if (it.kind == SceneItem::Kind::kText || it.kind == SceneItem::Kind::kParagraph) {
          // A paragraph wraps at its width.
          const double tw =
              it.kind == SceneItem::Kind::kParagraph ? it.wrap : text->width(it.text, it.font);
          const double x0 = it.anchor == TextAnchor::kStart    ? it.x
                            : it.anchor == TextAnchor::kMiddle ? it.x - tw / 2
                                                               : it.x - tw;
          if (it.angle == 0) {
            EXPECT_GE(x0, left - 0.5) << what << " '" << it.text << "'";
            EXPECT_LE(x0 + tw, right + 0.5) << what << " '" << it.text << "'";
          }
          EXPECT_LE(it.y, bottom) << what << " '" << it.text << "'";
          EXPECT_GE(it.y, 36) << what << " '" << it.text << "'";
          if (it.cls == "title") {
            EXPECT_GE(it.font.size, 8) << what;
          }
        } else if (it.kind != SceneItem::Kind::kLine) {
          EXPECT_GE(it.rect.x, left - 0.5) << what;
          EXPECT_LE(it.rect.right(), right + 0.5) << what;
          EXPECT_GE(it.rect.y, 36) << what;
          EXPECT_LE(it.rect.bottom(), bottom) << what;
        }
        images += it.kind == SceneItem::Kind::kImage;
      }
      EXPECT_EQ(images, 1) << step;
    }
  }
}

// ---- Text in any script: a CJK token is drawn as glyphs in PNG, SVG and PDF ----

const char* kCjkJson = R"({
  "format": "attention-lab-scenario", "version": 1, "name": "注意-attention",
  "query_tokens": ["注意", "שלום", "attention"],
  "q": [[0.2, 0.1], [0.5, 0.2], [0.1, 0.6]], "k": [[0.3, 0.5], [0.1, 0.4], [0.4, 0.2]],
  "v": [[0.1, 0.7], [0.8, 0.1], [0.3, 0.3]]
})";

TEST(ExportText, EveryScriptHasGlyphs) {
  std::string error;
  auto text = TextEngine::create(error);
  ASSERT_TRUE(text) << error;
  for (const char* s : {"注意", "שלום", "مرحبا", "Attention −∞ Σ √ ≈ ␣ …", "😀"})
    EXPECT_EQ(text->missing_glyphs(s, Font{}), 0) << s << ": install fonts-noto-cjk and "
                                                  << "fonts-noto-color-emoji";
  EXPECT_GT(text->missing_glyphs("\U000F0000", Font{}), 0);  // private use: no font has it
  EXPECT_GT(text->width("注意", Font{}), 0);
}

TEST(ExportText, ACjkTokenIsDrawnInPngSvgAndPdf) {
  const std::string scen = write_temp("cjk.json", kCjkJson);
  std::map<std::string, std::string> out;
  for (const char* ext : {"png", "svg", "pdf"}) {
    out[ext] = test::temp_path(std::string("cjk-weights.") + ext);
    // In the sanitizer build, full allocation stacks let tests/lsan.supp single out cairo 1.16's
    // own leak while it subsets the CJK font into the PDF (elsewhere the option does nothing).
    auto r =
        test::run_cli("export --scenario '" + scen + "' --step weights --out '" + out[ext] + "'",
                      "ASAN_OPTIONS=\"${ASAN_OPTIONS}:fast_unwind_on_malloc=0\"");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "") << ext << ": no warning about missing glyphs";
  }
  // The text is there as text: in the PDF (with a CJK font embedded) and in the SVG's text layer.
  const std::string& pdf = out["pdf"];
  const std::string text = test::pdf_text(pdf);
  EXPECT_NE(text.find("注意"), std::string::npos) << text;
  EXPECT_NE(text.find("שלום"), std::string::npos) << text;
  bool cjk_font = false;
  for (const auto& f : test::pdf_fonts(pdf))
    cjk_font = cjk_font || f.find("CJK") != std::string::npos;
  EXPECT_TRUE(cjk_font) << "no CJK font embedded";
  const auto labels = texts_of(svg_texts(out["svg"]), "label");
  EXPECT_EQ(std::count(labels.begin(), labels.end(), "注意"), 2);
  // Drawn: the label's place left of row 0 has dark pixels in the PNG, SVG and PDF.
  AttentionTrace t = trace_of_file(scen);
  HeatmapOptions o;
  MatrixLayout L;
  std::string error;
  ASSERT_TRUE(layout_heatmap(t, o, L, error)) << error;
  for (const Image& img :
       {test::load_png_rgb(out["png"]), test::svg_pixels(out["svg"]), test::pdf_page_pixels(pdf)}) {
    ASSERT_EQ(img.w, L.width);
    int dark = 0;
    for (int y = L.grid.y; y < L.grid.y + L.cell; ++y)
      for (int x = std::max(0, L.grid.x - 60); x < L.grid.x - 4; ++x) dark += img.at(x, y).r < 100;
    EXPECT_GT(dark, 20) << "the label 注意 is not drawn";
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
      {"--example fear-is-the --all-stages --out '" + out + "'", "--all-stages"},
      {"--example fear-is-the --all-stages --step weights --out '" + out + ".pdf'", "--step"},
      {"--example fear-is-the --all-stages --paper poster --out '" + out + ".pdf'", "--paper"},
  };
  for (const auto& [args, flag] : cases) {
    auto r = test::run_cli("export " + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << "\n" << r.err;
    EXPECT_FALSE(exists(out)) << args;
    EXPECT_FALSE(exists(out + ".jpg")) << args;
    EXPECT_FALSE(exists(out + "_noext")) << args;
    EXPECT_FALSE(exists(out + ".pdf")) << args;
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
  EXPECT_NE(r.err.find(".pdf"), std::string::npos) << r.err;
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
  ASSERT_EQ(r.status, 0) << r.err;  // the same command works with the system's fonts
  std::remove(out.c_str());
  // A fontconfig that knows no fonts at all.
  const std::string dir = test::temp_path("no-fonts");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string conf =
      write_temp("no-fonts.conf", "<?xml version=\"1.0\"?>\n<fontconfig><dir>" + dir +
                                      "</dir><cachedir>" + dir + "</cachedir></fontconfig>\n");
  r = test::run_cli("export --example fear-is-the --step weights --out '" + out + "'",
                    "FONTCONFIG_FILE='" + conf + "'");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("fonts-dejavu-core"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\n") + 1, r.err.size()) << "one line, nothing from pango: " << r.err;
  EXPECT_FALSE(exists(out));
}

TEST(ExportApi, ReportsBadOptions) {
  AttentionTrace t = trace_of_example("fear-is-the");
  EXPECT_FALSE(image_format_of("api.gif"));
  EXPECT_NE(image_format_error("api.gif").find(".png, .svg or .pdf"), std::string::npos);
  EXPECT_EQ(image_format_of("handout.PDF"), ImageFormat::kPdf);
  EXPECT_EQ(image_format_of("API.PNG"), ImageFormat::kPng);
  EXPECT_EQ(image_format_of("a.b/api.svg"), ImageFormat::kSvg);
  EXPECT_FALSE(image_format_of("a.png/api"));
  HeatmapOptions o;
  o.step = StageId::kWeights;
  o.head = 1;
  std::string bytes, error;
  EXPECT_FALSE(render_heatmap(t, o, ImageFormat::kPng, bytes, error));
  EXPECT_EQ(error.rfind("head: ", 0), 0u) << error;
  o.head = 0;
  EXPECT_TRUE(render_heatmap(t, o, ImageFormat::kPng, bytes, error)) << error;
  EXPECT_EQ(bytes.rfind("\x89PNG", 0), 0u);
}

}  // namespace
}  // namespace attn
