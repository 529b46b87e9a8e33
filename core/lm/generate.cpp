// The KV-cache pass: each layer's halves around the attention (lm/llama_forward.h for the Llama
// family; GPT-2's layer functions from lm/forward.h), the attention over the cached rows.
#include "lm/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lm/forward.h"
#include "lm/hf_tokenizer.h"
#include "lm/llama_forward.h"

namespace attn::lm {
namespace {

long long first_non_finite(const float* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return static_cast<long long>(i);
  return -1;
}

}  // namespace

Generator::Generator(const Model& model, int threads)
    : m_(model), threads_(threads), cache_(static_cast<size_t>(model.config.n_layer)) {
  if (model.config.llama_family()) inv_freq_ = rope_inv_freq(model.config);
}

int Generator::cache_rows(int l) const {
  return static_cast<int>(cache_[static_cast<size_t>(l)].k.size() /
                          static_cast<size_t>(m_.config.kv_dim()));
}
int Generator::cache_first_position(int l) const { return cache_[static_cast<size_t>(l)].first; }
double Generator::cache_bytes() const {
  double b = 0;
  for (const LayerCache& c : cache_) b += 4.0 * static_cast<double>(c.k.size() + c.v.size());
  return b;
}
const std::vector<float>& Generator::last_attention(int l) const {
  return cache_[static_cast<size_t>(l)].last_att;
}
int Generator::last_attention_first(int l) const {
  return cache_[static_cast<size_t>(l)].last_att_first;
}

std::string Generator::feed(const std::vector<int>& ids) {
  const Config& c = m_.config;
  if (ids.empty()) return "";
  if (length_ + static_cast<int>(ids.size()) > c.n_positions)
    return "the text would reach " + std::to_string(length_ + ids.size()) +
           " tokens, more than the model's n_positions = " + std::to_string(c.n_positions);
  ForwardOptions o;
  o.all_logits = false;
  // This pass's rows as a whole-text pass of them would take, and beside them the cache after
  // it and the scores of its queries over every cached key.
  const double n = static_cast<double>(ids.size()), keys = length_ + n;
  const double extra = 4.0 * (2.0 * c.n_layer * keys * c.kv_dim() + c.n_head * n * keys);
  if (std::string e = check_forward_size(c, 1, static_cast<int>(ids.size()), o, extra); !e.empty())
    return e;
  for (int id : ids)
    if (id < 0 || id >= c.vocab_size)
      return "token id " + std::to_string(id) + " is outside the vocabulary (0.." +
             std::to_string(c.vocab_size - 1) + ")";
  return step(ids);
}

std::string Generator::step(const std::vector<int>& ids) {
  const Config& c = m_.config;
  const int n = static_cast<int>(ids.size()), p0 = length_, C = c.n_embd, F = c.mlp_size();
  const int Q = c.q_dim(), KV = c.kv_dim(), W = c.qkv_width(), NH = c.n_head, hs = c.head_size();
  const bool llama = c.llama_family();
  const auto rows = [n](int width) { return std::vector<float>(static_cast<size_t>(n) * width); };
  std::vector<float> x = rows(C), ln1 = rows(C), rstd1(static_cast<size_t>(n)), qkv = rows(W),
                     atty = rows(Q), attproj = rows(C), residual2 = rows(C), ln2 = rows(C),
                     rstd2(static_cast<size_t>(n)), gate = rows(F), up = rows(F), act = rows(F),
                     down = rows(C), out = rows(C), mean(static_cast<size_t>(n));
  // The embeddings: GPT-2's token + position, the Llama family's token alone (RoPE later).
  for (int t = 0; t < n; ++t) {
    float* row = x.data() + static_cast<size_t>(t) * C;
    if (llama) {
      m_.llama.embed.row(ids[static_cast<size_t>(t)], row);
    } else {
      const float* e = m_.params.ptr(kWte) + static_cast<size_t>(ids[static_cast<size_t>(t)]) * C;
      const float* p = m_.params.ptr(kWpe) + static_cast<size_t>(p0 + t) * C;
      for (int i = 0; i < C; ++i) row[i] = e[i] + p[i];
    }
  }
  const Parameters& P = m_.params;
  const auto eps = static_cast<float>(c.layer_norm_epsilon);
  for (int l = 0; l < c.n_layer; ++l) {
    LayerCache& cache = cache_[static_cast<size_t>(l)];
    LayerRows r;
    r.ln1 = ln1.data();
    r.rstd1 = rstd1.data();
    r.qkv = qkv.data();
    r.atty = atty.data();
    r.attproj = attproj.data();
    r.residual2 = residual2.data();
    r.ln2 = ln2.data();
    r.rstd2 = rstd2.data();
    r.gate = gate.data();
    r.up = up.data();
    r.act = act.data();
    r.down = down.data();
    r.out = out.data();
    if (llama) {
      llama_layer_qkv(m_, l, x.data(), n, p0, r, inv_freq_, threads_);
    } else {
      layernorm_forward(x.data(), P.ptr(kLn1W, l), P.ptr(kLn1B, l), n, C, eps, r.ln1, mean.data(),
                        r.rstd1);
      matmul_forward(r.ln1, P.ptr(kQkvW, l), P.ptr(kQkvB, l), n, C, 3 * C, r.qkv, threads_);
    }
    // The new keys and values join the cache; the queries attend over all it holds.
    for (int t = 0; t < n; ++t) {
      const float* row = qkv.data() + static_cast<size_t>(t) * W;
      cache.k.insert(cache.k.end(), row + Q, row + Q + KV);
      cache.v.insert(cache.v.end(), row + Q + KV, row + Q + 2 * KV);
    }
    const int m = static_cast<int>(cache.k.size() / static_cast<size_t>(KV));
    std::vector<float> att(static_cast<size_t>(NH) * n * m);
    gqa_attention(qkv.data(), W, cache.k.data(), cache.v.data(), KV, n, m, p0, cache.first, NH,
                  c.kv_heads(), hs, c.window(l), atty.data(), Q, att.data(), threads_);
    // The last query's row of every head, for showing.
    cache.last_att.resize(static_cast<size_t>(NH) * m);
    for (int h = 0; h < NH; ++h)
      std::copy_n(att.data() + (static_cast<size_t>(h) * n + n - 1) * m, m,
                  cache.last_att.data() + static_cast<size_t>(h) * m);
    cache.last_att_first = cache.first;
    if (llama) {
      llama_layer_rest(m_, l, x.data(), n, r, threads_);
    } else {
      matmul_forward(r.atty, P.ptr(kAttProjW, l), P.ptr(kAttProjB, l), n, C, C, r.attproj,
                     threads_);
      residual_forward(x.data(), r.attproj, static_cast<size_t>(n) * C, r.residual2);
      if (m_.mlp) {
        layernorm_forward(r.residual2, P.ptr(kLn2W, l), P.ptr(kLn2B, l), n, C, eps, r.ln2,
                          mean.data(), r.rstd2);
        matmul_forward(r.ln2, P.ptr(kFcW, l), P.ptr(kFcB, l), n, C, F, r.gate, threads_);
        gelu_forward(r.gate, static_cast<size_t>(n) * F, r.act, threads_);
        matmul_forward(r.act, P.ptr(kFcProjW, l), P.ptr(kFcProjB, l), n, F, C, r.down, threads_);
        residual_forward(r.residual2, r.down, static_cast<size_t>(n) * C, r.out);
      } else {
        std::copy(residual2.begin(), residual2.end(), out.begin());
      }
    }
    if (const long long bad = first_non_finite(out.data(), out.size()); bad >= 0)
      return "layer " + std::to_string(l) +
             ": a value overflows float32 (the layer's output at token " +
             std::to_string(p0 + bad / C) + ", column " + std::to_string(bad % C) + ")";
    x.swap(out);
    // A window model never looks further back than W − 1 positions before the next token.
    const int w = c.window(l);
    if (w > 0 && m > w) {
      const auto drop = static_cast<size_t>(m - w) * KV;
      cache.k.erase(cache.k.begin(), cache.k.begin() + static_cast<long>(drop));
      cache.v.erase(cache.v.begin(), cache.v.begin() + static_cast<long>(drop));
      cache.first += m - w;
    }
  }
  // The last position only: its final norm and the logits.
  const float* last = x.data() + static_cast<size_t>(n - 1) * C;
  std::vector<float> norm(static_cast<size_t>(C));
  logits_.assign(static_cast<size_t>(c.vocab_size), 0.0f);
  if (llama) {
    rmsnorm_forward<float>(last, m_.llama.norm.data(), 1, C, c.layer_norm_epsilon, norm.data(),
                           nullptr);
    linear_forward(norm.data(), 1, m_.llama.output(), nullptr, logits_.data(), c.vocab_size,
                   threads_);
  } else {
    float mu = 0, rs = 0;
    layernorm_forward(last, P.ptr(kLnfW), P.ptr(kLnfB), 1, C, eps, norm.data(), &mu, &rs);
    logits_forward(norm.data(), P.ptr(kWte), 1, C, c.vocab_size, logits_.data(), threads_);
  }
  if (const long long bad = first_non_finite(logits_.data(), logits_.size()); bad >= 0)
    return "the logits: a value overflows float32 (vocabulary id " + std::to_string(bad) + ")";
  length_ += n;
  return "";
}

int choose_next_token(const std::vector<float>& logits, double temperature, int top_k,
                      std::mt19937_64& rng) {
  const int V = static_cast<int>(logits.size());
  if (temperature <= 0) {
    int best = 0;
    for (int i = 1; i < V; ++i)
      if (logits[static_cast<size_t>(i)] > logits[static_cast<size_t>(best)]) best = i;
    return best;
  }
  std::vector<int> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  const int k = top_k > 0 ? std::min(top_k, V) : V;
  auto more_likely = [&](int a, int b) {
    const float x = logits[static_cast<size_t>(a)], y = logits[static_cast<size_t>(b)];
    return x > y || (x == y && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), more_likely);
  order.resize(static_cast<size_t>(k));
  // softmax(logits / T) over the k kept, in double; then one uniform draw.
  std::vector<double> p(order.size());
  const double top = logits[static_cast<size_t>(order[0])] / temperature;
  double sum = 0;
  for (size_t i = 0; i < order.size(); ++i)
    sum += p[i] = std::exp(logits[static_cast<size_t>(order[i])] / temperature - top);
  double u = std::uniform_real_distribution<double>(0.0, sum)(rng);
  for (size_t i = 0; i < order.size(); ++i) {
    if (u < p[i]) return order[i];
    u -= p[i];
  }
  return order.back();
}

std::vector<int> end_of_text_ids(const Model& m) {
  if (!m.config.eos_token_ids.empty()) return m.config.eos_token_ids;
  if (const HfTokenizer* hf = m.tokenizer.hf(); hf && hf->eos_id() >= 0) return {hf->eos_id()};
  const int eot = m.tokenizer.find("<|endoftext|>");
  return eot >= 0 ? std::vector<int>{eot} : std::vector<int>{};
}

}  // namespace attn::lm
