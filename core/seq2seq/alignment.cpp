// One translation's alignment, read from the decoder's forward pass (see alignment.h).
#include "seq2seq/alignment.h"

#include <algorithm>

#include "seq2seq/trainer.h"

namespace attn::s2s {

bool align(const Model& m, const std::string& input, Alignment& a, std::string& error) {
  a = Alignment{};
  if (!translate(m, input, a.fc, a.output, error)) return false;
  const int rows =
      std::min(static_cast<int>(a.fc.steps.size()), static_cast<int>(a.output.size()) + 1);
  a.weights = Mat<float>::Zero(rows, static_cast<int>(input.size()));
  if (uses_window(m.config.score)) a.visible.resize(rows, a.weights.cols());
  for (int i = 0; i < rows; ++i) {
    const auto& step = a.fc.steps[static_cast<size_t>(i)];
    a.rows.push_back(m.out_vocab.label(step.out[0]));
    if (m.config.score == Score::kNone)
      a.weights(i, a.weights.cols() - 1) = 1.0f;  // the bottleneck: only the last state
    else
      a.weights.row(i) = step.alpha.row(0);
    if (a.visible.size() > 0) a.visible.row(i) = step.valid.row(0);
  }
  for (char c : input) a.cols.emplace_back(1, c);
  return true;
}

}  // namespace attn::s2s
