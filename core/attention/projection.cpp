// Multi-head attention from embeddings: project X into per-head Q/K/V, and after the attention
// stages concatenate the heads and apply W_O, recording both equivalent forms of the output.
#include <algorithm>
#include <cmath>

#include "attention/scenario.h"

namespace attn {

AttentionProblem to_problem(const Scenario& s) {
  AttentionProblem p;
  p.options = s.options;
  if (!s.use_projection) {
    p.input = s.qkv;
    return p;
  }
  const ProjectionSpec& pr = s.projection;
  const Matrix& x_kv = pr.x_kv.size() ? pr.x_kv : pr.x;
  for (const Matrix& w : pr.w_q) p.input.q.push_back(pr.x * w);  // (n_q, d_k)
  for (const Matrix& w : pr.w_k) p.input.k.push_back(x_kv * w);  // (n_k, d_k)
  for (const Matrix& w : pr.w_v) p.input.v.push_back(x_kv * w);  // (n_k, d_v)
  return p;
}

Matrix rope_angles(const RopeInputs& r, int rows, int position0) {
  const auto pairs = static_cast<Eigen::Index>(r.inv_freq.size());
  Matrix a(rows, pairs);
  for (int p = 0; p < rows; ++p)
    for (Eigen::Index i = 0; i < pairs; ++i)
      a(p, i) = static_cast<float>((position0 + p) * r.inv_freq[static_cast<size_t>(i)]);
  return a;
}

std::vector<double> rope_rotated(const Matrix& m, int row, int pos, const std::vector<double>& f) {
  const int d = static_cast<int>(m.cols()), half = d / 2;
  std::vector<double> y(static_cast<size_t>(d));
  for (int i = 0; i < half; ++i) {
    const double a = pos * f[static_cast<size_t>(i)], c = std::cos(a), s = std::sin(a);
    const double x0 = m(row, i), x1 = m(row, i + half);
    y[static_cast<size_t>(i)] = x0 * c - x1 * s;
    y[static_cast<size_t>(i + half)] = x1 * c + x0 * s;
  }
  return y;
}

bool rope_matches(const Scenario& s) {
  const RopeInputs& r = s.rope;
  if (s.use_projection || r.q_before.size() != s.qkv.q.size() ||
      r.k_before.size() != s.qkv.k.size())
    return false;
  auto turned = [&](const HeadStack& before, const HeadStack& after, int position0) {
    for (size_t h = 0; h < before.size(); ++h) {
      const Matrix& b = before[h];
      const Matrix& a = after[h];
      if (b.rows() != a.rows() || b.cols() != a.cols() || b.cols() % 2 != 0 ||
          static_cast<size_t>(b.cols() / 2) != r.inv_freq.size())
        return false;
      for (int row = 0; row < b.rows(); ++row) {
        const std::vector<double> y = rope_rotated(b, row, position0 + row, r.inv_freq);
        for (int i = 0; i < b.cols(); ++i)
          if (std::abs(y[static_cast<size_t>(i)] - a(row, i)) >
              1e-4 * std::max(1.0, std::abs(y[static_cast<size_t>(i)])))
            return false;
      }
    }
    return true;
  };
  return turned(r.q_before, s.qkv.q, r.q_position0) && turned(r.k_before, s.qkv.k, r.k_position0);
}

void add_rope_step(const RopeInputs& r, AttentionTrace& t) {
  t.rope = r;
  auto after_v = t.steps.begin();
  while (after_v != t.steps.end() && after_v->id != StageId::kV) ++after_v;
  if (after_v != t.steps.end()) ++after_v;
  t.steps.insert(after_v, {StageId::kRope,
                           stage_info(StageId::kRope).title,
                           "angle = p·θ_i,  θ_i = base^(−2i/d_k)",
                           {rope_angles(r, t.n_q, r.q_position0)},
                           {0}});
  t.find(StageId::kQ)->formula = "Q = RoPE(Q before, positions)";
  t.find(StageId::kK)->formula = "K = RoPE(K before, positions)";
}

void add_scenario_steps(const Scenario& s, AttentionTrace& t) {
  t.name = s.name;
  t.query_tokens = s.query_tokens;
  // With Linformer the stages' keys are the virtual keys begin_trace named; the scenario's keys
  // name the rows of K and V.
  (t.variants.linformer.enabled() ? t.input_key_tokens : t.key_tokens) = s.keys();
  if (s.rope.enabled() && rope_matches(s)) add_rope_step(s.rope, t);
  if (!s.use_projection) return;

  const ProjectionSpec& pr = s.projection;
  const int H = t.num_heads;
  std::vector<TraceStep> before;
  before.push_back({StageId::kX, stage_info(StageId::kX).title, "X", {pr.x}, {0}});
  if (pr.x_kv.size())
    before.push_back({StageId::kXKv, stage_info(StageId::kXKv).title, "X_kv", {pr.x_kv}, {0}});
  t.steps.insert(t.steps.begin(), before.begin(), before.end());
  TraceStep* q = t.find(StageId::kQ);
  q->formula = "Q_h = X·W_Q,h";
  t.find(StageId::kK)->formula = pr.x_kv.size() ? "K_g = X_kv·W_K,g" : "K_g = X·W_K,g";
  t.find(StageId::kV)->formula = pr.x_kv.size() ? "V_g = X_kv·W_V,g" : "V_g = X·W_V,g";

  const HeadStack& out = t.step(StageId::kOutput).heads;
  const int d_v = t.d_v;
  Matrix concat(out[0].rows(), H * d_v);  // (n_q, H·d_v), or the trace's rows (first_row)
  for (int h = 0; h < H; ++h) concat.middleCols(h * d_v, d_v) = out[h];
  t.steps.push_back({StageId::kConcat,
                     stage_info(StageId::kConcat).title,
                     "concat = [O_0 | O_1 | … | O_(H−1)]",
                     {concat},
                     {0}});
  if (pr.w_o.size() == 0) return;

  RowVector b = pr.b_o.size() ? pr.b_o : RowVector::Zero(pr.w_o.cols());
  Matrix projected = concat * pr.w_o;  // (n_q, d_out)
  projected.rowwise() += b;
  TraceStep contrib{StageId::kHeadContrib,
                    stage_info(StageId::kHeadContrib).title,
                    "contrib_h = O_h·W_O[h·d_v:(h+1)·d_v]   (Σ_h contrib_h + b_O = projected)",
                    {},
                    {}};
  for (int h = 0; h < H; ++h) {
    contrib.heads.push_back(out[h] * pr.w_o.middleRows(h * d_v, d_v));
    contrib.kv_head.push_back(t.kv_head_of[h]);
  }
  // The two forms of Elhage et al., 2021 (concatenate then project; project per head then sum)
  // must agree.
  Matrix summed = Matrix::Zero(projected.rows(), projected.cols());
  for (const Matrix& c : contrib.heads) summed += c;
  summed.rowwise() += b;
  t.projection_form_gap = (projected - summed).cwiseAbs().maxCoeff();
  t.steps.push_back({StageId::kProjected,
                     stage_info(StageId::kProjected).title,
                     "projected = concat·W_O + b_O",
                     {projected},
                     {0}});
  t.steps.push_back(std::move(contrib));
}

}  // namespace attn
