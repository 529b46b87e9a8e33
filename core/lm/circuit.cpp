// The exact split of an attention score into the parts of the key's residual stream (circuit.h).
#include "lm/circuit.h"

#include <cassert>
#include <cmath>

namespace attn::lm {

double head_score(const Config& c, const Activations& a, int layer, int head, int query, int key) {
  const int hs = c.head_size(), W = c.qkv_width();
  const float* qkv = a.qkv_at(c, layer, 0);
  const float* q = qkv + static_cast<size_t>(query) * W + static_cast<size_t>(head) * hs;
  const float* k =
      qkv + static_cast<size_t>(key) * W + c.q_dim() + static_cast<size_t>(head / c.group()) * hs;
  double s = 0;
  for (int i = 0; i < hs; ++i) s += static_cast<double>(q[i]) * k[i];
  return s / std::sqrt(static_cast<double>(hs));
}

std::vector<ScorePart> key_score_parts(const Model& m, const Activations& a, int layer, int head,
                                       int query, int key) {
  const Config& c = m.config;
  const Parameters& p = m.params;
  const int C = c.n_embd, hs = c.head_size(), T = a.T;
  assert(!c.llama_family() && "GPT-2's layer norm and c_attn only");
  assert(layer >= 0 && layer < c.n_layer && head >= 0 && head < c.n_head);
  assert(key >= 0 && key <= query && query < T);
  const size_t row = static_cast<size_t>(layer) * a.B * T + static_cast<size_t>(key);
  const double rstd = a.ln1_rstd[row];
  const float* gamma = p.ptr(kLn1W, layer);
  const float* beta = p.ptr(kLn1B, layer);
  const float* wqkv = p.ptr(kQkvW, layer);  // (C, 3C); the head's K columns start at C + head·hs
  const float* bqkv = p.ptr(kQkvB, layer);
  const float* q =
      a.qkv_at(c, layer, 0) + static_cast<size_t>(query) * 3 * C + static_cast<size_t>(head) * hs;
  const double inv = 1.0 / std::sqrt(static_cast<double>(hs));
  const size_t kcol = static_cast<size_t>(C) + static_cast<size_t>(head) * hs;

  // q_t · (v·W_K) / √hs for a C-vector v already through the layer norm's scaling.
  auto through_key = [&](const std::vector<double>& v) {
    double s = 0;
    for (int i = 0; i < hs; ++i) {
      double k = 0;
      for (int r = 0; r < C; ++r)
        k += v[static_cast<size_t>(r)] * wqkv[r * 3 * static_cast<size_t>(C) + kcol + i];
      s += q[i] * k;
    }
    return s * inv;
  };
  auto part = [&](const std::vector<double>& x) {
    double mean = 0;
    for (double v : x) mean += v;
    mean /= C;
    std::vector<double> v(static_cast<size_t>(C));
    for (int r = 0; r < C; ++r)
      v[static_cast<size_t>(r)] = (x[static_cast<size_t>(r)] - mean) * rstd * gamma[r];
    return through_key(v);
  };

  std::vector<ScorePart> out;
  const int tok = a.tokens[static_cast<size_t>(key)];
  std::vector<double> x(static_cast<size_t>(C));
  for (int r = 0; r < C; ++r)
    x[static_cast<size_t>(r)] = p.ptr(kWte)[static_cast<size_t>(tok) * C + r];
  out.push_back({"token embedding", -1, -1, part(x)});
  for (int r = 0; r < C; ++r)
    x[static_cast<size_t>(r)] = p.ptr(kWpe)[static_cast<size_t>(key) * C + r];
  out.push_back({"position", -1, -1, part(x)});
  double biases = 0;
  for (int l = 0; l < layer; ++l) {
    const size_t lrow = static_cast<size_t>(l) * a.B * T + static_cast<size_t>(key);
    const float* y = a.atty.data() + lrow * C;  // the heads' outputs side by side
    const float* wo = p.ptr(kAttProjW, l);  // (C, C): rows h·hs … h·hs + hs − 1 are head h's
    for (int h = 0; h < c.n_head; ++h) {
      for (int r = 0; r < C; ++r) {
        double s = 0;
        for (int i = 0; i < hs; ++i)
          s += static_cast<double>(y[h * hs + i]) * wo[static_cast<size_t>(h * hs + i) * C + r];
        x[static_cast<size_t>(r)] = s;
      }
      out.push_back({"L" + std::to_string(l) + "H" + std::to_string(h) + " output", l, h, part(x)});
    }
    for (int r = 0; r < C; ++r) x[static_cast<size_t>(r)] = p.ptr(kAttProjB, l)[r];
    biases += part(x);
    if (!a.fcproj.empty()) {
      const float* f = a.fcproj.data() + lrow * C;
      for (int r = 0; r < C; ++r) x[static_cast<size_t>(r)] = f[r];
      out.push_back({"L" + std::to_string(l) + " MLP", l, -1, part(x)});
    }
  }
  // ln_1's β and c_attn's K bias do not depend on x_j.
  std::vector<double> b(beta, beta + C);
  double constant = through_key(b);
  for (int i = 0; i < hs; ++i) constant += q[i] * bqkv[kcol + i] * inv;
  out.push_back({"biases", -1, -1, biases + constant});
  return out;
}

}  // namespace attn::lm
