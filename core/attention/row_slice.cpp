// Slicing a problem to a few query rows or to one head (see row_slice.h).
#include "attention/row_slice.h"

#include <cassert>

#include "attention/mask.h"

namespace attn {
namespace {

// Every option but the custom mask and the bias, which the callers slice: copying them whole
// first would cost what the slice saves. (A new option with a row per query or a matrix per head
// must be sliced by the callers too.)
AttentionProblem with_options_of(const AttentionProblem& p) {
  AttentionProblem s;
  s.options.scale = p.options.scale;
  s.options.temperature = p.options.temperature;
  s.options.additive = p.options.additive;
  const MaskSpec& m = p.options.mask;
  s.options.mask.causal = m.causal;
  s.options.mask.window = m.window;
  s.options.mask.global = m.global;
  s.options.mask.key_length = m.key_length;
  s.first_query_row = p.first_query_row;
  s.total_query_rows = p.total_query_rows;
  return s;
}

}  // namespace

AttentionProblem slice_query_rows(const AttentionProblem& p, int first, int last) {
  assert(0 <= first && first < last && last <= p.input.n_q());
  const int rows = last - first;
  auto slice = [&](const HeadStack& stack) {
    HeadStack out;
    out.reserve(stack.size());
    for (const Matrix& m : stack) out.push_back(m.middleRows(first, rows));
    return out;
  };
  AttentionProblem s = with_options_of(p);
  s.input.q = slice(p.input.q);
  s.input.k = p.input.k;
  s.input.v = p.input.v;
  s.options.mask.custom = slice(p.options.mask.custom);
  s.options.mask.bias = slice(p.options.mask.bias);
  s.first_query_row = p.first_query_row + first;
  s.total_query_rows = p.full_n_q();
  return s;
}

AttentionProblem select_head(const AttentionProblem& p, int h) {
  assert(0 <= h && h < p.input.num_heads());
  const int g = p.input.kv_head_of(h);
  AttentionProblem s = with_options_of(p);
  s.input.q = {p.input.q[static_cast<size_t>(h)]};
  s.input.k = {p.input.k[static_cast<size_t>(g)]};
  s.input.v = {p.input.v[static_cast<size_t>(g)]};
  if (const Matrix* c = mask_for_head(p.options.mask.custom, h)) s.options.mask.custom = {*c};
  if (const Matrix* b = mask_for_head(p.options.mask.bias, h)) s.options.mask.bias = {*b};
  return s;
}

}  // namespace attn
