// Validation at the engine's edge, and the trace's metadata, input steps and stage labels.
#include "attention/engine.h"

#include <cassert>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "attention/additive.h"
#include "attention/format.h"
#include "attention/variant_stages.h"

namespace attn {
namespace {

std::string check_finite(const HeadStack& stack, const char* name, bool allow_neg_inf = false) {
  for (size_t h = 0; h < stack.size(); ++h) {
    const Matrix& m = stack[h];
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        float x = m(i, j);
        if (std::isfinite(x) || (allow_neg_inf && std::isinf(x) && x < 0)) continue;
        std::ostringstream s;
        s << name << "[";
        if (stack.size() > 1) s << h << ", ";
        s << i << ", " << j << "] is " << format_value(x) << "; expected a finite number";
        if (allow_neg_inf) s << " or -inf";
        return s.str();
      }
  }
  return "";
}

std::string check_mask_stack(const HeadStack& stack, const char* name, int H, int n_q, int n_k) {
  if (stack.empty()) return "";
  std::ostringstream s;
  if (stack.size() != 1 && static_cast<int>(stack.size()) != H) {
    s << name << " has " << stack.size() << " heads; expected 1 or H = " << H;
    return s.str();
  }
  for (size_t h = 0; h < stack.size(); ++h)
    if (stack[h].rows() != n_q || stack[h].cols() != n_k) {
      s << name << " head " << h << " has shape (" << stack[h].rows() << ", " << stack[h].cols()
        << "); expected (n_q, n_k) = (" << n_q << ", " << n_k << ")";
      return s.str();
    }
  return "";
}

std::string shape_str(const Matrix& m) {
  std::ostringstream s;
  s << "(" << m.rows() << ", " << m.cols() << ")";
  return s.str();
}

// Finite inputs can still give logits (scale·q·k + bias) / T beyond float32, which the float
// engine would turn into inf and NaN. |q·k| <= ‖q‖·‖k‖, so a cheap bound from the largest row
// norms clears almost every problem; only when it fails is each cell bounded term by term.
std::string check_logits_fit_float(const AttentionProblem& p) {
  constexpr double kLimit = 1e38;  // below FLT_MAX (3.4e38) with room for float rounding
  const double scale = std::abs(static_cast<double>(p.effective_scale()));
  const double inv_t = 1.0 / static_cast<double>(p.options.temperature);
  double max_bias = 0;
  for (const Matrix& b : p.options.mask.bias)
    for (Eigen::Index i = 0; i < b.size(); ++i)
      if (std::isfinite(b.data()[i])) max_bias = std::max(max_bias, std::abs(double(b.data()[i])));
  if (p.options.additive) {
    // |vᵀ tanh(…)| <= Σ|v_a| whatever Q and K are; W_q q + W_k k itself only feeds the tanh,
    // which saturates instead of overflowing.
    const double bound = p.options.additive->v.cast<double>().cwiseAbs().sum();
    if ((scale * bound + max_bias) * inv_t < kLimit) return "";
    return "the additive scores (at most Σ|v| = " + format_value(bound) +
           ") times the scale, plus the bias, over T may overflow float32 (max 3.4e+38)";
  }
  auto row_norm = [](const Matrix& m, Eigen::Index i) { return m.row(i).cast<double>().norm(); };
  for (int h = 0; h < p.input.num_heads(); ++h) {
    const Matrix& Q = p.input.q[h];
    const Matrix& K = p.input.k[p.input.kv_head_of(h)];
    double max_q = 0, max_k = 0;
    for (Eigen::Index i = 0; i < Q.rows(); ++i) max_q = std::max(max_q, row_norm(Q, i));
    for (Eigen::Index j = 0; j < K.rows(); ++j) max_k = std::max(max_k, row_norm(K, j));
    if ((scale * max_q * max_k + max_bias) * inv_t < kLimit) continue;
    for (Eigen::Index i = 0; i < Q.rows(); ++i)
      for (Eigen::Index j = 0; j < K.rows(); ++j) {
        double dot = 0;
        for (Eigen::Index a = 0; a < Q.cols(); ++a) dot += std::abs(double(Q(i, a)) * K(j, a));
        const double logit = (scale * dot + max_bias) * inv_t;
        if (logit < kLimit) continue;
        std::ostringstream s;
        s << "logits (scale·q·k + bias) / T of query " << i << " and key " << j;
        if (p.input.num_heads() > 1) s << " in head " << h;
        s << " may reach " << format_value(logit)
          << ", which would overflow float32 (max 3.4e+38); scale the inputs, the scale or the "
             "bias down, or raise the temperature";
        return s.str();
      }
  }
  return "";
}

}  // namespace

std::string validate_problem(const AttentionProblem& p) {
  const AttentionInput& in = p.input;
  std::ostringstream s;
  if (in.q.empty()) return "Q has no heads";
  if (in.k.empty()) return "K has no heads";
  if (in.v.size() != in.k.size()) {
    s << "V has " << in.v.size() << " heads but K has " << in.k.size();
    return s.str();
  }
  if (in.num_heads() % in.num_kv_heads() != 0) {
    s << "Q has H = " << in.num_heads()
      << " heads, not a multiple of K/V's H_kv = " << in.num_kv_heads();
    return s.str();
  }
  const Matrix& q0 = in.q[0];
  const Matrix& k0 = in.k[0];
  const Matrix& v0 = in.v[0];
  if (q0.rows() < 1 || q0.cols() < 1) return "Q must have at least one row and one column";
  if (k0.rows() < 1) return "K must have at least one row (key)";
  if (v0.cols() < 1) return "V must have at least one column";
  for (size_t h = 0; h < in.q.size(); ++h)
    if (in.q[h].rows() != q0.rows() || in.q[h].cols() != q0.cols()) {
      s << "Q head " << h << " has shape " << shape_str(in.q[h]) << "; head 0 has "
        << shape_str(q0);
      return s.str();
    }
  for (size_t g = 0; g < in.k.size(); ++g) {
    if (in.k[g].rows() != k0.rows() || in.k[g].cols() != q0.cols()) {
      s << "K head " << g << " has shape " << shape_str(in.k[g]) << "; expected (n_k, d_k) = ("
        << k0.rows() << ", " << q0.cols() << ") (d_k from Q)";
      return s.str();
    }
    if (in.v[g].rows() != k0.rows() || in.v[g].cols() != v0.cols()) {
      s << "V head " << g << " has shape " << shape_str(in.v[g]) << "; expected (n_k, d_v) = ("
        << k0.rows() << ", " << v0.cols() << ") (n_k from K)";
      return s.str();
    }
  }
  for (auto e : {check_finite(in.q, "Q"), check_finite(in.k, "K"), check_finite(in.v, "V")})
    if (!e.empty()) return e;
  const MaskSpec& m = p.options.mask;
  const int n_q = p.full_n_q(), n_k = in.n_k();
  if (p.first_query_row < 0 || p.total_query_rows < 0 ||
      (p.total_query_rows > 0 &&
       static_cast<long long>(p.first_query_row) + in.n_q() > p.total_query_rows)) {
    s << "query rows " << p.first_query_row << ".." << p.first_query_row + in.n_q() - 1
      << " are not rows of a problem of " << p.total_query_rows << " queries";
    return s.str();
  }
  if (m.window && *m.window < 0) return "window must be >= 0";
  if (m.key_length && (*m.key_length < 0 || *m.key_length > n_k)) {
    s << "key length " << *m.key_length << " is outside 0.." << n_k << " (n_k)";
    return s.str();
  }
  for (size_t i = 0; i < m.global.size(); ++i)
    if (m.global[i] < 0 || m.global[i] >= std::max(n_q, n_k)) {
      s << "global position " << m.global[i] << " (entry " << i << ") is outside 0.."
        << std::max(n_q, n_k) - 1;
      return s.str();
    }
  for (auto e : {check_mask_stack(m.custom, "mask", in.num_heads(), in.n_q(), n_k),
                 check_mask_stack(m.bias, "bias", in.num_heads(), in.n_q(), n_k),
                 check_finite(m.custom, "mask"), check_finite(m.bias, "bias", true)})
    if (!e.empty()) return e;
  if (p.options.scale && !std::isfinite(*p.options.scale)) return "scale must be a finite number";
  if (p.options.additive) {
    const std::string e = validate_additive(*p.options.additive, in.d_k());
    if (!e.empty()) return e;
  }
  if (!(p.options.temperature > 0) || !std::isfinite(p.options.temperature))
    return "temperature must be a finite number > 0";
  if (p.options.variants.any() && p.options.additive)
    return "the additive score and the variants beyond masks (Linformer, the key–query "
           "convolution, head mixing) do not combine: those variants reshape Q·Kᵀ scores; "
           "choose one";
  if (p.options.variants.any()) return validate_variants(p);
  return check_logits_fit_float(p);
}

std::string check_trace_size(const AttentionProblem& p) {
  const long long cells =
      static_cast<long long>(p.input.num_heads()) * p.input.n_q() * p.input.n_k();
  if (cells <= kMaxTraceCells) return "";
  std::ostringstream s;
  s << "its trace would hold H·n_q·n_k = " << p.input.num_heads() << "·" << p.input.n_q() << "·"
    << p.input.n_k() << " = " << cells << " cells per stage (about " << std::fixed
    << std::setprecision(1) << static_cast<double>(cells) * 4 / 1e9 << " GB); at most "
    << kMaxTraceCells << " are traced (docs/robustness.md)";
  return s.str();
}

AttentionTrace begin_trace(const AttentionProblem& p) {
  assert(validate_problem(p).empty());
  assert(p.first_query_row == 0 && p.total_query_rows == 0 &&
         "a trace starts from the whole "
         "problem; compute_trace_rows runs the stages of a slice");
  const AttentionInput& in = p.input;
  AttentionTrace t;
  t.num_heads = in.num_heads();
  t.num_kv_heads = in.num_kv_heads();
  t.n_q = in.n_q();
  t.n_k = in.n_k();
  t.d_k = in.d_k();
  t.d_v = in.d_v();
  t.scale = p.effective_scale();
  t.temperature = p.options.temperature;
  t.scale_overridden = p.options.scale.has_value();
  t.mask = p.options.mask;
  t.additive = p.options.additive;
  for (int h = 0; h < t.num_heads; ++h) t.kv_head_of.push_back(in.kv_head_of(h));
  for (int i = 0; i < t.n_q; ++i) t.query_tokens.push_back(std::to_string(i));
  for (int j = 0; j < t.n_k; ++j) t.key_tokens.push_back(std::to_string(j));

  std::vector<int> kv_ids(t.num_kv_heads);
  for (int g = 0; g < t.num_kv_heads; ++g) kv_ids[g] = g;
  t.steps.push_back({StageId::kQ, stage_info(StageId::kQ).title, "Q", in.q, t.kv_head_of});
  t.steps.push_back({StageId::kK, stage_info(StageId::kK).title, "K", in.k, kv_ids});
  t.steps.push_back({StageId::kV, stage_info(StageId::kV).title, "V", in.v, kv_ids});
  if (p.options.variants.any()) begin_variant_trace(p, t);
  return t;
}

void label_stages(const AttentionProblem& p, AttentionTrace& t) {
  std::string scale_text =
      p.options.scale      ? "scaled = scores × s   (s = " + format_value(t.scale) + ")"
      : p.options.additive ? std::string("scaled = scores   (the additive score needs no √d_k)")
                           : "scaled = scores / √d_k   (d_k = " + std::to_string(t.d_k) + ")";
  std::string softmax_text =
      t.temperature == 1.0f
          ? "weights = softmax(masked)   (each row sums to 1)"
          : "weights = softmax(masked / T)   (T = " + format_value(t.temperature) + ")";
  const struct {
    StageId id;
    std::string formula;
  } labels[] = {
      {StageId::kScores, p.options.additive
                             ? "scores_ij = vᵀ tanh(W_q q_i + W_k k_j)   (additive, d_a = " +
                                   std::to_string(p.options.additive->v.size()) + ")"
                             : std::string("scores = Q·Kᵀ")},
      {StageId::kScaled, scale_text},
      {StageId::kMasked, p.options.mask.bias.empty() ? "masked = scaled, −∞ where hidden"
                                                     : "masked = scaled + bias, −∞ where hidden"},
      {StageId::kWeights, softmax_text},
      {StageId::kOutput, "output = weights·V"},
  };
  for (const auto& l : labels) {
    TraceStep* s = t.find(l.id);
    assert(s && "backend must produce every stage");
    s->title = stage_info(l.id).title;
    s->formula = l.formula;
  }
  if (p.options.variants.any()) label_variant_stages(p, t);
}

}  // namespace attn
