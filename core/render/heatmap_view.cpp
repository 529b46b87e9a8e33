// Builds the HeatmapView of a trace stage: picks the head's matrix, labels rows and columns,
// finds masked cells, formats numbers and row sums, and sets the colour scale.
#include "render/heatmap_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/format.h"
#include "render/colormap.h"
#include "render/raster_text.h"

namespace attn {
namespace {

bool is_attention_step(const std::string& id) {
  return id == "scores" || id == "scaled" || id == "masked" || id == "weights";
}
bool is_key_side_step(const std::string& id) { return id == "k" || id == "v" || id == "x_kv"; }

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
  std::vector<uint32_t> cps = decode_utf8(s);
  if (cps.size() <= max_chars) return s;
  std::string out;
  size_t i = 0, count = 0;
  while (i < s.size() && count < max_chars - 1) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    out += s.substr(i, len);
    i += len;
    ++count;
  }
  return out + "…";
}

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
  int n = static_cast<int>(s.heads.size());
  if (n == t.num_heads) return head;
  if (n == t.num_kv_heads && head < static_cast<int>(t.kv_head_of.size()))
    return t.kv_head_of[head];
  return std::min(head, n - 1);
}

// Round tick values inside [lo, hi]: the step of 1, 2, 2.5 or 5 × 10^k that gives closest to five.
std::vector<double> nice_ticks(double lo, double hi, int& decimals) {
  double mag = std::pow(10.0, std::floor(std::log10((hi - lo) / 4.0)));
  double best_step = mag;
  int best_miss = 1 << 30;
  for (double scale : {0.5, 1.0}) {
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
      double step = m * mag * scale;
      int count = static_cast<int>(std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9)) + 1;
      int miss = std::abs(count - 5) * 2 + (m == 2.5 ? 1 : 0);  // 2.5 needs an extra decimal
      if (count >= 3 && count <= 5 && miss < best_miss) {
        best_miss = miss;
        best_step = step;
      }
    }
  }
  double step = best_step;
  decimals = 0;
  while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) -
                                   std::round(step * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && ticks.size() < 20;
       ++k)
    ticks.push_back(std::fabs(k) < 1e-12 ? 0.0 : k * step);
  return ticks;
}

}  // namespace

HeatmapView make_heatmap_view(const AttentionTrace& t, const HeatmapOptions& o) {
  HeatmapView v;
  v.step = t.find(o.step);
  v.index = matrix_index_for(t, *v.step, o.head);
  v.m = &v.step->heads[static_cast<size_t>(v.index)];
  const Matrix& m = *v.m;
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const std::string& id = v.step->id;
  v.attention = is_attention_step(id) && rows == t.n_q && cols == t.n_k;

  int n = static_cast<int>(v.step->heads.size());
  if (t.num_heads > 1 && n > 1) {
    int kv =
        v.index < static_cast<int>(v.step->kv_head.size()) ? v.step->kv_head[v.index] : v.index;
    if (n == t.num_heads)
      v.head_text = "head " + std::to_string(o.head) + " (kv " + std::to_string(kv) + ")";
    else
      v.head_text =
          "kv head " + std::to_string(v.index) + " (used by head " + std::to_string(o.head) + ")";
  }

  // Labels: tokens where the rows or columns are tokens, dimension indices otherwise.
  bool key_rows = is_key_side_step(id);
  const auto& row_tokens = key_rows ? t.key_tokens : t.query_tokens;
  for (int i = 0; i < rows; ++i)
    v.row_labels.push_back(static_cast<int>(row_tokens.size()) == rows ? shorten(row_tokens[i], 16)
                                                                       : std::to_string(i));
  bool concat = id == "concat" && t.num_heads > 1 && t.d_v > 0 && cols == t.num_heads * t.d_v;
  for (int j = 0; j < cols; ++j)
    v.col_labels.push_back(concat
                               ? "h" + std::to_string(j / t.d_v) + " d" + std::to_string(j % t.d_v)
                           : v.attention && static_cast<int>(t.key_tokens.size()) == cols
                               ? shorten(t.key_tokens[j], 16)
                               : "d" + std::to_string(j));
  if (v.attention) {
    v.row_axis = "queries ↓";
    v.col_axis = "keys →";
    v.noun_rows = "queries";
    v.noun_cols = "keys";
  } else {
    v.row_axis = key_rows ? "keys ↓" : (id == "x" ? "tokens ↓" : "queries ↓");
    v.noun_rows = key_rows ? "keys" : (id == "x" ? "tokens" : "queries");
    v.col_axis = "dimensions →";
    v.noun_cols = "dimensions";
  }

  // Masked cells: hidden by the mask in the masked and weights stages; any value that is not a
  // finite number (−∞ from a bias) is drawn the same way.
  bool show_mask = v.attention && (id == "masked" || id == "weights") &&
                   o.head < static_cast<int>(t.hidden.size());
  v.hidden.assign(static_cast<size_t>(rows) * cols, 0);
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      double x = m(i, j);
      bool hide = !std::isfinite(x) || (show_mask && t.hidden[o.head](i, j) != 0);
      v.hidden[static_cast<size_t>(i) * cols + j] = hide;
      v.any_hidden = v.any_hidden || hide;
      if (!hide) {
        mn = std::min(mn, x);
        mx = std::max(mx, x);
      }
    }
  bool any_finite = mn <= mx;
  v.colormap = o.colormap.empty() ? default_colormap_for(id, any_finite ? mn : 0.0) : o.colormap;
  const ValueRange range = stage_value_range(id, cols, is_diverging(v.colormap), mn, mx);
  v.lo = range.lo;
  v.hi = range.hi;
  v.ticks = nice_ticks(v.lo, v.hi, v.tick_decimals);

  int precision = std::clamp(o.precision, 0, 6);
  v.numbers.resize(static_cast<size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      size_t k = static_cast<size_t>(i) * cols + j;
      bool masked_weight = v.hidden[k] && id == "weights" && std::isfinite(m(i, j));
      v.numbers[k] = masked_weight ? "0" : format_fixed(m(i, j), precision, true);
    }
  if (id == "weights" && v.attention) {
    for (int i = 0; i < rows; ++i) {
      bool empty = o.head < static_cast<int>(t.empty_row.size()) &&
                   i < static_cast<int>(t.empty_row[o.head].size()) && t.empty_row[o.head][i];
      double sum = 0;
      for (int j = 0; j < cols; ++j)
        if (!v.hidden[static_cast<size_t>(i) * cols + j]) sum += m(i, j);
      v.sums.push_back(empty ? "Σ = 0 (all hidden)" : "Σ = " + format_fixed(sum, precision, true));
    }
  }

  v.name = t.name;
  // Scores and scaled scores are computed for every cell; the mask applies from "masked" on.
  if (v.attention && (id == "masked" || id == "weights")) v.mask_text = mask_summary(t.mask);
  v.title = v.step->title.empty() ? id : v.step->title;
  v.formula = v.step->formula;
  size_t paren = v.formula.find("   (");
  if (paren != std::string::npos) {
    v.note = v.formula.substr(paren + 4);
    if (!v.note.empty() && v.note.back() == ')') v.note.pop_back();
    v.formula = v.formula.substr(0, paren);
  }
  std::string shape =
      std::to_string(rows) + " " + v.noun_rows + " × " + std::to_string(cols) + " " + v.noun_cols;
  v.subtitle = join({v.head_text, v.name, shape, v.mask_text, v.note}, " · ");
  if (v.any_hidden) {
    if (id == "weights")
      v.legend = "hidden by the mask: −∞ before the softmax, so weight 0";
    else if (id == "masked")
      v.legend = "hidden by the mask: set to −∞, so its weight will be 0";
    else
      v.legend = "not a finite number (−∞)";
  }
  return v;
}

}  // namespace attn
