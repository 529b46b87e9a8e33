// Timing the two score functions (score_compare.h) with the engine's own code for each: an Eigen
// product for Q·Kᵀ, additive_scores for the additive score.
#include "backends/score_compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>

#include "attention/additive.h"

namespace attn {
namespace {

double median_seconds(const std::function<void()>& f, int runs) {
  using Clock = std::chrono::steady_clock;
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < std::max(1, runs); ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Matrix normal_matrix(int rows, int cols, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = nd(rng);
  return m;
}

double additive_flops(int n, int d, int d_a) {
  return 4.0 * n * d * d_a + 4.0 * double(n) * n * d_a;
}

}  // namespace

std::vector<ScoreCompareCase> default_score_cases() {
  std::vector<ScoreCompareCase> out;
  for (int n : {64, 128, 256, 512, 1024}) out.push_back({n, 64});
  for (int d : {16, 32, 128, 256}) out.push_back({256, d});
  return out;
}

int equal_flops_d_a(int n, int d) {
  const double dot = 2.0 * double(n) * n * d;
  return std::max(1, static_cast<int>(std::lround(dot / additive_flops(n, d, 1))));
}

ScoreTiming time_score_functions(const ScoreCompareCase& c, int runs, uint32_t seed,
                                 const std::atomic<bool>* cancel) {
  ScoreTiming t;
  t.c = c;
  t.d_a = c.d;
  t.d_a_equal = equal_flops_d_a(c.n, c.d);
  std::mt19937 rng(seed);
  const Matrix q = normal_matrix(c.n, c.d, rng), k = normal_matrix(c.n, c.d, rng);
  auto additive = [&](int d_a) {
    AdditiveScore a;
    a.w_q = normal_matrix(d_a, c.d, rng) / std::sqrt(float(c.d));
    a.w_k = normal_matrix(d_a, c.d, rng) / std::sqrt(float(c.d));
    a.v = normal_matrix(1, d_a, rng).row(0);
    return a;
  };
  const AdditiveScore full = additive(t.d_a), equal = additive(t.d_a_equal);
  Matrix s(c.n, c.n);
  auto stop = [&] { return cancel && cancel->load(); };
  t.dot_seconds = median_seconds([&] { s.noalias() = q * k.transpose(); }, runs);
  if (stop()) return {};
  t.additive_seconds = median_seconds([&] { additive_scores(full, q, 0, c.n, k, s); }, runs);
  if (stop()) return {};
  t.equal_seconds = median_seconds([&] { additive_scores(equal, q, 0, c.n, k, s); }, runs);
  t.dot_flops = 2.0 * double(c.n) * c.n * c.d;
  t.additive_flops = additive_flops(c.n, c.d, t.d_a);
  t.equal_flops = additive_flops(c.n, c.d, t.d_a_equal);
  return t;
}

}  // namespace attn
