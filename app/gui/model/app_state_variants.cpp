// AppState's edits of the variants beyond masks: Linformer's random projections, the key–query
// convolution kernel and head mixing, and keeping them fitting the scenario's shapes.
#include "attention/linformer.h"
#include "gui/model/app_state.h"

namespace attn {
namespace {

int heads_of(const Scenario& s) {
  return static_cast<int>(s.use_projection ? s.projection.w_q.size() : s.qkv.q.size());
}
int keys_of(const Scenario& s) { return static_cast<int>(s.keys().size()); }

HeadStack mixing(int heads, int group, float strength) {
  HeadStack m;
  for (int g = 0; g < heads / group; ++g) {
    Matrix x = Matrix::Constant(group, group, strength / static_cast<float>(group));
    x.diagonal().array() += 1.0f - strength;
    m.push_back(x);
  }
  return m;
}

}  // namespace

void fit_variants(Scenario& s) {
  VariantSpec& v = s.options.variants;
  const int H = heads_of(s), n_k = keys_of(s);
  LinformerSpec& l = v.linformer;
  const int H_kv = static_cast<int>(s.use_projection ? s.projection.w_k.size() : s.qkv.k.size());
  if (l.enabled() && !l.e.empty() && l.e.size() > 1 && static_cast<int>(l.e.size()) != H_kv) {
    l.e.resize(1);
    l.f.resize(1);
  }
  if (l.enabled() && !l.e.empty() && l.e[0].cols() != n_k) {
    const int k = l.k();
    l.e = random_linformer_projection(1, k, n_k, 1000 + static_cast<uint64_t>(n_k));
    l.f = random_linformer_projection(1, k, n_k, 2000 + static_cast<uint64_t>(n_k));
  }
  MultiTokenSpec& m = v.multi_token;
  if (m.kq_conv.size() > 1 && static_cast<int>(m.kq_conv.size()) != H) m.kq_conv.resize(1);
  if (!m.head_mix.empty()) {
    const int c = m.mix_group_size();
    if (c < 1 || H % c != 0)
      m.head_mix.clear();
    else if (static_cast<int>(m.head_mix.size()) * c != H)
      m.head_mix.resize(static_cast<size_t>(H / c), m.head_mix[0]);
  }
}

bool AppState::set_linformer(std::optional<int> k) {
  Scenario s = scenario_;
  LinformerSpec& l = s.options.variants.linformer;
  if (!k) {
    l = {};
    return apply(std::move(s), "Linformer off: every query attends to every key");
  }
  const int n_k = keys_of(s);
  l.e = random_linformer_projection(1, *k, n_k, linformer_seed * 2);
  l.f = random_linformer_projection(1, *k, n_k, linformer_seed * 2 + 1);
  return apply(std::move(s), "Linformer: " + std::to_string(n_k) + " keys projected to k = " +
                                 std::to_string(*k) + " virtual keys (random E, F, seed " +
                                 std::to_string(linformer_seed) + ")");
}

bool AppState::reseed_linformer() {
  ++linformer_seed;
  const LinformerSpec& l = scenario_.options.variants.linformer;
  return l.enabled() && set_linformer(l.k());
}

bool AppState::set_kq_conv(const Matrix& kernel) {
  Scenario s = scenario_;
  s.options.variants.multi_token.kq_conv.clear();
  if (kernel.size() > 0) s.options.variants.multi_token.kq_conv.push_back(kernel);
  return apply(std::move(s), kernel.size() > 0
                                 ? "Key–query convolution " + std::to_string(kernel.rows()) +
                                       " × " + std::to_string(kernel.cols())
                                 : std::string("Key–query convolution off"));
}

bool AppState::set_head_mix(int group, float strength) {
  Scenario s = scenario_;
  const int H = heads_of(s);
  s.options.variants.multi_token.head_mix.clear();
  if (group > 0) {
    if (H % group != 0) {
      set_message("head mixing: groups of " + std::to_string(group) +
                      " do not divide H = " + std::to_string(H),
                  true);
      return false;
    }
    s.options.variants.multi_token.head_mix = mixing(H, group, strength);
  }
  return apply(std::move(s), group > 0 ? "Head mixing in groups of " + std::to_string(group)
                                       : std::string("Head mixing off"));
}

}  // namespace attn
