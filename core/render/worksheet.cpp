// Worksheets and their answer keys as PDF pages (see worksheet.h): a simple top-to-bottom page
// flow of headings, paragraphs, labelled-matrix grids and monospaced arithmetic.
#include "render/worksheet.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attention/format.h"
#include "render/heatmap_view.h"
#include "render/labelled_matrix.h"

namespace attn {
namespace {

constexpr Rgb kInk{26, 26, 26}, kGrey{95, 95, 95}, kRule{170, 170, 170};
constexpr double kMargin = 50, kFooter = 24;

Font font(double size, bool bold = false, bool mono = false) {
  return Font{size, bold, mono, false};
}

std::string quoted(const std::string& token) { return "“" + token + "”"; }

// Input numbers as a hand calculation writes them: "0.2", "−0.35", "1" (up to 4 decimals).
std::string short_number(double x) {
  std::string s = format_fixed(x, 4, true);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "−0" ? "0" : s;
}

// Lays blocks out top to bottom and starts a new page when the next one does not fit.
class Flow {
 public:
  Flow(const TextEngine& text, double width, double height) : text_(text), w_(width), h_(height) {
    new_page();
  }

  double width() const { return w_ - 2 * kMargin; }
  double room() const { return h_ - kMargin - kFooter - y_; }

  void new_page() {
    pages_.push_back(ScenePage{w_, h_, {}});
    y_ = kMargin;
    if (!running_head_.empty()) {
      items().push_back(text_item(running_head_, kMargin, y_ + 10, font(10, true),
                                  TextAnchor::kStart, kGrey, "running-head"));
      y_ += 20;
    }
  }
  // A line repeated at the top of every following page (e.g. "Query “is” (continued)").
  void set_running_head(const std::string& s) { running_head_ = s; }
  // Starts a new page unless `height` fits below (or the page is still empty).
  void ensure(double height) {
    if (height > room() && y_ > kMargin + 1) new_page();
  }
  void space(double dy) { y_ += dy; }

  // `hang`: lines after the first start this much further right (numbered items).
  void paragraph(const std::string& text, const Font& f, Rgb color = kInk, double after = 6,
                 double indent = 0, const std::string& cls = "text", double hang = 0) {
    const std::string s = clip_utf8(text, kWorksheetMaxParagraphBytes);
    const double h = text_.paragraph_height(s, f, width() - indent, 1, hang);
    ensure(h);
    items().push_back(
        paragraph_item(s, kMargin + indent, y_, width() - indent, f, color, cls, hang));
    y_ += h + after;
  }
  // A numbered item ("3.  text"), wrapped lines aligned with the text after the number.
  void item(const std::string& number, const std::string& s, const Font& f, double after = 3,
            double indent = 0, const std::string& cls = "text") {
    const std::string lead = number + "  ";
    paragraph(lead + s, f, kInk, after, indent, cls, text_.width(lead, f));
  }
  // A heading kept on the same page as the first `keep` units of what follows it.
  void heading(const std::string& s, double size = 13, double before = 10, double keep = 60) {
    ensure(before + text_.paragraph_height(s, font(size, true), width()) + 4 + keep);
    y_ += before;
    paragraph(s, font(size, true), kInk, 4, 0, "heading");
  }
  // A block of items laid out from (0, 0), `h` tall, placed at the left margin plus dx.
  void block(std::vector<SceneItem> block_items, double h, double dx = 0) {
    ensure(h);
    shift_items(block_items, kMargin + dx, y_);
    auto& it = items();
    it.insert(it.end(), block_items.begin(), block_items.end());
    y_ += h;
  }
  // One line of monospaced text (worked arithmetic); wrapped, its continuation indented, when
  // it is wider than the page.
  void mono_line(const std::string& s, double size) {
    const Font f = font(size, false, true);
    if (text_.width(s, f) > width()) {
      paragraph(s, f, kInk, size * 0.32, 0, "work", text_.width("    ", f));
      return;
    }
    const double lh = size * 1.32;
    ensure(lh);
    items().push_back(text_item(s, kMargin, y_ + size * 0.93, f, TextAnchor::kStart, kInk, "work"));
    y_ += lh;
  }
  // Ruled lines to write an answer on.
  void answer_lines(int n) {
    for (int k = 0; k < n; ++k) {
      ensure(22);
      y_ += 20;
      items().push_back(
          line_item(kMargin + 16, y_, kMargin + width(), y_, kRule, 0.6, "answer-line"));
    }
    y_ += 8;
  }

  // The pages with a footer on each: `left` and "page k of n".
  std::vector<ScenePage> finish(const std::string& left, double size = 8.5) {
    const Font small = font(size);
    const size_t n = pages_.size();
    for (size_t k = 0; k < n; ++k) {
      auto& it = pages_[k].items;
      const double y = h_ - kMargin + 10;
      it.push_back(line_item(kMargin, y - 14, w_ - kMargin, y - 14, {215, 215, 215}, 0.6, "rule"));
      it.push_back(text_item(left, kMargin, y, small, TextAnchor::kStart, kGrey, "footer"));
      it.push_back(text_item("page " + std::to_string(k + 1) + " of " + std::to_string(n),
                             w_ - kMargin, y, small, TextAnchor::kEnd, kGrey, "footer"));
    }
    return pages_;
  }

  std::vector<SceneItem>& items() { return pages_.back().items; }

 private:
  const TextEngine& text_;
  double w_, h_;
  double y_ = 0;
  std::vector<ScenePage> pages_;
  std::string running_head_;
};

// What the worksheet works on: one head's matrices and labels.
struct Work {
  const AttentionTrace* t = nullptr;
  int head = 0, kv = 0;
  const Matrix *q = nullptr, *k = nullptr, *v = nullptr;
  const Matrix *scores = nullptr, *scaled = nullptr, *masked = nullptr, *weights = nullptr,
               *output = nullptr;
  std::vector<std::string> queries, keys;
  bool any_hidden = false, has_bias = false;
  std::vector<uint8_t> hidden;  // (n_q, n_k) row-major
  int n_q = 0, n_k = 0;

  bool is_hidden(int i, int j) const { return hidden[static_cast<size_t>(i) * n_k + j] != 0; }
};

std::string label(const std::vector<std::string>& tokens, int i) {
  if (i < static_cast<int>(tokens.size()) && !tokens[i].empty()) {
    std::string s = clip_utf8(tokens[i], kWorksheetMaxTokenBytes);
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return s;
  }
  return std::to_string(i);
}

Work work_of(const AttentionTrace& t, int head) {
  Work w;
  w.t = &t;
  w.head = head;
  w.kv = t.kv_head_of.empty() ? 0 : t.kv_head_of[static_cast<size_t>(head)];
  auto pick = [&](StageId id) {
    const TraceStep& s = t.step(id);
    return &t.head(s, matrix_index_for(t, s, head));
  };
  w.q = pick(StageId::kQ);
  w.k = pick(StageId::kK);
  w.v = pick(StageId::kV);
  w.scores = pick(StageId::kScores);
  w.scaled = pick(StageId::kScaled);
  w.masked = pick(StageId::kMasked);
  w.weights = pick(StageId::kWeights);
  w.output = pick(StageId::kOutput);
  w.n_q = static_cast<int>(w.scores->rows());
  w.n_k = static_cast<int>(w.scores->cols());
  for (int i = 0; i < w.n_q; ++i) w.queries.push_back(label(t.query_tokens, i));
  for (int j = 0; j < w.n_k; ++j) w.keys.push_back(label(t.key_tokens, j));
  w.hidden.assign(static_cast<size_t>(w.n_q) * w.n_k, 0);
  for (int i = 0; i < w.n_q; ++i)
    for (int j = 0; j < w.n_k; ++j) {
      const bool h = (t.has_reasons(head) && t.hidden_of(head)(i, j) != 0) ||
                     !std::isfinite((*w.masked)(i, j));
      w.hidden[static_cast<size_t>(i) * w.n_k + j] = h;
      w.any_hidden = w.any_hidden || h;
    }
  w.has_bias = !t.mask.bias.empty();
  return w;
}

std::vector<std::string> dims(int n) {
  std::vector<std::string> out;
  for (int d = 0; d < n; ++d) out.push_back("d" + std::to_string(d));
  return out;
}

// A printable grid: white cells with lines, numbers (or blanks) in them, hidden cells hatched.
MatrixScene grid(const TextEngine& text, const Matrix& m, const std::vector<std::string>& rows,
                 const std::vector<std::string>& cols, const std::string& row_axis,
                 const std::string& col_axis, const std::vector<std::string>& numbers, int cell,
                 const std::vector<uint8_t>& hidden = {},
                 const std::vector<std::string>& notes = {}) {
  LabelledMatrix lm;
  lm.values = m;
  lm.row_labels = rows;
  lm.col_labels = cols;
  lm.row_axis = row_axis;
  lm.col_axis = col_axis;
  lm.numbers = numbers;
  lm.hidden = hidden;
  lm.row_notes = notes;
  lm.plain = true;
  lm.color_bar = false;
  lm.scale = {"grayscale", 0, 1};
  MatrixStyle style;
  style.cell = cell;
  style.margin = 0;
  style.scale = 0.72;
  style.annotate = true;
  return compose_matrix(lm, style, text);
}

std::vector<std::string> numbers_of(const Matrix& m, int precision) {
  std::vector<std::string> out;
  for (Eigen::Index k = 0; k < m.size(); ++k)
    out.push_back(precision < 0 ? short_number(m.data()[k])
                                : format_fixed(m.data()[k], precision, true));
  return out;
}

// The numbers of an attention-shaped grid: blank (handout) or filled (key); hidden weights "0".
std::vector<std::string> stage_numbers(const Work& w, const Matrix& m, bool filled, bool weights,
                                       int precision) {
  std::vector<std::string> out(static_cast<size_t>(m.size()));
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) {
      const size_t k = static_cast<size_t>(i) * m.cols() + j;
      if (weights && w.is_hidden(i, j))
        out[k] = "0";
      else if (filled)
        out[k] = format_fixed(m(i, j), precision, true);
    }
  return out;
}

// Cell pitch so `cols` columns and the row labels fit the page's width.
int cell_for(const TextEngine& text, const Flow& flow, const std::vector<std::string>& row_labels,
             int cols, double notes_w = 0) {
  double label_w = 0;
  for (const auto& l : row_labels) label_w = std::max(label_w, text.width(l, font(11.5)));
  const double room = flow.width() - label_w - 12 - notes_w;
  return std::clamp(static_cast<int>(std::floor(room / std::max(1, cols))), 26, 58);
}

void place(Flow& flow, const MatrixScene& s) { flow.block(s.page.items, s.layout.height + 6); }

// Q, K and V side by side when they fit, else one under the other.
void input_tables(const TextEngine& text, Flow& flow, const Work& w) {
  const int d_k = static_cast<int>(w.q->cols()), d_v = static_cast<int>(w.v->cols());
  struct Table {
    std::string title;
    MatrixScene scene;
  };
  auto tables_at = [&](int cell) {
    return std::vector<Table>{
        {"Q (queries)", grid(text, *w.q, w.queries, dims(d_k), "", "", numbers_of(*w.q, -1), cell)},
        {"K (keys)", grid(text, *w.k, w.keys, dims(d_k), "", "", numbers_of(*w.k, -1), cell)},
        {"V (values)", grid(text, *w.v, w.keys, dims(d_v), "", "", numbers_of(*w.v, -1), cell)}};
  };
  const double gap = 24, title_h = 18;
  // All three in a row when they fit with cells of at least 34 (numbers stay legible); else as
  // many per row as fit with cells of 34.
  int cell = 44;
  while (cell > 34) {
    double total = -gap;
    for (const auto& t : tables_at(cell)) total += t.scene.layout.width + gap;
    if (total <= flow.width()) break;
    cell -= 2;
  }
  std::vector<Table> tables = tables_at(cell);
  std::vector<SceneItem> row;
  double x = 0, tallest = 0;
  auto flush = [&] {
    if (!row.empty()) flow.block(row, title_h + tallest + 8);
    row.clear();
    x = 0;
    tallest = 0;
  };
  for (auto& t : tables) {
    if (x > 0 && x + t.scene.layout.width > flow.width()) flush();
    row.push_back(
        text_item(t.title, x, 12, font(11.5, true), TextAnchor::kStart, kInk, "table-title"));
    shift_items(t.scene.page.items, x, title_h);
    row.insert(row.end(), t.scene.page.items.begin(), t.scene.page.items.end());
    x += t.scene.layout.width + gap;
    tallest = std::max(tallest, static_cast<double>(t.scene.layout.height));
  }
  flush();
}

std::string scale_text(const AttentionTrace& t, int precision) {
  if (t.scale_overridden) return "× " + format_fixed(t.scale, precision, true);
  const double root = std::sqrt(static_cast<double>(t.d_k));
  const std::string d = std::to_string(t.d_k);
  if (root == std::round(root)) return "÷ √" + d + " = " + format_fixed(root, 0);
  return "÷ √" + d + " (√" + d + " ≈ " + format_fixed(root, precision, true) + ")";
}

std::string temperature_text(const AttentionTrace& t) {
  return t.temperature == 1.0f ? "" : " ÷ T";
}

// A query whose weights are worth asking about: the first of those that see the most keys (in a
// causal scenario the last query, which sees them all).
int star_query(const Work& w) {
  int best = 0, best_n = -1;
  for (int i = 0; i < w.n_q; ++i) {
    int n = 0;
    for (int j = 0; j < w.n_k; ++j) n += !w.is_hidden(i, j);
    if (n > best_n) {
      best = i;
      best_n = n;
    }
  }
  return best;
}

int top_key(const Work& w, int i) {
  int best = 0;
  for (int j = 1; j < w.n_k; ++j)
    if ((*w.weights)(i, j) > (*w.weights)(i, best)) best = j;
  return best;
}

struct Question {
  std::string ask, answer;
};

std::vector<Question> questions(const Work& w, int precision) {
  const AttentionTrace& t = *w.t;
  std::vector<Question> out;
  const int i = star_query(w), j = top_key(w, i);
  const std::string qi = quoted(w.queries[i]);
  out.push_back({"Which key does " + qi + " attend to most? Give its weight.",
                 quoted(w.keys[j]) + ", with weight " +
                     format_fixed((*w.weights)(i, j), precision, true) + " (the largest of row " +
                     qi + ")."});
  double sum = 0;
  for (int c = 0; c < w.n_k; ++c) sum += w.is_hidden(i, c) ? 0.0 : (*w.weights)(i, c);
  out.push_back(
      {"Add up the weights in the row of " + qi + ". What do you get, and why must it be so?",
       "1 (here " + format_fixed(sum, precision, true) +
           "). The softmax divides each exponential by the sum of the row's "
           "exponentials, so the weights of a row always add up to 1."});
  if (!t.scale_overridden)
    out.push_back(
        {"Why are the scores divided by √d_k = √" + std::to_string(t.d_k) + " before the softmax?",
         "A dot product adds d_k products, so its spread grows with d_k. Dividing by √d_k keeps "
         "the scores in the same range whatever the dimension, so the softmax does not saturate "
         "(one weight near 1 and the others near 0) and still spreads attention."});
  if (w.any_hidden) {
    int r = 0;
    for (int a = 0; a < w.n_q; ++a) {
      bool some = false;
      for (int c = 0; c < w.n_k; ++c) some = some || w.is_hidden(a, c);
      if (some) {
        r = a;
        break;
      }
    }
    std::string seen, unseen;
    for (int c = 0; c < w.n_k; ++c)
      (w.is_hidden(r, c) ? unseen : seen) +=
          (w.is_hidden(r, c) ? (unseen.empty() ? "" : ", ") : (seen.empty() ? "" : ", ")) +
          quoted(w.keys[c]);
    out.push_back({"Which keys can " + quoted(w.queries[r]) +
                       " see? What happens to the others, and what weight do they get?",
                   (seen.empty() ? "None" : seen) + ". The mask (" + mask_summary(t.mask) +
                       ") hides " + unseen +
                       ": their score becomes −∞ before the softmax, and e^(−∞) = 0, so their "
                       "weight is 0."});
  }
  out.push_back(
      {"The output of " + qi + " is a mix of the rows of V. Whose value contributes most, and why?",
       "The value of " + quoted(w.keys[j]) + ": it is multiplied by the largest weight, " +
           format_fixed((*w.weights)(i, j), precision, true) + "."});
  return out;
}

void title_block(const TextEngine& text, Flow& flow, const Work& w, const WorksheetOptions& o,
                 bool key) {
  const AttentionTrace& t = *w.t;
  const std::string title =
      std::string(key ? "Answer key — " : "") + "Attention by hand: " + t.name;
  // On one line when it can be (down to 14 pt), else wrapped.
  const double size = std::clamp(20 * flow.width() / text.width(title, font(20, true)), 14.0, 20.0);
  flow.paragraph(title, font(size, true), kInk, 2, 0, "title");
  std::string sub = std::to_string(w.n_q) + (w.n_q == 1 ? " query, " : " queries, ") +
                    std::to_string(w.n_k) + (w.n_k == 1 ? " key" : " keys") +
                    ", d_k = " + std::to_string(t.d_k) + ", d_v = " + std::to_string(t.d_v);
  if (t.num_heads > 1)
    sub += " · head " + std::to_string(w.head) + " of " + std::to_string(t.num_heads);
  if (!t.mask.empty()) sub += " · " + mask_summary(t.mask);
  if (!o.variant.empty()) sub += " · " + o.variant;
  flow.paragraph(sub, font(11), kGrey, 10, 0, "subtitle");
  if (!key) {
    flow.paragraph("Name  ______________________________      Date  ______________", font(11), kInk,
                   10);
  }
}

void instructions(Flow& flow, const Work& w, int precision) {
  const AttentionTrace& t = *w.t;
  flow.paragraph(
      "Each token asks a question (its query q), offers an answer to be matched (its key k) and "
      "carries content (its value v). Attention compares every query with every key and mixes "
      "the values by how well they match. Work it out by hand, stage by stage:",
      font(11), kInk, 6);
  std::vector<std::string> steps = {
      "scores = Q·Kᵀ: score(i, j) = q_i · k_j, the sum of q_i[d] × k_j[d] over the " +
          std::to_string(t.d_k) + " dimensions.",
      "scaled = scores " + scale_text(t, precision) + ".",
  };
  if (w.has_bias) steps.push_back("masked = scaled + bias (−∞ where hidden).");
  steps.push_back(
      std::string("weights: a softmax along each row, weight(i, j) = e^(") +
      (w.has_bias ? "masked" : "scaled") + "(i, j)" + temperature_text(t) +
      ") ÷ (the sum of e^(…) over the row)." +
      (w.any_hidden ? " Hatched cells are hidden by the mask: their weight is 0." : ""));
  steps.push_back(
      "output_i = the sum over keys j of weight(i, j) × v_j: a weighted mix of the rows of V.");
  for (size_t k = 0; k < steps.size(); ++k)
    flow.item(std::to_string(k + 1) + ".", steps[k], font(11), 3, 12);
  if (t.temperature != 1.0f)
    flow.paragraph("Temperature T = " + short_number(t.temperature) + ".", font(11), kInk, 3, 12);
  flow.space(6);
}

// The stage grids: blank on the handout, filled in the key.
void stage_grids(const TextEngine& text, Flow& flow, const Work& w, bool key, int precision) {
  const AttentionTrace& t = *w.t;
  const int p = precision;
  const double notes_w = text.width("Σ = 0.00000", font(11.5)) + 12;
  const int cell = cell_for(text, flow, w.queries, std::max(w.n_k, t.d_v), notes_w);
  int n = 1;
  // Each grid under its numbered heading, the two on one page.
  auto stage = [&](const std::string& s, const MatrixScene& g) {
    flow.heading(std::to_string(n++) + ".  " + s, 12, 8, g.layout.height + 6);
    place(flow, g);
  };
  stage("Scores: score(i, j) = q_i · k_j",
        grid(text, *w.scores, w.queries, w.keys, "queries ↓", "keys →",
             stage_numbers(w, *w.scores, key, false, p), cell));
  stage("Scaled scores: scores " + scale_text(t, p),
        grid(text, *w.scaled, w.queries, w.keys, "queries ↓", "keys →",
             stage_numbers(w, *w.scaled, key, false, p), cell));
  if (w.has_bias)
    stage("Masked: scaled + bias, −∞ where hidden",
          grid(text, *w.masked, w.queries, w.keys, "queries ↓", "keys →",
               stage_numbers(w, *w.masked, key, false, p), cell, w.hidden));
  std::vector<std::string> sums;
  for (int i = 0; i < w.n_q; ++i) {
    double s = 0;
    for (int j = 0; j < w.n_k; ++j) s += w.is_hidden(i, j) ? 0.0 : (*w.weights)(i, j);
    sums.push_back(key ? "Σ = " + format_fixed(s, p, true) : "Σ = ______");
  }
  stage("Weights: softmax of each row (each row adds up to 1)",
        grid(text, *w.weights, w.queries, w.keys, "queries ↓", "keys →",
             stage_numbers(w, *w.weights, key, true, p), cell, w.hidden, sums));
  stage("Output: output_i = Σ_j weight(i, j) × v_j",
        grid(text, *w.output, w.queries, dims(t.d_v), "queries ↓", "dimensions →",
             stage_numbers(w, *w.output, key, false, p), cell));
  if (key) {
    for (int i = 0; i < w.n_q; ++i) {
      std::string line = "output_" + w.queries[i] + " = [";
      for (int d = 0; d < w.output->cols(); ++d)
        line += (d ? ", " : "") + format_fixed((*w.output)(i, d), p, false);
      flow.mono_line(line + "]", 10);
    }
    flow.space(6);
  }
}

std::string footer(const Work& w, const WorksheetOptions& o, bool key) {
  return "Attention Lab · " + std::string(key ? "answer key" : "worksheet") + " · " + w.t->name +
         (o.variant.empty() ? "" : " · " + o.variant);
}

}  // namespace

void clip_worksheet_tokens(AttentionTrace& trace) {
  for (auto* tokens : {&trace.query_tokens, &trace.key_tokens, &trace.input_key_tokens})
    for (std::string& t : *tokens) t = clip_utf8(t, kWorksheetMaxTokenBytes);
}

std::string check_worksheet(const AttentionTrace& t, const WorksheetOptions& o) {
  if (o.head < 0 || o.head >= std::max(1, t.num_heads))
    return "head: head " + std::to_string(o.head) + " is out of range; this scenario has " +
           std::to_string(std::max(1, t.num_heads)) + " head(s)";
  if (o.paper == Paper::kSlide) return "paper: a worksheet is printed on a4 or letter";
  for (StageId id : kPlainStages)
    if (!t.find(id)) return std::string("the trace has no stage '") + stage_name(id) + "'";
  // The worksheet's exercises are plain attention's: Q·Kᵀ, the mask, the softmax, ·V.
  if (t.variants.any())
    return "'" + t.name +
           "' uses Linformer or Multi-Token Attention; a worksheet covers plain attention only "
           "(explain narrates the variants)";
  const int biggest = std::max({t.n_q, t.n_k, t.d_k, t.d_v});
  if (biggest > kWorksheetMaxSize)
    return "'" + t.name + "' is too large to work by hand (" + std::to_string(t.n_q) +
           " queries, " + std::to_string(t.n_k) + " keys, d_k = " + std::to_string(t.d_k) +
           ", d_v = " + std::to_string(t.d_v) + "); a worksheet takes at most " +
           std::to_string(kWorksheetMaxSize) + " of each";
  return "";
}

namespace {

// The part both documents share: checks, the title block and the tables of Q, K and V; then
// `body` fills in the rest, and the pages get their footers and become a PDF.
using SheetBody = std::function<bool(const TextEngine&, Flow&, const Work&, std::string& error)>;
bool render_sheet(const AttentionTrace& t, const WorksheetOptions& o, bool key,
                  const SheetBody& body, std::string& bytes, std::string& error) {
  error = check_worksheet(t, o);
  if (!error.empty()) return false;
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  const auto [pw, ph] = paper_size(o.paper, false);
  Flow flow(*text, pw, ph);
  const Work w = work_of(t, o.head);
  title_block(*text, flow, w, o, key);
  if (!key) instructions(flow, w, o.precision);
  input_tables(*text, flow, w);
  if (!body(*text, flow, w, error)) return false;
  RenderOptions ro;
  ro.title = std::string(key ? "Answer key — attention" : "Attention") + " by hand: " + t.name;
  return render_pages(flow.finish(footer(w, o, key), key ? kKeyMinFont : 8.5), ImageFormat::kPdf,
                      bytes, error, ro);
}

}  // namespace

bool render_worksheet(const AttentionTrace& t, const WorksheetOptions& o, std::string& bytes,
                      std::string& error) {
  return render_sheet(
      t, o, false,
      [&o](const TextEngine& text, Flow& flow, const Work& w, std::string&) {
        flow.paragraph("Fill in the grids. Keep " + std::to_string(o.precision) +
                           " decimals; a calculator is allowed.",
                       font(10.5, false), kGrey, 2);
        stage_grids(text, flow, w, false, o.precision);
        flow.heading("Questions", 13, 10);
        int n = 1;
        for (const Question& q : questions(w, o.precision)) {
          flow.item(std::to_string(n++) + ".", q.ask, font(11), 0, 0, "question");
          flow.answer_lines(2);
        }
        return true;
      },
      bytes, error);
}

bool render_answer_key(const AttentionTrace& t, const WorksheetOptions& o,
                       const NarrateQuery& narrate, std::string& bytes, std::string& error) {
  return render_sheet(
      t, o, true,
      [&o, &narrate](const TextEngine& text, Flow& flow, const Work& w, std::string& error) {
        stage_grids(text, flow, w, true, o.precision);
        flow.heading("Answers to the questions", 13, 10);
        int n = 1;
        for (const Question& q : questions(w, o.precision)) {
          flow.item(std::to_string(n++) + ".", q.ask, font(11, true), 2, 0, "question");
          flow.paragraph(q.answer, font(11), kInk, 8, 18, "answer");
        }
        if (!narrate) return true;
        flow.new_page();
        flow.paragraph("Every step, query by query", font(16, true), kInk, 4, 0, "heading");
        flow.paragraph(
            "Each query's arithmetic written out with its numbers: the dot products term by "
            "term, the scaling, the mask, every exponential and their sum, each weight, and the "
            "weighted sum of V component by component.",
            font(10.5), kGrey, 6);
        for (int i = 0; i < w.n_q; ++i) {
          const std::string lines_i = narrate(i, error);
          if (lines_i.empty()) return false;
          const std::string head =
              "Query " + quoted(w.queries[i]) + " (row " + std::to_string(i) + ")";
          flow.heading(head, 12, 8);
          flow.set_running_head(head + " — continued");
          std::istringstream lines(lines_i);
          for (std::string line; std::getline(lines, line);) flow.mono_line(line, kKeyMinFont);
          flow.set_running_head("");
        }
        return true;
      },
      bytes, error);
}

namespace {

// Room a question's figure may take on the handout: the page's width, and this much height, so a
// figure, its question and the lines to answer on share a page.
constexpr double kFigureMaxHeight = 230;

// The figure's matrix: the model's, or the step's stage as the exporter draws it (title, labels,
// colours, numbers), with the cells its question asks about blank and marked "?".
bool figure_matrix(const SheetFigure& f, LabelledMatrix& m, std::string& error) {
  if (f.model) {
    m = *f.model;
  } else {
    const AttentionTrace& t = *f.trace;
    HeatmapOptions o;
    o.step = f.stage;
    o.head = f.head;
    o.precision = f.precision;
    error = check_heatmap_options(t, o);
    if (!error.empty()) return false;
    m = stage_matrix(t, o);
    if (f.hide_shape) m.subtitle = t.name;
  }
  // Masked cells too, as on screen: a hatched 0 would answer "what weight does it give a future
  // key?", and the hatching of a row would count the keys it may see.
  if (f.concealed.size() == static_cast<size_t>(m.values.size())) m.concealed = f.concealed;
  return true;
}

// `m` fitted to room_w × room_h (as large as fits, its cells at most `max_cell`), with any label
// that writes the answer (`tells`) left out; `w` × `h` is the size it takes.
std::vector<SceneItem> figure_items(const TextEngine& text, const LabelledMatrix& m,
                                    const std::function<bool(const std::string&)>& tells,
                                    double room_w, double room_h, int max_cell, double& w,
                                    double& h) {
  MatrixStyle style;
  style.max_cell = max_cell;
  style.margin = 0;
  double k = 1;
  MatrixScene sc = fit_labelled_matrix(m, style, room_w, room_h, text, k);
  std::vector<SceneItem> items = std::move(sc.page.items);
  if (k < 1) scale_items(items, k);
  for (SceneItem& it : items) {
    const bool words = it.kind == SceneItem::Kind::kText || it.kind == SceneItem::Kind::kParagraph;
    if (words && tells && tells(it.text)) it.text.clear();
  }
  w = k * sc.layout.width;
  h = k * sc.layout.height;
  return items;
}

// A question's figure on the handout, fitted to the page. Its items carry the class "figure-N".
bool figure_block(const TextEngine& text, Flow& flow, const SheetFigure& f, int n,
                  std::string& error) {
  LabelledMatrix m;
  if (!figure_matrix(f, m, error)) return false;
  // A long sentence's rows (a language model's head, a translation) need lines of their own:
  // taller, up to half a page, so each row keeps a label that can be read.
  const double room_h = std::clamp(110.0 + 8.5 * static_cast<double>(m.values.rows()),
                                   kFigureMaxHeight, 2 * kFigureMaxHeight);
  double w = 0, h = 0;
  std::vector<SceneItem> items = figure_items(text, m, f.tells, flow.width(), room_h, 60, w, h);
  const std::string cls = " figure-" + std::to_string(n);
  for (SceneItem& it : items) it.cls += cls;
  flow.block(std::move(items), h + 10, std::max(0.0, std::floor((flow.width() - w) / 2)));
  return true;
}

}  // namespace

bool sheet_figure_page(const SheetFigure& f, double width, double height, const TextEngine& text,
                       ScenePage& page, std::string& error) {
  if (!f.drawn()) {
    error = "the figure has nothing to draw";
    return false;
  }
  if (!(width >= 100 && height >= 100 && width <= 8192 && height <= 8192)) {
    error = "size: each side 100 to 8192";
    return false;
  }
  LabelledMatrix m;
  if (!figure_matrix(f, m, error)) return false;
  const double margin = std::round(std::min(width, height) * 0.03);
  double w = 0, h = 0;
  std::vector<SceneItem> items =
      figure_items(text, m, f.tells, width - 2 * margin, height - 2 * margin, 120, w, h);
  // Centred on a white page.
  const double dx = std::floor((width - w) / 2), dy = std::floor((height - h) / 2);
  page = ScenePage{};
  page.width = width;
  page.height = height;
  page.items.push_back(rect_item({0, 0, static_cast<int>(width), static_cast<int>(height)},
                                 {255, 255, 255}, "background"));
  shift_items(items, dx, dy);
  for (SceneItem& it : items) page.items.push_back(std::move(it));
  return true;
}

bool render_sheet_figure(const SheetFigure& f, int width, int height, ImageFormat format,
                         std::string& bytes, std::string& error) {
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  ScenePage page;
  if (!sheet_figure_page(f, width, height, *text, page, error)) return false;
  RenderOptions ro;
  ro.title = "Attention Lab";
  return render_pages({page}, format, bytes, error, ro);
}

namespace {}  // namespace

bool lesson_sheet_pages(const LessonSheet& sheet, const WorksheetOptions& o, bool key,
                        std::vector<ScenePage>& pages, std::string& error) {
  if (o.paper == Paper::kSlide) {
    error = "paper: a worksheet is printed on a4 or letter";
    return false;
  }
  if (sheet.questions.empty()) {
    error = "the lesson '" + sheet.title + "' asks no questions; a worksheet needs at least one";
    return false;
  }
  std::unique_ptr<TextEngine> text = TextEngine::create(error);
  if (!text) return false;
  const auto [pw, ph] = paper_size(o.paper, false);
  Flow flow(*text, pw, ph);
  const std::string title = std::string(key ? "Answer key — " : "") + sheet.title;
  const double size =
      std::clamp(20 * flow.width() / text->width(title, font(20, true)), 14.0, 20.0);
  flow.paragraph(title, font(size, true), kInk, 2, 0, "title");
  if (!sheet.summary.empty()) flow.paragraph(sheet.summary, font(11), kGrey, 10, 0, "subtitle");
  if (!key)
    flow.paragraph("Name  ______________________________      Date  ______________", font(11), kInk,
                   10);
  int n = 1;
  for (const SheetQuestion& q : sheet.questions) {
    flow.heading(std::to_string(n) + ".  " + q.step_title, 13, 10, 80);
    if (!q.setup.empty()) flow.paragraph(q.setup, font(10.5), kGrey, 4, 0, "setup");
    // The key answers in words: its tables and figures would print numbers under 10 pt.
    if (q.tables && !key) {
      const AttentionTrace& t = *q.tables;
      const int biggest = std::max({t.n_q, t.n_k, t.d_k, t.d_v});
      if (biggest <= kWorksheetMaxSize && t.find(StageId::kQ) && t.find(StageId::kK) &&
          t.find(StageId::kV))
        input_tables(*text, flow, work_of(t, std::clamp(q.head, 0, std::max(0, t.num_heads - 1))));
      else
        flow.paragraph("(Q, K and V are too large to print here.)", font(10.5), kGrey, 4);
    }
    if (!key) {
      if (q.figure.drawn() && !figure_block(*text, flow, q.figure, n, error)) return false;
      if (!q.no_figure.empty()) flow.paragraph(q.no_figure, font(10.5), kGrey, 4, 0, "no-figure");
      for (const std::string& p : q.context) flow.paragraph(p, font(10.5), kInk, 4, 0, "text");
    }
    if (!q.formula.empty())
      flow.paragraph(q.formula, font(11, false, true), kInk, 6, 12, "formula");
    flow.paragraph(q.prompt, font(11, true), kInk, 4, 0, "question");
    for (size_t k = 0; k < q.options.size(); ++k)
      flow.item(std::string(1, static_cast<char>('A' + k)) + ".", q.options[k], font(11), 2, 14,
                "option");
    if (key) {
      flow.paragraph("Answer: " + q.answer, font(11, true), kInk, 3, 14, "answer");
      if (!q.explanation.empty())
        flow.paragraph(q.explanation, font(10.5), kGrey, 8, 14, "explanation");
    } else {
      flow.answer_lines(q.options.empty() ? 2 : 1);
    }
    ++n;
  }
  const std::string footer = "Attention Lab · " + std::string(key ? "answer key" : "worksheet") +
                             " · " + sheet.title + (o.variant.empty() ? "" : " · " + o.variant);
  pages = flow.finish(footer, key ? kKeyMinFont : 8.5);
  return true;
}

bool render_lesson_sheet(const LessonSheet& sheet, const WorksheetOptions& o, bool key,
                         std::string& bytes, std::string& error) {
  std::vector<ScenePage> pages;
  if (!lesson_sheet_pages(sheet, o, key, pages, error)) return false;
  RenderOptions ro;
  ro.title = std::string(key ? "Answer key — " : "") + sheet.title;
  return render_pages(pages, ImageFormat::kPdf, bytes, error, ro);
}

}  // namespace attn
