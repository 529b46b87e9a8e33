// The √d_k experiment (scaling_experiment.h): plain loops in double over seeded N(0, 1) draws.
#include "explain/scaling_experiment.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace attn {
namespace {

void add_to(Histogram& h, double x) {
  const int bins = static_cast<int>(h.counts.size());
  int b = static_cast<int>(std::floor((x + h.range) / (2 * h.range) * bins));
  h.counts[static_cast<size_t>(std::clamp(b, 0, bins - 1))]++;
}

// Softmax of `s`, its largest weight and the Frobenius norm of diag(p) − p pᵀ.
void softmax_stats(const std::vector<double>& s, std::vector<double>& p, double& max_w,
                   double& jac) {
  const double m = *std::max_element(s.begin(), s.end());
  double sum = 0;
  p.resize(s.size());
  for (size_t j = 0; j < s.size(); ++j) sum += p[j] = std::exp(s[j] - m);
  for (double& x : p) x /= sum;
  max_w = *std::max_element(p.begin(), p.end());
  double f = 0;
  for (size_t a = 0; a < p.size(); ++a)
    for (size_t b = 0; b < p.size(); ++b) {
      const double j = (a == b ? p[a] : 0.0) - p[a] * p[b];
      f += j * j;
    }
  jac = std::sqrt(f);
}

}  // namespace

std::vector<int> scaling_dims() {
  std::vector<int> d;
  for (int x = 2; x <= 1024; x *= 2) d.push_back(x);
  return d;
}

std::vector<ScalingRow> run_scaling_experiment(const ScalingRequest& r,
                                               const std::vector<int>& dims) {
  std::vector<ScalingRow> out;
  for (int d : dims) {
    // A stream per d_k, so one d_k's numbers do not depend on which others were asked for.
    std::mt19937_64 rng(r.seed * 1000003ULL + static_cast<uint64_t>(d));
    std::normal_distribution<double> nd(0.0, 1.0);
    const double root = std::sqrt(static_cast<double>(d));
    ScalingRow row;
    row.d_k = d;
    row.dot.range = row.scaled.range = 4.0 * std::max(root, 1.0);
    row.dot.counts.assign(static_cast<size_t>(r.bins), 0);
    row.scaled.counts.assign(static_cast<size_t>(r.bins), 0);
    std::vector<double> q(static_cast<size_t>(d)), k(static_cast<size_t>(d));
    auto fresh = [&](std::vector<double>& v) {
      for (double& x : v) x = nd(rng);
    };
    auto dot = [&] {
      double s = 0;
      for (size_t c = 0; c < q.size(); ++c) s += q[c] * k[c];
      return s;
    };
    auto dot_of_fresh_pair = [&] {
      fresh(q);
      fresh(k);
      return dot();
    };
    double sum = 0, sum2 = 0;
    for (int n = 0; n < r.samples; ++n) {
      const double s = dot_of_fresh_pair();
      sum += s;
      sum2 += s * s;
      add_to(row.dot, s);
      add_to(row.scaled, s / root);
    }
    const double N = r.samples;
    row.mean_dot = sum / N;
    row.var_dot = (sum2 - sum * sum / N) / (N - 1);
    row.mean_scaled = row.mean_dot / root;
    row.var_scaled = row.var_dot / d;
    std::vector<double> s(static_cast<size_t>(r.keys)), scaled(s.size()), p;
    for (int i = 0; i < r.rows; ++i) {
      fresh(q);  // one query against `keys` fresh keys
      for (size_t j = 0; j < s.size(); ++j) {
        fresh(k);
        s[j] = dot();
        scaled[j] = s[j] / root;
      }
      double mw, jac;
      softmax_stats(s, p, mw, jac);
      row.max_weight_dot += mw / r.rows;
      row.jacobian_dot += jac / r.rows;
      if (i == 0) row.example_dot = p;
      softmax_stats(scaled, p, mw, jac);
      row.max_weight_scaled += mw / r.rows;
      row.jacobian_scaled += jac / r.rows;
      if (i == 0) row.example_scaled = p;
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace attn
