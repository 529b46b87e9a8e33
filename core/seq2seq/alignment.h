// One translation's alignment as the pictures show it (Figure 3 of Bahdanau et al.): a row per
// decoded character (with </s> when it was reached), a column per input character, each row the
// decoder's attention weights — what the CLI's alignment plots, the app's seq2seq stage and a
// lesson worksheet's figure all draw.
#pragma once

#include <string>
#include <vector>

#include "seq2seq/model_io.h"

namespace attn::s2s {

// The sentence the app and worksheets translate when nothing else is asked for.
inline constexpr const char* kExampleInput =
    "please note that the meeting moved to 11/03/1987 at 10:30";

struct Alignment {
  ForwardCache<float> fc;  // the decoder's forward pass
  std::string output;
  std::vector<std::string> rows, cols;
  Mat<float> weights;  // α_tj; a model without attention reads only the last position
  Mat<float> visible;  // 1 inside a local window, 0 outside (empty: no window)
  int steps() const { return static_cast<int>(rows.size()); }
};

// Translates `input` with `model` and reads its alignment. False with an error naming the
// character when the input cannot be translated (translate() in trainer.h).
bool align(const Model& model, const std::string& input, Alignment& out, std::string& error);

}  // namespace attn::s2s
