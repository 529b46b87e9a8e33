// The staged computation of Linformer, the key–query convolution and head mixing (cli.md,
// "Variants beyond masks"), every stage stored, and their validation and labels.
#include "attention/variant_stages.h"

#include <cassert>
#include <cmath>
#include <limits>
#include <sstream>

#include "attention/engine.h"
#include "attention/format.h"
#include "attention/linformer.h"
#include "attention/mask.h"
#include "attention/multi_token.h"

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

double max_row_norm(const Matrix& m) {
  double best = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    best = std::max(best, static_cast<double>(m.row(i).cast<double>().norm()));
  return best;
}

}  // namespace

std::string validate_variants(const AttentionProblem& p) {
  for (auto e : {validate_linformer(p), validate_multi_token(p)})
    if (!e.empty()) return e;
  // The logits the variant computes must fit float32: |q·k̃| <= ‖q‖·‖E‖_∞·max‖k‖ and the
  // convolution multiplies a logit by at most Σ|θ|.
  const VariantSpec& v = p.options.variants;
  const double scale = std::abs(static_cast<double>(p.effective_scale()));
  double max_bias = 0;
  for (const Matrix& b : p.options.mask.bias)
    for (Eigen::Index i = 0; i < b.size(); ++i)
      if (std::isfinite(b.data()[i])) max_bias = std::max(max_bias, std::abs(double(b.data()[i])));
  for (int h = 0; h < p.input.num_heads(); ++h) {
    const int g = p.input.kv_head_of(h);
    double k_norm = max_row_norm(p.input.k[static_cast<size_t>(g)]);
    if (v.linformer.enabled())
      k_norm *= v.linformer.e_of(g).cwiseAbs().rowwise().sum().cast<double>().maxCoeff();
    double bound = scale * max_row_norm(p.input.q[static_cast<size_t>(h)]) * k_norm + max_bias;
    if (!v.multi_token.kq_conv.empty())
      bound *= std::max(1.0, v.multi_token.kernel_of(h).cwiseAbs().cast<double>().sum());
    bound /= static_cast<double>(p.options.temperature);
    if (!(bound < 1e38)) {
      std::ostringstream s;
      s << "logits of head " << h << " may reach " << format_value(bound)
        << " with the variant's projections or kernel, which would overflow float32; scale the "
           "inputs down or raise the temperature";
      return s.str();
    }
  }
  return "";
}

void begin_variant_trace(const AttentionProblem& p, AttentionTrace& t) {
  t.variants = p.options.variants;
  if (!t.variants.linformer.enabled()) return;
  t.input_key_tokens = t.key_tokens;
  t.n_k = t.variants.linformer.k();
  t.key_tokens.clear();
  for (int j = 0; j < t.n_k; ++j) t.key_tokens.push_back(virtual_key_token(j));
}

void compute_variant_stages_cpu(const AttentionProblem& p, AttentionTrace& t) {
  assert(p.total_query_rows == 0 && "variants are computed on whole problems");
  const VariantSpec& var = p.options.variants;
  const int H = p.input.num_heads(), H_kv = p.input.num_kv_heads(), n_q = p.input.n_q();
  const bool linformer = var.linformer.enabled();
  const bool conv = !var.multi_token.kq_conv.empty();
  const bool mix = !var.multi_token.head_mix.empty();
  const float scale = p.effective_scale();

  std::vector<int> kv_ids, head_kv;
  for (int g = 0; g < H_kv; ++g) kv_ids.push_back(g);
  for (int h = 0; h < H; ++h) head_kv.push_back(p.input.kv_head_of(h));
  auto stage = [&](StageId id, HeadStack heads, const std::vector<int>& kv) {
    TraceStep s{id, "", "", std::move(heads), kv};
    t.steps.push_back(std::move(s));
  };

  // Linformer: the k projected keys and values each query head reads.
  HeadStack keys = p.input.k, values = p.input.v;
  if (linformer) {
    for (int g = 0; g < H_kv; ++g) {
      const size_t gs = static_cast<size_t>(g);
      keys[gs] = var.linformer.e_of(g) * p.input.k[gs];
      values[gs] = var.linformer.f_of(g) * p.input.v[gs];
    }
    stage(StageId::kKProj, keys, kv_ids);
    stage(StageId::kVProj, values, kv_ids);
  }
  const int n_k = static_cast<int>(keys[0].rows());

  HeadStack scores(static_cast<size_t>(H)), scaled(scores), pre_conv, masked(scores),
      weights(scores), output(scores);
  if (conv) pre_conv.resize(static_cast<size_t>(H));
  t.hidden.assign(static_cast<size_t>(H), ReasonMatrix());
  t.empty_row.assign(static_cast<size_t>(H), {});
  const MaskGeometry geo = MaskGeometry::of(p);
  for (int h = 0; h < H; ++h) {
    const size_t hs = static_cast<size_t>(h), g = static_cast<size_t>(head_kv[hs]);
    scores[hs] = p.input.q[hs] * keys[g].transpose();
    scaled[hs] = scores[hs] * scale;
    Matrix s = scaled[hs];
    if (const Matrix* bias = mask_for_head(p.options.mask.bias, h)) s += *bias;
    ReasonMatrix& r = t.hidden[hs];
    r = ReasonMatrix::Zero(n_q, n_k);
    if (!linformer) fill_reason_rows(p.options.mask, geo, h, 0, 0, r);
    if (conv) {
      // S0 = S where visible, 0 where hidden; C = θ ∗ S0; −∞ where hidden again.
      Matrix s0 = s;
      Matrix& before = pre_conv[hs];
      before = s;
      for (Eigen::Index k = 0; k < s.size(); ++k)
        if (r.data()[k]) {
          s0.data()[k] = 0.0f;
          before.data()[k] = kNegInf;
        }
      s = kq_convolve(s0, var.multi_token.kernel_of(h));
    }
    for (Eigen::Index k = 0; k < s.size(); ++k)
      if (r.data()[k]) s.data()[k] = kNegInf;
    masked[hs] = std::move(s);
    std::vector<bool> empty;
    masked_softmax_rows(masked[hs], r, p.options.temperature, weights[hs], empty);
    t.empty_row[hs] = std::move(empty);
  }
  stage(StageId::kScores, std::move(scores), head_kv);
  stage(StageId::kScaled, std::move(scaled), head_kv);
  if (conv) stage(StageId::kPreConv, std::move(pre_conv), head_kv);
  stage(StageId::kMasked, std::move(masked), head_kv);
  if (mix) {
    HeadStack mixed = mix_heads(weights, var.multi_token.head_mix);
    stage(StageId::kPreMix, std::move(weights), head_kv);
    weights = std::move(mixed);
  }
  for (int h = 0; h < H; ++h) {
    const size_t hs = static_cast<size_t>(h);
    output[hs] = weights[hs] * values[static_cast<size_t>(head_kv[hs])];
  }
  stage(StageId::kWeights, std::move(weights), head_kv);
  stage(StageId::kOutput, std::move(output), head_kv);
}

void label_variant_stages(const AttentionProblem& p, AttentionTrace& t) {
  const VariantSpec& v = p.options.variants;
  // The title as the variant shows it (the convolved scores, the mixed weights).
  auto set = [&](StageId id, const std::string& formula) {
    if (TraceStep* s = t.find(id)) {
      s->title = stage_info(id, t).title;
      s->formula = formula;
    }
  };
  if (v.linformer.enabled()) {
    const std::string k = std::to_string(v.linformer.k());
    set(StageId::kKProj, "K̃ = E·K   (" + k + " virtual keys, each a mix of all n_k = " +
                             std::to_string(p.input.n_k()) + " keys)");
    set(StageId::kVProj, "Ṽ = F·V   (" + k + " virtual values)");
    set(StageId::kScores, "scores = Q·K̃ᵀ   (n_q × k)");
    set(StageId::kOutput, "output = weights·Ṽ");
  }
  if (!v.multi_token.kq_conv.empty()) {
    const Matrix& th = v.multi_token.kq_conv[0];
    const std::string shape = std::to_string(th.rows()) + " × " + std::to_string(th.cols());
    const std::string bias = p.options.mask.bias.empty() ? "scaled" : "scaled + bias";
    set(StageId::kPreConv, "S = " + bias + ", −∞ where hidden");
    set(StageId::kMasked, "masked[i, j] = Σ θ[a, b]·S[i−a, j−b+" + std::to_string(th.cols() / 2) +
                              "]   (" + shape +
                              " kernel; hidden cells count as 0), −∞ where hidden");
  }
  if (!v.multi_token.head_mix.empty()) {
    const std::string c = std::to_string(v.multi_token.mix_group_size());
    set(StageId::kPreMix, t.find(StageId::kWeights)->formula);
    set(StageId::kWeights,
        "weights_(g·c_h+a) = Σ_b M[g, a, b] · pre_mix_(g·c_h+b)   (groups of c_h = " + c +
            " heads)");
  }
}

}  // namespace attn
