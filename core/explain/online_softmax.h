// FlashAttention's online softmax for one query row, block of keys by block of keys: the running
// maximum m, the running sum ℓ, the accumulator rescaled when m grows, and the one division at the
// end. Computed in double from the trace's own masked scores and V (the narration's arithmetic,
// not a second attention engine), so the app's view and `explain --online-softmax` show the same
// numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

// One block of keys [first, last) as the walk processes it.
struct OnlineBlock {
  int first = 0, last = 0;
  int visible = 0;              // keys of the block the masks leave visible
  double block_max = 0;         // max of the block's visible x_j (−∞ when none is visible)
  double m_old = 0, m_new = 0;  // running maximum before and after the block
  double rescale = 1;           // e^(m_old − m_new): 1 when m did not grow, 0 on the first block
  double l_old = 0, l_new = 0;  // running sum ℓ before and after
  std::vector<double> p;        // exp(x_j − m_new) per key of the block (0 when hidden)
  std::vector<double> acc_old, acc_new;  // running Σ p_j·v_j (d_v) before and after
  bool grew() const { return m_new > m_old; }
};

struct OnlineSoftmaxWalk {
  int query = 0, head = 0, block_size = 1;
  std::vector<double> x;  // per key: masked_j / T, −∞ when hidden
  std::vector<OnlineBlock> blocks;
  bool empty_row = false;      // every key hidden: ℓ stays 0, the output is the zero vector
  std::vector<double> output;  // acc / ℓ after the last block (zeros for an empty row)
};

// The walk for query row `query` (a row the trace holds) of query head `head` with blocks of
// `block` keys (1 ≤ block). Asserts its arguments; explain_online_softmax checks them for users.
OnlineSoftmaxWalk online_softmax_walk(const AttentionTrace& trace, int query, int head, int block);

// The memory the standard formulation moves that FlashAttention never does, for a whole trace's
// shape in float32: the (n_q, n_k) scores S and weights P of every head, each written to memory
// once and read back once (S by the softmax, P by P·V).
struct ScoreTraffic {
  int64_t cells_per_head = 0;  // n_q · n_k
  int64_t matrix_bytes = 0;    // one such float32 matrix over all heads
  int64_t traffic_bytes = 0;   // S and P, each written and read: 4 × matrix_bytes
  int64_t block_bytes = 0;     // what one query row keeps on chip instead: B scores
};
ScoreTraffic score_traffic(const AttentionTrace& trace, int block);

// "64 B", "1.5 KiB", "3.0 GiB".
std::string bytes_text(int64_t bytes);

}  // namespace attn
