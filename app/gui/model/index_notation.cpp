// Index forms of the stages (index_notation.h).
#include "gui/model/index_notation.h"

namespace attn {
namespace {

// Replaces each whole-letter index in a "{…}" group: `from` letter → `to` text.
std::string substitute(const std::string& s, char from, const std::string& to) {
  std::string out;
  bool in_group = false;
  for (char c : s) {
    if (c == '{') in_group = true;
    if (c == '}') in_group = false;
    if (in_group && c == from)
      out += to;
    else
      out += c;
  }
  return out;
}

// "{ij}" → "{i,j}" so numbers of several digits stay readable once substituted.
std::string with_commas(const std::string& s) {
  std::string out;
  bool in_group = false;
  for (size_t k = 0; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '{') in_group = true;
    if (c == '}') in_group = false;
    out += c;
    if (in_group && c != '{' && k + 1 < s.size() && s[k + 1] != '}') out += ',';
  }
  return out;
}

}  // namespace

IndexForm index_form(StageId id, bool multi, int head, int kv_head, int row, int col) {
  // The head prefix: "h" in the general form, the head's number for a cell.
  const std::string h = multi ? "h" : "", g = multi ? "g" : "";
  std::string f, note;
  char second = 'j';  // the column's letter
  if (id == StageId::kInputs) {
    f = "Q^{" + h + "ia}   K^{" + g + "ja}   V^{" + g + "jb}";
    note = "i query, j key, a over d_k, b over d_v";
    second = 'a';
  } else if (id == StageId::kScores) {
    f = "S^{" + h + "ij} = Q^{" + h + "ia} K^{" + g + "ja}";
    note = "a summed over d_k";
  } else if (id == StageId::kScaled) {
    f = "S'^{" + h + "ij} = S^{" + h + "ij} / √d_k";
  } else if (id == StageId::kMasked) {
    f = "M^{" + h + "ij} = S'^{" + h + "ij} + B^{" + h + "ij}   (−∞ where hidden)";
  } else if (id == StageId::kWeights) {
    f = "A^{" + h + "ij} = exp(M^{" + h + "ij}) / Σ_k exp(M^{" + h + "ik})";
    note = "softmax over j";
  } else if (id == StageId::kOutput) {
    f = "O^{" + h + "ib} = A^{" + h + "ij} V^{" + g + "jb}";
    note = "j summed over the keys";
    second = 'b';
  } else if (id == StageId::kConcat) {
    f = "C^{i(hb)} = O^{hib}";
    note = "head h's d_v columns side by side";
    second = 'c';
  } else if (id == StageId::kProjected) {
    f = "Y^{ie} = O^{hib} W_O^{hbe} + b_O^{e}";
    note = "h and b summed";
    second = 'e';
  } else {
    return {};
  }
  if (multi && id != StageId::kConcat && id != StageId::kProjected)
    note += (note.empty() ? "" : "; ") + std::string("g = the key/value head of h");
  IndexForm out;
  out.general = f + (note.empty() ? "" : "   (" + note + ")");
  if (row >= 0 && col >= 0 && id != StageId::kInputs && id != StageId::kConcat) {
    std::string c = with_commas(f);
    c = substitute(c, 'i', std::to_string(row));
    c = substitute(c, second, std::to_string(col));
    if (multi) {
      c = substitute(c, 'h', std::to_string(head));
      c = substitute(c, 'g', std::to_string(kv_head));
    }
    out.cell = c;
  }
  return out;
}

std::vector<ShapeRow> shapes_table(bool multi, int H, int H_kv, int n_q, int n_k, int d_k,
                                   int d_v) {
  auto shape = [&](int heads, int a, int b) {
    return "(" + (multi ? std::to_string(heads) + ", " : std::string()) + std::to_string(a) + ", " +
           std::to_string(b) + ")";
  };
  const std::string h = multi ? "h" : "", g = multi ? "g" : "";
  return {{"Q", h + "ia", shape(H, n_q, d_k)},
          {"K", g + "ja", shape(H_kv, n_k, d_k)},
          {"V", g + "jb", shape(H_kv, n_k, d_v)},
          {"S, A", h + "ij", shape(H, n_q, n_k)},
          {"O", h + "ib", shape(H, n_q, d_v)}};
}

}  // namespace attn
