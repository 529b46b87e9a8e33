// Stage-change animations and edit highlights as data (see stage_motion.h).
#include "gui/model/stage_motion.h"

#include <algorithm>
#include <cmath>

#include "attention/format.h"

namespace attn {
namespace {

const Matrix* matrix_of(const AttentionTrace& t, StageId step, int head) {
  const TraceStep* s = t.find(step);
  if (!s || s->num_heads() == 0) return nullptr;
  return &t.head(*s, std::clamp(head, 0, s->num_heads() - 1));
}

// Rows start one after another: row i moves during its own part of [0, 1].
std::vector<float> staggered(int rows, float p, float stagger) {
  std::vector<float> out(static_cast<size_t>(rows), std::clamp(p, 0.0f, 1.0f));
  if (rows <= 1) return out;
  for (int i = 0; i < rows; ++i) {
    const float start = stagger * i / (rows - 1);
    out[static_cast<size_t>(i)] = std::clamp((p - start) / (1.0f - stagger), 0.0f, 1.0f);
  }
  return out;
}

bool hidden_at(const AttentionTrace& t, int head, int i, int j) {
  if (head < 0 || head >= t.num_heads || !t.has_reasons(head)) return false;
  const ReasonMatrix& r = t.hidden_of(head);
  return i < r.rows() && j < r.cols() && r(i, j) != 0;
}

}  // namespace

float StageTransition::progress(double now) const {
  if (hold >= 0) return std::min(hold, 1.0f);
  if (start < 0 || duration <= 0) return 1.0f;
  const float x = static_cast<float>(std::clamp((now - start) / duration, 0.0, 1.0));
  return x * x * (3 - 2 * x);
}

bool stage_change_animates(StageId from, StageId to) {
  static const StageId kSteps[][2] = {
      {StageId::kInputs, StageId::kScores},   {StageId::kScores, StageId::kScaled},
      {StageId::kScaled, StageId::kMasked},   {StageId::kMasked, StageId::kWeights},
      {StageId::kWeights, StageId::kOutput},  {StageId::kOutput, StageId::kConcat},
      {StageId::kConcat, StageId::kProjected}};
  for (const auto& s : kSteps)
    if (from == s[0] && to == s[1]) return true;
  return false;
}

double stage_change_seconds(StageId from, StageId to) {
  (void)from;
  return to == StageId::kWeights || to == StageId::kOutput ? 1.1 : 0.7;
}

bool animate_stage(const AttentionTrace& t, StageId from, StageId to, int head, float p,
                   AnimatedFrame& out) {
  out = AnimatedFrame{};
  const Matrix* target = matrix_of(t, to, head);
  if (!target || target->size() == 0) return false;
  const int rows = static_cast<int>(target->rows()), cols = static_cast<int>(target->cols());
  p = std::clamp(p, 0.0f, 1.0f);
  out.to = *target;
  auto grow = [&](const std::string& caption) {  // cells appear row by row
    out.from = *target;
    out.value = *target;
    out.from_is_background = true;
    out.row_progress = staggered(rows, p, 0.5f);
    out.caption = caption;
    return true;
  };
  if (from == StageId::kInputs && to == StageId::kScores)
    return grow("scores = Q·Kᵀ: every query's dot product with every key");
  if (from == StageId::kOutput && to == StageId::kConcat)
    return grow("each head's output, side by side");
  if (from == StageId::kConcat && to == StageId::kProjected)
    return grow("W_O mixes the heads back together");

  const Matrix* source = matrix_of(t, from, head);
  if (!source || source->rows() != rows) return false;
  if (from == StageId::kScores && to == StageId::kScaled) {
    out.from = *source;
    out.value = *source + (*target - *source) * p;
    out.row_progress.assign(static_cast<size_t>(rows), p);
    out.caption = "every score × " + format_value(t.scale) +
                  (t.scale_overridden ? " (the chosen scale)" : " = 1/√d_k");
    return true;
  }
  if (from == StageId::kScaled && to == StageId::kMasked) {
    out.from = *source;
    out.value = *source;
    out.hatch.assign(static_cast<size_t>(rows) * cols, 0.0f);
    out.row_progress.assign(static_cast<size_t>(rows), p);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const float a = (*source)(i, j), b = (*target)(i, j);
        if (hidden_at(t, head, i, j) || !std::isfinite(b)) {
          out.hatch[static_cast<size_t>(i) * cols + j] = p;
          out.from(i, j) = a;
          out.to(i, j) = a;  // its colour fades into the hatch instead
          out.value(i, j) = p < 0.5f ? a : -INFINITY;
        } else {
          out.value(i, j) = a + (b - a) * p;  // a bias moves visible scores
        }
      }
    out.caption = "keys the mask hides get −∞";
    return true;
  }
  if (from == StageId::kMasked && to == StageId::kWeights) {
    out.from = *source;
    out.value = *target;
    out.from_on_own_scale = true;
    out.row_progress = staggered(rows, p, 0.5f);
    out.hatch.assign(static_cast<size_t>(rows) * cols, 0.0f);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const float a = (*source)(i, j), b = (*target)(i, j);
        const float r = out.row_progress[static_cast<size_t>(i)];
        if (!std::isfinite(a) || hidden_at(t, head, i, j)) {
          out.hatch[static_cast<size_t>(i) * cols + j] = 1.0f;
          out.from(i, j) = b;
          out.value(i, j) = r < 0.5f ? a : b;
        } else {
          out.value(i, j) = a + (b - a) * r;
        }
      }
    out.caption = "softmax: each row of scores becomes weights that sum to 1";
    return true;
  }
  if (from == StageId::kWeights && to == StageId::kOutput) {
    // The weighted rows of V add up key by key: after k keys, row i holds Σ_{j<k} w_ij·v_j.
    const TraceStep* vs = t.find(StageId::kV);
    if (!vs || head >= static_cast<int>(t.kv_head_of.size())) return false;
    const Matrix& v = vs->heads[static_cast<size_t>(t.kv_head_of[static_cast<size_t>(head)])];
    const Matrix& w = *source;
    if (v.cols() != cols || v.rows() != w.cols()) return false;
    const int n_k = static_cast<int>(w.cols());
    const double keys = static_cast<double>(p) * n_k;
    const int whole = std::min(n_k, static_cast<int>(std::floor(keys)));
    const double frac = whole < n_k ? keys - whole : 0.0;
    out.value = Matrix::Zero(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int c = 0; c < cols; ++c) {
        double sum = 0;
        for (int j = 0; j < whole; ++j) sum += double(w(i, j)) * v(j, c);
        if (whole < n_k) sum += frac * double(w(i, whole)) * v(whole, c);
        out.value(i, c) = static_cast<float>(sum);
      }
    if (p >= 1.0f) out.value = *target;  // the sum in the engine's order, to the last digit
    out.from = out.value;
    out.to = out.value;
    out.row_progress.assign(static_cast<size_t>(rows), 1.0f);
    const int adding = std::min(n_k - 1, whole);
    out.caption = "output = Σ w·v: adding key \"" +
                  (adding < static_cast<int>(t.key_tokens.size()) ? t.key_tokens[adding]
                                                                  : std::to_string(adding)) +
                  "\" (" + std::to_string(adding + 1) + " of " + std::to_string(n_k) + ")";
    return true;
  }
  return false;
}

void ChangeTracker::update(const AttentionTrace& t, uint64_t serial, bool edited, double now) {
  if (have_current_ && serial == serial_) return;
  size_t cells = 0;
  for (const TraceStep& s : t.steps)
    for (const Matrix& m : s.heads) cells += static_cast<size_t>(m.size());
  const bool small = cells <= kMaxCells * 8;
  if (have_current_ && edited && small) {
    before_ = std::move(current_);
    start_ = now;
  } else {
    before_ = AttentionTrace{};
    start_ = -1;
  }
  current_ = small ? t : AttentionTrace{};
  serial_ = serial;
  have_current_ = true;
}

bool ChangeTracker::changed(const TraceStep& a, const TraceStep& b, int index, int i, int j) const {
  if (index >= a.num_heads() || index >= b.num_heads()) return false;
  const Matrix& x = before_.head(a, index);
  const Matrix& y = current_.head(b, index);
  if (x.rows() != y.rows() || x.cols() != y.cols() || i >= x.rows() || j >= x.cols()) return false;
  const float u = x(i, j), w = y(i, j);
  if (std::isinf(u) || std::isinf(w)) return u != w;
  return std::fabs(u - w) > 1e-6f * std::max(1.0f, std::fabs(w));
}

float ChangeTracker::strength(StageId step, int index, int i, int j, double now) const {
  if (!active(now)) return 0.0f;
  const TraceStep* a = before_.find(step);
  const TraceStep* b = current_.find(step);
  if (!a || !b || !changed(*a, *b, index, i, j)) return 0.0f;
  const double x = (now - start_) / kSeconds;
  return static_cast<float>(std::clamp(1.0 - x * x, 0.0, 1.0));
}

int ChangeTracker::changed_cells(StageId step, int index) const {
  const TraceStep* a = before_.find(step);
  const TraceStep* b = current_.find(step);
  if (!a || !b || index >= b->num_heads()) return 0;
  const Matrix& m = current_.head(*b, index);
  int n = 0;
  for (int i = 0; i < m.rows(); ++i)
    for (int j = 0; j < m.cols(); ++j) n += changed(*a, *b, index, i, j) ? 1 : 0;
  return n;
}

}  // namespace attn
