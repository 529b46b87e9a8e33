// The heatmap widget's layout (heatmap_layout), checked without a window: sizes in, cell size,
// viewport, label placement and whether numbers are shown out. Every expected value is worked out
// by hand in the comments from the widget's rules, not by calling the widget's code.
#include <gtest/gtest.h>

#include "gui/heatmap_widget.h"

namespace attn {
namespace {

constexpr float kTol = 1e-3f;

// A 3 × 4 weights matrix in a 600 × 400 panel at font 20, axis titles and a colour bar.
TEST(HeatmapLayout, SmallMatrixGetsSquareCellsNumbersAndAStandingColourBar) {
  HeatmapLayoutInput in;
  in.pos = {10, 30};
  in.avail = {600, 400};
  in.font = 20;
  in.rows = 3;
  in.cols = 4;
  in.row_axis = in.col_axis = true;
  in.row_label_w = 50;
  in.row_axis_w = 40;
  in.col_label_w = 30;
  in.number_w = 40;
  in.bar_tick_w = 30;
  const HeatmapLayout L = heatmap_layout(in);
  // pad = 20 / 2 = 10; row labels: min(max(50, 40), 0.28 · 600 = 168) + 2 · 10 = 70.
  EXPECT_NEAR(L.label_w, 70, kTol);
  EXPECT_NEAR(L.cap_h, 23, kTol);  // 1.15 · 20
  EXPECT_NEAR(L.band, 26, kTol);   // 1.3 · 20, labels across (30 + 10 <= the cell)
  EXPECT_FALSE(L.vertical);
  EXPECT_NEAR(L.col_lf, 20, kTol);
  // Bar lying under the grid (12 + 16 + 2 + 20 + 4 = 54 high): cells 530 / 4 × 297 / 3 = 132.5 ×
  // 99. Standing right (16 + 8 + 30 + 2 · 10 = 74 wide): 456 / 4 × 351 / 3 = 114 × 117, squared
  // to 114, which is more than 5 % taller: the bar stands and nothing is under the grid.
  EXPECT_TRUE(L.bar_right);
  EXPECT_NEAR(L.bottom, 0, kTol);
  EXPECT_NEAR(L.base.x, 114, kTol);
  EXPECT_NEAR(L.base.y, 114, kTol);
  EXPECT_NEAR(L.cell_w, 114, kTol);
  EXPECT_NEAR(L.vp0.x, 80, kTol);  // 10 + 70
  EXPECT_NEAR(L.vp0.y, 79, kTol);  // 30 + 23 + 26
  EXPECT_NEAR(L.vp_size.x, 456, kTol);
  EXPECT_NEAR(L.vp_size.y, 342, kTol);
  EXPECT_NEAR(L.vp1.x, 536, kTol);
  EXPECT_NEAR(L.origin.x, 80, kTol);
  EXPECT_EQ(L.i0, 0);
  EXPECT_EQ(L.i1, 3);
  EXPECT_EQ(L.j0, 0);
  EXPECT_EQ(L.j1, 4);
  // Numbers: min(114 / 2, (0.8 · 114 − 4) / (40 / 20) = 43.6, 20) = 20 >= max(10, 11).
  EXPECT_TRUE(L.numbers_shown);
  EXPECT_NEAR(L.number_size, 20, kTol);
  EXPECT_NEAR(L.row_lf, 20, kTol);  // clamp(114 / 1.05, 14.4, 20)
  EXPECT_EQ(L.row_every, 1);
  EXPECT_EQ(L.col_every, 1);
  EXPECT_FALSE(L.show_stats);
}

// 100 × 100 in 800 × 600: key labels turn upright, labels thin out to every 5th, no numbers.
TEST(HeatmapLayout, LongSequenceTurnsAndThinsTheKeyLabels) {
  HeatmapLayoutInput in;
  in.pos = {0, 0};
  in.avail = {800, 600};
  in.rows = in.cols = 100;
  in.row_label_w = in.col_label_w = 40;
  in.number_w = 60;
  in.bar_tick_w = 40;
  const HeatmapLayout L = heatmap_layout(in);
  // Row labels 40 + 20 = 60; no axis titles. Lying bar: cells 740 / 100 × (600 − 26 − 54) / 100 =
  // 7.4 × 5.2; 40 + 10 > 7.4 and 20 · (7.4 − 10) / 40 < 14.4, so the labels turn, at
  // clamp((7.4 − 2) / 1.15, 14.4, 20) = 14.4, in a band of min(40 · 14.4 / 20, 140) + 10 = 38.8.
  EXPECT_TRUE(L.vertical);
  EXPECT_NEAR(L.col_lf, 14.4f, kTol);
  EXPECT_NEAR(L.band, 38.8f, kTol);
  // Then 600 − 38.8 − 54 leaves 5.072 a row; standing bar (16 + 8 + 40 + 20 = 84): 656 / 100 ×
  // 561.2 / 100 = 6.56 × 5.612, more than 1.05 × 5.072: the bar stands.
  EXPECT_TRUE(L.bar_right);
  EXPECT_NEAR(L.base.x, 6.56f, kTol);
  EXPECT_NEAR(L.base.y, 5.612f, kTol);
  EXPECT_NEAR(L.label_w, 60, kTol);
  EXPECT_NEAR(L.vp0.x, 60, kTol);
  EXPECT_NEAR(L.vp0.y, 38.8f, kTol);
  EXPECT_NEAR(L.vp_size.x, 656, kTol);
  EXPECT_NEAR(L.vp_size.y, 561.2f, kTol);
  // 10 000 cells in view: more than 4096, no numbers.
  EXPECT_FALSE(L.small);
  EXPECT_FALSE(L.numbers_shown);
  // Rows: clamp(5.612 / 1.05, 14.4, 20) = 14.4; 14.4 · 1.02 / 5.612 = 2.62 → every 5th.
  EXPECT_NEAR(L.row_lf, 14.4f, kTol);
  EXPECT_EQ(L.row_every, 5);
  // Keys: 14.4 · 1.1 / 6.56 = 2.41 → every 5th.
  EXPECT_EQ(L.col_every, 5);
}

// The variant views' maps: fixed 4-pixel cells, no labels, bar or text; zoomed and panned.
TEST(HeatmapLayout, FixedCellsWithoutLabelsFillExactlyTheirCellsAndClipToTheView) {
  HeatmapLayoutInput in;
  in.pos = {5, 7};
  in.avail = {8192, 8192};
  in.rows = in.cols = 2048;
  in.labels = in.color_bar = in.cell_text = false;
  in.cell = 4;
  in.number_w = 44;
  HeatmapLayout L = heatmap_layout(in);
  EXPECT_NEAR(L.label_w, 0, kTol);
  EXPECT_NEAR(L.cap_h, 0, kTol);
  EXPECT_NEAR(L.band, 0, kTol);
  EXPECT_NEAR(L.bottom, 0, kTol);
  EXPECT_FALSE(L.bar_right);
  EXPECT_NEAR(L.vp0.x, 5, kTol);
  EXPECT_NEAR(L.vp0.y, 7, kTol);
  EXPECT_NEAR(L.vp_size.x, 8192, kTol);  // 2048 · 4
  EXPECT_NEAR(L.vp_size.y, 8192, kTol);
  EXPECT_FALSE(L.numbers_shown);
  // Zoom 2, panned 100 left and 50 up: cells of 8, origin (5 − 100, 7 − 50). Rows from
  // ⌊50 / 8⌋ = 6 to ⌈(8192 + 50) / 8⌉ = 1031, columns from ⌊100 / 8⌋ = 12 to ⌈8292 / 8⌉ = 1037.
  in.zoom = 2;
  in.pan = {-100, -50};
  L = heatmap_layout(in);
  EXPECT_NEAR(L.cell_w, 8, kTol);
  EXPECT_NEAR(L.origin.x, -95, kTol);
  EXPECT_NEAR(L.origin.y, -43, kTol);
  EXPECT_EQ(L.i0, 6);
  EXPECT_EQ(L.i1, 1031);
  EXPECT_EQ(L.j0, 12);
  EXPECT_EQ(L.j1, 1037);
  // A pan past the matrix's edge comes back: at most 0, at least 8192 − 16384.
  in.pan = {30, -9000};
  L = heatmap_layout(in);
  EXPECT_NEAR(L.pan.x, 0, kTol);
  EXPECT_NEAR(L.pan.y, -8192, kTol);
}

// Numbers need cells wide enough for the widest one, and are left out when the spec says so.
TEST(HeatmapLayout, NumbersFollowTheCellWidthAndTheSpec) {
  HeatmapLayoutInput in;
  in.avail = {400, 400};
  in.rows = in.cols = 3;
  in.labels = in.color_bar = false;
  in.cell = 32;
  in.number_w = 30;  // 1.5 pixels per pixel of font: min(16, (25.6 − 4) / 1.5 = 14.4, 20) = 14.4
  HeatmapLayout L = heatmap_layout(in);
  EXPECT_TRUE(L.numbers_shown);
  EXPECT_NEAR(L.number_size, 14.4f, kTol);
  in.number_w = 40;  // (25.6 − 4) / 2 = 10.8 < 11: too small to read
  L = heatmap_layout(in);
  EXPECT_FALSE(L.numbers_shown);
  in.number_w = 30;
  in.cell_text = false;
  L = heatmap_layout(in);
  EXPECT_FALSE(L.numbers_shown);
}

}  // namespace
}  // namespace attn
