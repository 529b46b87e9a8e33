// Each stage's formula in index notation (repeated indices are summed, Einstein style), as
// the heatmap panel writes it beside the formula, and the same form with the hovered cell's
// indices put in. Plain text: no ImGui here.
#pragma once

#include <string>
#include <vector>

#include "attention/stage.h"

namespace attn {

struct IndexForm {
  std::string general;  // e.g. "S^{ij} = Q^{ia} K^{ja}   (a summed over d_k)"
  std::string cell;     // with the hovered cell: "S^{1,2} = Q^{1,a} K^{2,a}"; "" when none
};

// The index form of stage `id` (the inputs, scores … output, concat, projected; empty for the
// others); multi-head forms carry h (and g, the key/value head). `row`, `col`: the hovered cell,
// or −1.
IndexForm index_form(StageId id, bool multi_head, int head, int kv_head, int row, int col);

// One row of the shapes table: a tensor, its index letters and its shape.
struct ShapeRow {
  std::string tensor, indices, shape;
};
std::vector<ShapeRow> shapes_table(bool multi_head, int H, int H_kv, int n_q, int n_k, int d_k,
                                   int d_v);

}  // namespace attn
