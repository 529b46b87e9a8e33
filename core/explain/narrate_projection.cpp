// Stage 0, the projection: how W_Q, W_K and W_V turn token embeddings into q, k and v (scenarios
// with X and the W matrices; direct Q/K/V scenarios show the inputs instead).
#include "explain/narrator.h"

namespace attn::narration {

void Narrator::projection() {
  const TraceStep* x = t_.find(StageId::kX);
  if (!x) {
    inputs();
    return;
  }
  heading(0, "Projection: learned weight matrices turn token embeddings into q, k and v");
  const Matrix& X = x->heads[0];
  const std::string d_model = std::to_string(X.cols());
  line("x_" + qn() + " = " + row_text(X, i_) + "   (row " + std::to_string(i_) +
       " of X, d_model = " + d_model + ")");
  line("q_" + qn() + " = x_" + qn() + " " + s_.dot + " W_Q^(" + std::to_string(h_) +
       ") = " + row_text(*q_, i_) + "   (W_Q is " + d_model + " " + s_.times + " " +
       std::to_string(t_.d_k) + ": d_model " + s_.times + " d_k)");
  const TraceStep* x_kv = t_.find(StageId::kXKv);
  const std::string src = x_kv ? "x_kv_j" : "x_j";
  if (x_kv)
    line("Keys and values come from the other sequence X_kv (cross-attention), key token j:");
  else
    line("Keys and values come from the same tokens (self-attention), token j:");
  line("  k_j = " + src + " " + s_.dot + " W_K^(" + std::to_string(g_) + ") and v_j = " + src +
       " " + s_.dot + " W_V^(" + std::to_string(g_) + ")   (key/value head " + std::to_string(g_) +
       "; W_V is " + d_model + " " + s_.times + " " + std::to_string(t_.d_v) + ")");
  if (cell_) {
    const Matrix& XK = x_kv ? x_kv->heads[0] : X;
    line(src.substr(0, src.size() - 1) + kn(*r_.key) + " = " + row_text(XK, *r_.key));
  }
  key_value_table(false);
}

}  // namespace attn::narration
