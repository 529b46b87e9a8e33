// The labelled matrix: one drawing API for every grid of coloured cells an export shows — a stage
// of attention as a heatmap, a seq2seq alignment plot, a worksheet's filled-in grid. Title and
// formula, row labels down the side, column labels along the top (upright, slanted or thinned as
// room allows), numbers in the cells, hidden cells hatched, notes beside the rows (Σ = 1.00), a
// colour bar with its ticks, and a legend. It lays the picture out as a scene (render/scene.h),
// which the one cairo/pango path draws as PNG, SVG or PDF.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/matrix.h"
#include "render/color_scale.h"
#include "render/scene.h"

namespace attn {

struct LabelledMatrix {
  std::string title;     // bold: "Attention weights"
  std::string formula;   // after the title (or on its own line when long): "weights = softmax(…)"
  std::string subtitle;  // grey line under the title: head, example, shape, mask
  std::vector<std::string> row_labels, col_labels;  // one per row / column
  std::string row_axis, col_axis;                   // "queries ↓", "keys →"
  Matrix values;                                    // (rows, cols)
  std::vector<uint8_t> hidden;  // per cell, row-major; nonzero = hatched; empty = none
  // Per cell, row-major; nonzero = left blank with a "?" (a worksheet question asks for it; its
  // colour would tell the value too); empty = none.
  std::vector<uint8_t> concealed;
  std::vector<std::string> numbers;    // per cell, row-major, as printed; empty = no numbers
  std::vector<std::string> row_notes;  // beside each row (row sums); empty = none
  ColorScale scale;
  bool color_bar = true;
  bool plain = false;  // white cells with grid lines, for printing (worksheet tables and grids)
  std::string hidden_legend;  // beside a hatched swatch under the grid, when a cell is hidden
  std::string caption;        // a paragraph under everything, e.g. what the stage computes
};

struct MatrixStyle {
  std::optional<bool> annotate;  // numbers in the cells; default: given, ≤ 16×16 and legible
  int width = 0;                 // the picture's width in page units; 0 = natural size
  int max_cell = 80;             // largest cell pitch at the natural size
  bool compact = false;          // smaller margins and title (several plots on one page)
  int cell = 0;                  // a fixed cell pitch (worksheets); 0 = from the matrix's size
  int margin = -1;               // around the picture; −1 = automatic
  double scale = 1;              // text and gap sizes at the natural size (0.72 for print)
  bool layout_only = false;      // leave the cells out: only the layout is wanted (sizing)
};

// Where things are, in page units. Cell (i, j) starts at grid.x + j·cell, grid.y + i·cell.
struct MatrixLayout {
  int width = 0, height = 0;  // the whole picture
  int rows = 0, cols = 0;
  int cell = 0;
  int separator = 0;  // white gap at the right and bottom of every cell
  PixelRect grid;
  PixelRect colorbar;  // w = 0 when there is none
  bool annotate = false;
  ColorScale scale;

  // The coloured area of cell (i, j), without its separator.
  PixelRect cell_rect(int i, int j) const {
    return {grid.x + j * cell, grid.y + i * cell, cell - separator, cell - separator};
  }
};

struct MatrixScene {
  MatrixLayout layout;
  ScenePage page;  // width and height = layout's
};

// Checks the matrix's parts agree (labels, numbers, hidden, notes); "" or what is wrong.
std::string check_labelled_matrix(const LabelledMatrix& m);

// Lays the matrix out (checked by check_labelled_matrix first).
MatrixScene compose_matrix(const LabelledMatrix& m, const MatrixStyle& style,
                           const TextEngine& text);

// Hatch colours of hidden cells, shared with worksheets.
constexpr Rgb kHiddenFill{236, 236, 236}, kHiddenLine{190, 190, 190};

}  // namespace attn
