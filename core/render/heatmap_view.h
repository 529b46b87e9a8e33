// A stage of a trace as a labelled matrix: picks the head's matrix, labels its rows and columns
// with tokens or dimensions, marks hidden cells, formats the numbers and row sums, and sets the
// colour scale (color_scale_for, the app's rule). Internal to the exporter.
#pragma once

#include <string>

#include "attention/attention.h"
#include "render/heatmap_export.h"
#include "render/labelled_matrix.h"

namespace attn {

// The entry of step.heads that query head `head` reads (a key/value head for k and v).
int matrix_index_for(const AttentionTrace& t, const TraceStep& s, int head);

// The options must have passed check_heatmap_options.
LabelledMatrix stage_matrix(const AttentionTrace& trace, const HeatmapOptions& options);

// "causal mask, window 2", or "" when nothing is masked.
std::string mask_summary(const MaskSpec& mask);

// One sentence on what a stage computes, for the caption under it on a page.
const char* stage_caption(StageId id);

}  // namespace attn
