// Stage 6, the output projection: the heads' outputs concatenated, mixed by W_O, and the same
// result head by head.
#include "explain/narrator.h"

namespace attn::narration {

void Narrator::output_projection() {
  const TraceStep* concat = t_.find(StageId::kConcat);
  if (!concat) return;
  const Matrix& C = concat->heads[0];
  const int H = t_.num_heads, dv = t_.d_v;
  const TraceStep* projected = t_.find(StageId::kProjected);
  heading(6, projected ? "Output projection: concatenate every head's output, then mix with W_O"
                       : "Concatenate every head's output");
  std::string bars;
  if (H <= 4 && dv <= 4) {
    for (int hh = 0; hh < H; ++hh)
      for (int c = 0; c < dv; ++c)
        bars += std::string(c == 0 ? (hh == 0 ? "[" : " | ") : ", ") + num(C(row_, hh * dv + c));
    bars += "]";
  } else {
    bars = row_text(C, row_);
  }
  std::string parts = "O_0";
  for (int hh = 1; hh < H; ++hh)
    if (H <= 4 || hh == H - 1)
      parts += " | " + (H > 4 && hh == H - 1 ? std::string(s_.ellipsis) + " | " : "") + "O_" +
               std::to_string(hh);
  line("concat_" + qn() + " = [" + parts + "] = " + bars + "   (H " + s_.times +
       " d_v = " + std::to_string(H) + " " + s_.times + " " + std::to_string(dv) + ")");
  if (!projected) {
    line("This scenario has no W_O: the concatenation is the result.");
    return;
  }
  const Matrix& P = projected->heads[0];
  line("projected_" + qn() + " = concat_" + qn() + " " + s_.dot +
       " W_O + b_O = " + row_text(P, row_) + "   (W_O is " + std::to_string(H * dv) + " " +
       s_.times + " " + std::to_string(P.cols()) + ")");
  const TraceStep* contrib = t_.find(StageId::kHeadContrib);
  if (!contrib) return;
  line("The same result head by head: rows h" + std::string(s_.times) + "d_v.." + "(h+1)" +
       s_.times + "d_v" + s_.minus + "1 of W_O act on head h only.");
  Matrix sum = Matrix::Zero(1, P.cols());
  for (int hh = 0; hh < H; ++hh) {
    const Matrix& Ch = contrib->heads[static_cast<size_t>(hh)];
    sum += Ch.row(row_);
    line("  head " + std::to_string(hh) + ": O_" + std::to_string(hh) + " " + s_.dot +
         " W_O[rows " + range_text(hh * dv, hh * dv + dv - 1) + "] = " + row_text(Ch, row_) +
         (hh == h_ ? "   " + std::string(s_.arrow) + " this head" : ""));
  }
  Matrix b = P.row(row_) - sum;
  line("  b_O = " + row_text(b, 0) + "   (projected " + s_.minus + " the heads' sum)");
}

}  // namespace attn::narration
