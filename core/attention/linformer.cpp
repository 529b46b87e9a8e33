// Linformer's validation, labels, random projections and error curve.
#include "attention/linformer.h"

#include <cmath>
#include <sstream>

#include "attention/engine.h"

namespace attn {
namespace {

std::string shape_text(const Matrix& m) {
  return "(" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + ")";
}

std::string check_stack(const HeadStack& st, const char* name, int kv_heads, int n_k, int k) {
  std::ostringstream s;
  if (st.size() != 1 && static_cast<int>(st.size()) != kv_heads) {
    s << name << " has " << st.size() << " heads; expected 1 (shared) or H_kv = " << kv_heads;
    return s.str();
  }
  for (size_t g = 0; g < st.size(); ++g) {
    const Matrix& m = st[g];
    if (m.rows() < 1 || m.rows() != k || m.cols() != n_k) {
      s << name;
      if (st.size() > 1) s << " head " << g;
      s << " has shape " << shape_text(m) << "; expected (k, n_k) = (" << k << ", " << n_k
        << ") with k >= 1 and n_k the number of keys";
      return s.str();
    }
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        if (!std::isfinite(m(i, j))) {
          s << name << "[";
          if (st.size() > 1) s << g << ", ";
          s << i << ", " << j << "] is not a finite number";
          return s.str();
        }
  }
  return "";
}

}  // namespace

std::string validate_linformer(const AttentionProblem& p) {
  const LinformerSpec& l = p.options.variants.linformer;
  if (!l.enabled()) return "";
  if (l.e.empty()) return "linformer.e: missing; E and F go together";
  if (l.f.empty()) return "linformer.f: missing; E and F go together";
  const int k = std::max(1, l.k());
  for (auto e : {check_stack(l.e, "linformer.e", p.input.num_kv_heads(), p.input.n_k(), k),
                 check_stack(l.f, "linformer.f", p.input.num_kv_heads(), p.input.n_k(), k)})
    if (!e.empty()) return e;
  if (!p.options.mask.empty())
    return "linformer: masks that name key positions (causal, window, global, key_length, "
           "custom mask, bias) do not apply once the keys are projected: each of the k projected "
           "keys mixes every position";
  return "";
}

std::string virtual_key_token(int j) { return "k\xCC\x83" + std::to_string(j); }

HeadStack random_linformer_projection(int heads, int k, int n_k, uint64_t seed) {
  // SplitMix64 and Box–Muller: the same numbers on every machine and standard library.
  uint64_t state = seed;
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto uniform = [&] { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; };
  const double sd = 1.0 / std::sqrt(static_cast<double>(k));
  HeadStack out(static_cast<size_t>(heads), Matrix(k, n_k));
  for (Matrix& m : out)
    for (Eigen::Index i = 0; i < m.size(); ++i) {
      const double r = std::sqrt(-2.0 * std::log(uniform())), a = 6.283185307179586 * uniform();
      m.data()[i] = static_cast<float>(sd * r * std::cos(a));
    }
  return out;
}

std::vector<double> linformer_error_by_k(const AttentionProblem& full, const std::vector<int>& ks,
                                         uint64_t seed,
                                         const std::function<bool(size_t done)>& keep_going) {
  AttentionTrace base;
  compute_stages_cpu(full, base);
  const HeadStack& o_full = base.step(StageId::kOutput).heads;
  std::vector<double> out;
  for (int k : ks) {
    AttentionProblem p = full;
    p.options.variants.linformer.e = random_linformer_projection(1, k, full.input.n_k(), seed);
    p.options.variants.linformer.f = random_linformer_projection(1, k, full.input.n_k(), seed + 1);
    AttentionTrace t;
    compute_stages_cpu(p, t);
    const HeadStack& o = t.step(StageId::kOutput).heads;
    double sum = 0;
    long long cells = 0;
    for (size_t h = 0; h < o.size(); ++h) {
      sum += (o[h] - o_full[h]).cwiseAbs().cast<double>().sum();
      cells += o[h].size();
    }
    out.push_back(cells ? sum / static_cast<double>(cells) : 0.0);
    if (keep_going && !keep_going(out.size())) break;
  }
  return out;
}

}  // namespace attn
