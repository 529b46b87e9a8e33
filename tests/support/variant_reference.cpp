// The variants of cli.md in double precision, loop by loop from the contract's formulas.
#include "variant_reference.h"

#include <cmath>
#include <limits>

namespace attn::test {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

RefMat zeros(int r, int c) {
  RefMat m;
  m.rows = r;
  m.cols = c;
  m.a.assign(static_cast<size_t>(r) * c, 0.0);
  return m;
}

RefMat from(const Matrix& x) {
  RefMat m = zeros(static_cast<int>(x.rows()), static_cast<int>(x.cols()));
  for (int i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.cols; ++j) m(i, j) = x(i, j);
  return m;
}

RefMat product(const RefMat& a, const RefMat& b) {  // a·b
  RefMat c = zeros(a.rows, b.cols);
  for (int i = 0; i < a.rows; ++i)
    for (int j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int t = 0; t < a.cols; ++t) s += a(i, t) * b(t, j);
      c(i, j) = s;
    }
  return c;
}

}  // namespace

VariantRef reference_variants(const AttentionProblem& p) {
  const VariantSpec& var = p.options.variants;
  const int H = p.input.num_heads(), H_kv = p.input.num_kv_heads(), n_q = p.input.n_q();
  // Visibility and the scaled scores plus bias from the plain reference (without the variants).
  AttentionProblem plain = p;
  plain.options.variants = {};
  const RefResult base = reference_attention(plain);

  VariantRef r;
  std::vector<RefMat> keys, values;
  for (int g = 0; g < H_kv; ++g) {
    RefMat k = from(p.input.k[static_cast<size_t>(g)]), v = from(p.input.v[static_cast<size_t>(g)]);
    if (var.linformer.enabled()) {
      const auto pick = [g](const HeadStack& s) {
        return from(s.size() == 1 ? s[0] : s[static_cast<size_t>(g)]);
      };
      k = product(pick(var.linformer.e), k);
      v = product(pick(var.linformer.f), v);
      r.k_proj.push_back(k);
      r.v_proj.push_back(v);
    }
    keys.push_back(k);
    values.push_back(v);
  }
  const int n_k = keys[0].rows;
  const double scale = p.options.scale ? *p.options.scale : 1.0 / std::sqrt(double(p.input.d_k()));
  const double T = p.options.temperature;
  const int group = H / H_kv;
  for (int h = 0; h < H; ++h) {
    const RefMat& K = keys[static_cast<size_t>(h / group)];
    const RefMat Q = from(p.input.q[static_cast<size_t>(h)]);
    RefMat sc = zeros(n_q, n_k), sd = zeros(n_q, n_k), S = zeros(n_q, n_k);
    std::vector<std::vector<bool>> vis(static_cast<size_t>(n_q),
                                       std::vector<bool>(static_cast<size_t>(n_k), true));
    for (int i = 0; i < n_q; ++i)
      for (int j = 0; j < n_k; ++j) {
        double dot = 0;
        for (int a = 0; a < Q.cols; ++a) dot += Q(i, a) * K(j, a);
        sc(i, j) = dot;
        sd(i, j) = dot * scale;
        S(i, j) = sd(i, j);
        if (!var.linformer.enabled()) {
          // The plain reference's masked cell: scaled + bias, or −∞ where hidden.
          const double m = base.masked[static_cast<size_t>(h)](i, j);
          vis[static_cast<size_t>(i)][static_cast<size_t>(j)] = std::isfinite(m);
          if (!p.options.mask.bias.empty()) {
            const Matrix& b = p.options.mask.bias.size() == 1
                                  ? p.options.mask.bias[0]
                                  : p.options.mask.bias[static_cast<size_t>(h)];
            S(i, j) += b(i, j);
          }
        }
      }
    auto visible = [&](int i, int j) {
      return bool(vis[static_cast<size_t>(i)][static_cast<size_t>(j)]);
    };
    RefMat masked = zeros(n_q, n_k);
    if (!var.multi_token.kq_conv.empty()) {
      RefMat before = zeros(n_q, n_k);
      const Matrix& th = var.multi_token.kq_conv.size() == 1
                             ? var.multi_token.kq_conv[0]
                             : var.multi_token.kq_conv[static_cast<size_t>(h)];
      const int c_q = static_cast<int>(th.rows()), c_k = static_cast<int>(th.cols());
      for (int i = 0; i < n_q; ++i)
        for (int j = 0; j < n_k; ++j) {
          before(i, j) = visible(i, j) ? S(i, j) : kNegInf;
          double c = 0;
          for (int a = 0; a < c_q; ++a)
            for (int b = 0; b < c_k; ++b) {
              const int ii = i - a, jj = j - b + c_k / 2;
              if (ii < 0 || ii >= n_q || jj < 0 || jj >= n_k || !visible(ii, jj)) continue;
              c += double(th(a, b)) * S(ii, jj);
            }
          masked(i, j) = visible(i, j) ? c : kNegInf;
        }
      r.pre_conv.push_back(before);
    } else {
      for (int i = 0; i < n_q; ++i)
        for (int j = 0; j < n_k; ++j) masked(i, j) = visible(i, j) ? S(i, j) : kNegInf;
    }
    RefMat w = zeros(n_q, n_k);
    for (int i = 0; i < n_q; ++i) {
      double mx = kNegInf;
      for (int j = 0; j < n_k; ++j) mx = std::max(mx, masked(i, j) / T);
      if (mx == kNegInf) continue;  // every key hidden: zeros
      double sum = 0;
      for (int j = 0; j < n_k; ++j) sum += visible(i, j) ? std::exp(masked(i, j) / T - mx) : 0.0;
      for (int j = 0; j < n_k; ++j)
        w(i, j) = visible(i, j) ? std::exp(masked(i, j) / T - mx) / sum : 0.0;
    }
    r.scores.push_back(sc);
    r.scaled.push_back(sd);
    r.masked.push_back(masked);
    r.weights.push_back(w);
  }
  if (!var.multi_token.head_mix.empty()) {
    r.pre_mix = r.weights;
    const int c = static_cast<int>(var.multi_token.head_mix[0].rows());
    for (int h = 0; h < H; ++h) {
      const int g = h / c, a = h % c;
      RefMat m = zeros(n_q, n_k);
      for (int b = 0; b < c; ++b)
        for (int i = 0; i < n_q; ++i)
          for (int j = 0; j < n_k; ++j)
            m(i, j) += double(var.multi_token.head_mix[static_cast<size_t>(g)](a, b)) *
                       r.pre_mix[static_cast<size_t>(g * c + b)](i, j);
      r.weights[static_cast<size_t>(h)] = m;
    }
  }
  for (int h = 0; h < H; ++h)
    r.output.push_back(
        product(r.weights[static_cast<size_t>(h)], values[static_cast<size_t>(h / group)]));
  return r;
}

}  // namespace attn::test
