// One decoder step of a seq2seq model written out with its numbers, for the CLI's
// `translate --step T --position J` and the app's step-through: how the score e_tj of input
// position j came about under the model's score function, the softmax weight α_tj, and what the
// position adds to the context c_t.
#pragma once

#include <string>
#include <vector>

#include "seq2seq/model_io.h"

namespace attn::s2s {

// Lines of text; vectors longer than `terms` are shown by their first `terms` entries and
// "… (N terms)". t and j must be within the trace (asserted).
std::vector<std::string> explain_attention_step(const Model& m, const ForwardCache<float>& fc,
                                                int t, int j, int terms = 4, int decimals = 3);

}  // namespace attn::s2s
