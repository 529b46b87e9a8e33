// The narration's opening: which query (and key) and head, the shapes, the rounding, and the
// inputs as a table of the query row and the key and value rows.
#include <algorithm>

#include "explain/narrator.h"

namespace attn::narration {

void Narrator::header(bool full) {
  out_ << "Attention for query " << i_ << " " << quoted_query();
  if (cell_)
    out_ << " and key " << *r_.key << " \"" << tok(t_.key_tokens[static_cast<size_t>(*r_.key)])
         << "\"";
  if (!t_.name.empty()) out_ << " " << s_.dash << " " << tok(t_.name);
  out_ << "\n";
  const int H = t_.num_heads, Hkv = t_.num_kv_heads;
  if (H == 1) {
    out_ << "  One attention head.\n";
  } else {
    out_ << "  Head " << h_ << " of " << H << " reads key/value head " << g_;
    if (Hkv == H)
      out_ << " (multi-head: each query head has its own K/V head).\n";
    else if (Hkv == 1)
      out_ << " (MQA: all " << H << " query heads share the one K/V head).\n";
    else
      out_ << " (GQA: " << H / Hkv << " query heads share each K/V head).\n";
  }
  if (!full) return;
  const int n_in = static_cast<int>(t_.input_key_tokens.size());
  if (!t_.input_key_tokens.empty())
    out_ << "  Linformer: " << t_.n_q << " query tokens attend to " << t_.n_k
         << " virtual keys, projections of the " << n_in << " keys and values.\n";
  else if (cross())
    out_ << "  Cross-attention: " << t_.n_q << " query tokens attend to the " << t_.n_k
         << " key/value tokens of another sequence.\n";
  std::string hq = H > 1 ? "H=" + std::to_string(H) + ", " : "";
  std::string hkv = H > 1 ? "H_kv=" + std::to_string(Hkv) + ", " : "";
  out_ << "  Shapes: Q (" << hq << "n_q=" << t_.n_q << ", d_k=" << t_.d_k << ")   K (" << hkv
       << "n_k=" << (n_in ? n_in : t_.n_k) << ", d_k=" << t_.d_k << ")   V (" << hkv
       << "n_k=" << (n_in ? n_in : t_.n_k) << ", d_v=" << t_.d_v << ")";
  if (n_in) out_ << "   K̃, Ṽ (" << hkv << "k=" << t_.n_k << ", …)";
  out_ << "\n";
  out_ << "  Numbers are rounded to " << p_ << " decimal" << (p_ == 1 ? "" : "s")
       << (p_ == 0 ? " (values below 1 keep their first digit)" : "")
       << "; every sum and product uses the unrounded values.\n";
}

// The query row and the key/value rows as a small table.
void Narrator::key_value_table(bool with_query) {
  if (with_query)
    line("q_" + qn() + " = " + row_text(*q_, i_) + "   (row " + std::to_string(i_) + " of Q" +
         (t_.num_heads > 1 ? " for head " + std::to_string(h_) : "") + ")");
  std::vector<std::string> js, names, ks, vs;
  for (int j : detail_) {
    js.push_back(std::to_string(j));
    names.push_back(tok(t_.key_tokens[static_cast<size_t>(j)]));
    ks.push_back(row_text(*k_, j));
    vs.push_back(row_text(*v_, j));
  }
  size_t wj = 1, wn = 3, wk = 3, wv = 3;
  for (size_t r = 0; r < js.size(); ++r) {
    wj = std::max(wj, display_width(js[r]));
    wn = std::max(wn, std::min<size_t>(display_width(names[r]), 16));
    wk = std::max(wk, display_width(ks[r]));
    wv = std::max(wv, display_width(vs[r]));
  }
  line("  " + pad_left("j", wj) + "  " + pad_right("key", wn) + "  " + pad_right("k_j", wk) +
       "  v_j");
  for (size_t r = 0; r < js.size(); ++r)
    line("  " + pad_left(js[r], wj) + "  " + pad_right(names[r], wn) + "  " + pad_right(ks[r], wk) +
         "  " + vs[r]);
  if (!cell_ && rest_count() > 0)
    line("  " + std::string(s_.ellipsis) + " and " + std::to_string(rest_count()) +
         " more keys (the 12 shown are the visible keys with the largest weights)");
}

void Narrator::inputs() {
  out_ << (cell_ ? "\nInputs: the query row and this key's k and v rows"
                 : "\nInputs: the query row and every key and value row")
       << (t_.num_kv_heads > 1 ? " (K and V of key/value head " + std::to_string(g_) + ")" : "")
       << "\n";
  key_value_table(true);
}

}  // namespace attn::narration
