// Builds the labelled matrix of a trace stage (see heatmap_view.h).
#include "render/heatmap_view.h"

#include <algorithm>
#include <cmath>

#include "attention/format.h"

namespace attn {
namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : sep) + p;
  return out;
}

// Long tokens would push the grid off the slide; the full text is in the scenario anyway.
std::string shorten(const std::string& raw, size_t max_chars) {
  std::string s = raw;
  for (char& c : s)  // tabs and newlines in a token would break the line of labels
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  std::vector<size_t> starts;  // byte offset of each code point
  for (size_t k = 0; k < s.size(); ++k)
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) starts.push_back(k);
  if (starts.size() <= max_chars) return s;
  return s.substr(0, starts[max_chars - 1]) + "…";
}

}  // namespace

std::string mask_summary(const MaskSpec& m) {
  std::vector<std::string> parts;
  if (m.causal == CausalAlign::kTopLeft) parts.push_back("causal mask");
  if (m.causal == CausalAlign::kLowerRight) parts.push_back("causal mask (lower-right)");
  if (m.window) parts.push_back("window " + std::to_string(*m.window));
  if (!m.global.empty()) parts.push_back("global tokens");
  if (m.key_length) parts.push_back("keys ≥ " + std::to_string(*m.key_length) + " are padding");
  if (!m.custom.empty()) parts.push_back("custom mask");
  if (!m.bias.empty()) parts.push_back("additive bias");
  return join(parts, ", ");
}

int matrix_index_for(const AttentionTrace& t, const TraceStep& s, int head) {
  int n = s.num_heads();
  if (n == t.num_heads) return head;
  if (n == t.num_kv_heads && head < static_cast<int>(t.kv_head_of.size()))
    return t.kv_head_of[head];
  return std::min(head, n - 1);
}

const char* stage_caption(StageId id) { return stage_info(id).caption; }

LabelledMatrix stage_matrix(const AttentionTrace& t, const HeatmapOptions& o) {
  LabelledMatrix v;
  const TraceStep& step = *t.find(o.step);
  const int index = matrix_index_for(t, step, o.head);
  const Matrix& m = t.head(step, index);
  v.values = m;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const StageId id = step.id;
  const bool attention = is_query_key(id) && rows == t.n_q && cols == t.n_k;

  std::string head_text;
  const int n = step.num_heads();
  if (t.num_heads > 1 && n > 1) {
    const int kv = index < static_cast<int>(step.kv_head.size()) ? step.kv_head[index] : index;
    if (n == t.num_heads)
      head_text = "head " + std::to_string(o.head) + " (kv " + std::to_string(kv) + ")";
    else
      head_text =
          "kv head " + std::to_string(index) + " (used by head " + std::to_string(o.head) + ")";
  }

  // Labels: tokens where the rows or columns are tokens, dimension indices otherwise.
  // Rows are keys in K, V, X_kv and Linformer's K̃ and Ṽ (key-side stages).
  const bool virtual_keys = stage_kind(id) == StageKind::kKeySide;  // Linformer's K̃ and Ṽ
  const bool key_rows =
      virtual_keys || id == StageId::kK || id == StageId::kV || id == StageId::kXKv;
  // With Linformer, K and V have the n_k input keys as rows, K̃ and Ṽ the virtual keys.
  const bool input_keys = key_rows && !t.input_key_tokens.empty() && !virtual_keys;
  const auto& row_tokens = input_keys ? t.input_key_tokens
                           : key_rows ? t.key_tokens
                                      : t.query_tokens;
  for (int i = 0; i < rows; ++i)
    v.row_labels.push_back(static_cast<int>(row_tokens.size()) == rows ? shorten(row_tokens[i], 16)
                                                                       : std::to_string(i));
  const bool concat =
      id == StageId::kConcat && t.num_heads > 1 && t.d_v > 0 && cols == t.num_heads * t.d_v;
  // RoPE's angles: a column per pair of dimensions (i, i + d_k/2).
  const bool rope = id == StageId::kRope;
  for (int j = 0; j < cols; ++j)
    v.col_labels.push_back(
        rope     ? "p" + std::to_string(j)
        : concat ? "h" + std::to_string(j / t.d_v) + " d" + std::to_string(j % t.d_v)
        : attention && static_cast<int>(t.key_tokens.size()) == cols ? shorten(t.key_tokens[j], 16)
                                                                     : "d" + std::to_string(j));
  std::string noun_rows, noun_cols;
  if (attention) {
    v.row_axis = "queries ↓";
    v.col_axis = "keys →";
    noun_rows = "queries";
    noun_cols = "keys";
  } else {
    const bool tokens = id == StageId::kX;
    v.row_axis = virtual_keys ? "virtual keys ↓"
                 : key_rows   ? "keys ↓"
                              : (tokens ? "tokens ↓" : "queries ↓");
    noun_rows = virtual_keys ? "virtual keys" : key_rows ? "keys" : (tokens ? "tokens" : "queries");
    v.col_axis = rope ? "pairs of dimensions →" : "dimensions →";
    noun_cols = rope ? "pairs" : "dimensions";
    if (rope) {
      v.row_axis = "positions ↓";
      noun_rows = "positions";
    }
  }

  // Hidden cells: hidden by the mask in the masked and weights stages; any value that is not a
  // finite number (−∞ from a bias) is drawn the same way.
  const bool show_mask = attention && shows_mask(id) && t.has_reasons(o.head);
  const ReasonMatrix* reasons = show_mask ? &t.hidden_of(o.head) : nullptr;
  v.hidden.assign(static_cast<size_t>(rows) * cols, 0);
  bool any_hidden = false;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const bool hide = !std::isfinite(m(i, j)) || (reasons && (*reasons)(i, j) != 0);
      v.hidden[static_cast<size_t>(i) * cols + j] = hide;
      any_hidden = any_hidden || hide;
    }
  v.scale = color_scale_for(id, m, o.maps);

  const int precision = std::clamp(o.precision, 0, 6);
  // Numbers only where they can be drawn (compose_matrix's rule): formatting and measuring every
  // cell of a 4096-token stage took most of a minute.
  if (o.annotate.value_or(rows <= 16 && cols <= 16)) {
    v.numbers.resize(static_cast<size_t>(rows) * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const size_t k = static_cast<size_t>(i) * cols + j;
        const bool masked_weight = v.hidden[k] && id == StageId::kWeights && std::isfinite(m(i, j));
        v.numbers[k] = masked_weight ? "0" : format_fixed(m(i, j), precision, true);
      }
  }
  if (id == StageId::kWeights && attention) {
    for (int i = 0; i < rows; ++i) {
      const bool empty = o.head < static_cast<int>(t.empty_row.size()) &&
                         i < static_cast<int>(t.empty_row[o.head].size()) && t.empty_row[o.head][i];
      double sum = 0;
      for (int j = 0; j < cols; ++j)
        if (!v.hidden[static_cast<size_t>(i) * cols + j]) sum += m(i, j);
      v.row_notes.push_back(empty ? "Σ = 0 (all hidden)"
                                  : "Σ = " + format_fixed(sum, precision, true));
    }
  }

  // Scores and scaled scores are computed for every cell; the mask applies from "masked" on.
  const std::string mask_text = attention && shows_mask(id) ? mask_summary(t.mask) : "";
  v.title = step.title.empty() ? stage_info(id).title : step.title;
  v.formula = step.formula;
  std::string note;
  const size_t paren = v.formula.find("   (");
  if (paren != std::string::npos) {
    note = v.formula.substr(paren + 4);
    if (!note.empty() && note.back() == ')') note.pop_back();
    v.formula = v.formula.substr(0, paren);
  }
  const std::string shape =
      std::to_string(rows) + " " + noun_rows + " × " + std::to_string(cols) + " " + noun_cols;
  v.subtitle = join({head_text, t.name, shape, mask_text, note}, " · ");
  if (any_hidden) {
    if (id == StageId::kWeights)
      v.hidden_legend = "hidden by the mask: −∞ before the softmax, so weight 0";
    else if (id == StageId::kMasked)
      v.hidden_legend = "hidden by the mask: set to −∞, so its weight will be 0";
    else
      v.hidden_legend = "not a finite number (−∞)";
  }
  return v;
}

}  // namespace attn
