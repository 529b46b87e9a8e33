// A token's path through one block, read from the kept activations (lm/forward.h's layout), and
// the comparison of GPT-2's block with the Llama family's.
#include "lm/block_path.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "lm/head_trace.h"

namespace attn::lm {

namespace {

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

BlockVector vec(std::string label, const float* x, int n, int values) {
  BlockVector v;
  v.label = std::move(label);
  v.size = n;
  v.first.assign(x, x + std::min(n, std::max(values, 0)));
  double ss = 0;
  for (int i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  v.norm = std::sqrt(ss);
  return v;
}

// The tensor names a stage reads, GPT-2's or the transformers library's.
std::string gpt2_name(const std::string& part, int l) { return "h." + std::to_string(l) + part; }
std::string llama_name(const std::string& part, int l) {
  return "model.layers." + std::to_string(l) + part;
}

}  // namespace

std::string row_shape(int n) { return "(1, " + std::to_string(n) + ")"; }

const BlockStage* BlockPath::find(BlockStageId id) const {
  for (const BlockStage& s : stages)
    if (s.id == id) return &s;
  return nullptr;
}

namespace {

// What every step of block_path reads: the model, the kept activations and the token's place.
struct PathReader {
  const Model& m;
  const Activations& a;
  const Config& c;
  bool llama;
  int position, n;  // the token's position; values kept per vector
  int l;            // the block

  // Row `position` of sequence 0 of layer ly in an (L, B, T, width) activation.
  const float* row(const AlignedVector<float>& v, int ly, int width) const {
    return v.data() + ((static_cast<size_t>(ly) * a.B) * a.T + position) * width;
  }
  const float* row(const AlignedVector<float>& v, int width) const { return row(v, l, width); }
  BlockVector vec(std::string label, const float* x, int size) const {
    return attn::lm::vec(std::move(label), x, size, n);
  }
};

// The embedding: GPT-2 adds its position's row; the Llama family adds nothing (RoPE).
BlockStage embedding_stage(const PathReader& r, int token) {
  const int C = r.c.n_embd;
  const std::string id = std::to_string(token), t = std::to_string(r.position);
  BlockStage s;
  s.id = BlockStageId::kEmbedding;
  s.title = r.llama ? "Token embedding" : "Token + position embedding";
  if (r.llama) {
    s.weights = "model.embed_tokens";
    s.formula = "x = embed_tokens[" + id + "]   (no position added: RoPE rotates q and k)";
    s.shape = "token " + id + " → " + row_shape(C);
  } else {
    s.weights = "wte, wpe";
    s.formula = "x = wte[" + id + "] + wpe[" + t + "]";
    s.shape = row_shape(C) + " + " + row_shape(C) + " → " + row_shape(C);
    const float* wte = r.m.params.ptr(kWte) + static_cast<size_t>(token) * C;
    const float* wpe = r.m.params.ptr(kWpe) + static_cast<size_t>(r.position) * C;
    s.vectors.push_back(r.vec("wte[" + id + "]", wte, C));
    s.vectors.push_back(r.vec("wpe[" + t + "]", wpe, C));
  }
  s.vectors.push_back(
      r.vec("x", r.a.encoded.data() + static_cast<size_t>(r.position) * C, C));  // b = 0
  return s;
}

// What block l reads when l > 0: block l − 1's output.
BlockStage input_stage(const PathReader& r) {
  const int C = r.c.n_embd, l = r.l;
  BlockStage s;
  s.id = BlockStageId::kInput;
  s.title = l == 1 ? "Block 0" : "Blocks 0 – " + std::to_string(l - 1);
  s.formula = "x = the residual stream after block " + std::to_string(l - 1);
  s.shape = row_shape(C) + " → " + row_shape(C);
  s.vectors.push_back(r.vec("x", r.row(r.a.residual3, l - 1, C), C));
  return s;
}

// A LayerNorm (GPT-2) or RMSNorm (Llama) of layer nl, or the final one when nl < 0.
BlockStage norm_stage(const PathReader& r, BlockStageId sid, const char* gpt2_part,
                      const char* llama_part, const float* out, const AlignedVector<float>& mean,
                      const AlignedVector<float>& rstd, int nl) {
  const int C = r.c.n_embd;
  const bool llama = r.llama;
  BlockStage s;
  s.id = sid;
  s.title = llama ? "RMSNorm" : "LayerNorm";
  s.weights = nl < 0 ? (llama ? "model.norm" : "ln_f")
                     : (llama ? llama_name(llama_part, nl) : gpt2_name(gpt2_part, nl));
  s.formula = llama ? "x / √(mean(x²) + ε) ⊙ g" : "(x − μ) / √(σ² + ε) ⊙ γ + β";
  s.shape = row_shape(C) + " → " + row_shape(C);
  const auto at = [&](const AlignedVector<float>& v) {
    return static_cast<double>(v[nl < 0 ? static_cast<size_t>(r.position)
                                        : (static_cast<size_t>(nl) * r.a.B) * r.a.T + r.position]);
  };
  if (llama) {
    s.stats.emplace_back("rms", 1.0 / at(rstd));
  } else {
    s.stats.emplace_back("μ", at(mean));
    s.stats.emplace_back("σ", 1.0 / at(rstd));
  }
  s.vectors.push_back(r.vec("norm(x)", out, C));
  return s;
}

// The projections to q, k and v, with the chosen head's slices (and q before RoPE if kept).
BlockStage qkv_stage(const PathReader& r, int head, int kv_head) {
  const Config& c = r.c;
  const int C = c.n_embd, hs = c.head_size(), Q = c.q_dim(), KV = c.kv_dim(), W = c.qkv_width();
  const int l = r.l;
  const float* qkv = r.row(r.a.qkv, W);
  BlockStage s;
  s.id = BlockStageId::kQkv;
  s.title = "Q, K, V";
  if (r.llama) {
    s.weights = llama_name(".self_attn.{q,k,v}_proj", l);
    s.formula = std::string("q = norm(x)·W_qᵀ, k = norm(x)·W_kᵀ, v = norm(x)·W_vᵀ") +
                (c.qkv_bias ? " (+ b)" : "") + "; RoPE rotates q and k by position " +
                std::to_string(r.position);
    s.shape =
        row_shape(C) + " → q " + row_shape(Q) + ", k " + row_shape(KV) + ", v " + row_shape(KV);
  } else {
    s.weights = gpt2_name(".attn.c_attn", l);
    s.formula = "q | k | v = norm(x)·W + b";
    s.shape = row_shape(C) + " → " + row_shape(W) + " = q | k | v";
  }
  s.stats.emplace_back("query heads", c.n_head);
  s.stats.emplace_back("K/V heads", c.kv_heads());
  s.stats.emplace_back("head size", hs);
  const std::string hq = std::to_string(head), hk = std::to_string(kv_head);
  if (r.llama)
    s.note =
        "RoPE turns pairs of q's values (and k's) by angles set by the position: the "
        "values change, the length does not.";
  if (r.llama && !r.a.qk_unrotated.empty()) {
    const float* un = r.row(r.a.qk_unrotated, Q + KV);
    s.vectors.push_back(r.vec("q, head " + hq + ", before RoPE", un + head * hs, hs));
  }
  s.vectors.push_back(r.vec("q, head " + hq, qkv + head * hs, hs));
  s.vectors.push_back(r.vec("k, head " + hk, qkv + Q + kv_head * hs, hs));
  s.vectors.push_back(r.vec("v, head " + hk, qkv + Q + KV + kv_head * hs, hs));
  return s;
}

// The chosen head's attention: the keys it sees, its strongest ones and its output.
BlockStage attention_stage(const PathReader& r, int head, int kv_head, int top_keys) {
  const Config& c = r.c;
  const int hs = c.head_size(), position = r.position, l = r.l;
  BlockStage s;
  s.id = BlockStageId::kAttention;
  s.title = "Attention: head " + std::to_string(head);
  s.formula = "w_j = softmax_j(q · k_j / √" + std::to_string(hs) + "), out = Σ_j w_j v_j";
  const int window = c.window(l);
  const int first = window > 0 ? std::max(0, position - window + 1) : 0;
  const int keys = position - first + 1;
  s.shape = "q " + row_shape(hs) + " · Kᵀ (" + std::to_string(hs) + ", " + std::to_string(keys) +
            ") → w " + row_shape(keys) + " · V → " + row_shape(hs);
  if (c.kv_heads() < c.n_head)
    s.note = "Query head " + std::to_string(head) + " shares K/V head " + std::to_string(kv_head) +
             " with query heads " + std::to_string(kv_head * c.group()) + "–" +
             std::to_string(kv_head * c.group() + c.group() - 1) + ".";
  if (window > 0 && first > 0)
    s.note += std::string(s.note.empty() ? "" : " ") + "The sliding window of " +
              std::to_string(window) + " hides keys before position " + std::to_string(first) + ".";
  s.stats.emplace_back("keys seen", keys);
  const float* w = r.a.att_at(c, l, 0, head) + static_cast<size_t>(position) * r.a.T;
  std::vector<int> js;
  for (int j = first; j <= position; ++j) js.push_back(j);
  const int k = std::min(static_cast<int>(js.size()), std::max(top_keys, 0));
  std::partial_sort(js.begin(), js.begin() + k, js.end(),
                    [&](int i, int j) { return w[i] != w[j] ? w[i] > w[j] : i < j; });
  for (int i = 0; i < k; ++i)
    s.top.emplace_back(js[static_cast<size_t>(i)], w[js[static_cast<size_t>(i)]]);
  s.vectors.push_back(r.vec("head " + std::to_string(head) + " output",
                            r.row(r.a.atty, c.q_dim()) + head * hs, hs));
  return s;
}

// The heads joined and projected back to the residual width.
BlockStage out_proj_stage(const PathReader& r) {
  const int C = r.c.n_embd, NH = r.c.n_head, hs = r.c.head_size(), l = r.l;
  BlockStage s;
  s.id = BlockStageId::kOutProj;
  s.title = "Output projection";
  s.weights = r.llama ? llama_name(".self_attn.o_proj", l) : gpt2_name(".attn.c_proj", l);
  s.formula = std::string("attention = [head 0 | head 1 | … | head ") + std::to_string(NH - 1) +
              (r.llama ? "]·W_oᵀ" : "]·W + b");
  s.shape = std::to_string(NH) + " heads × " + std::to_string(hs) + " = " + row_shape(r.c.q_dim()) +
            " → " + row_shape(C);
  s.vectors.push_back(r.vec("attention", r.row(r.a.attproj, C), C));
  return s;
}

// A residual addition with the given formula, showing the sum `out` as `label`.
BlockStage residual_stage(const PathReader& r, BlockStageId id, std::string formula,
                          std::string label, const float* out) {
  const int C = r.c.n_embd;
  BlockStage s;
  s.id = id;
  s.title = "Residual";
  s.formula = std::move(formula);
  s.shape = row_shape(C) + " + " + row_shape(C) + " → " + row_shape(C);
  s.vectors.push_back(r.vec(std::move(label), out, C));
  return s;
}

// An attention-only GPT-2 model: the forward pass skips the MLP, which would add 0.
BlockStage skipped_mlp_stage(int C) {
  BlockStage s;
  s.id = BlockStageId::kMlp;
  s.title = "MLP (skipped)";
  s.note =
      "Every MLP weight of this model is zero, so the MLP adds nothing: the residual "
      "stream passes through unchanged.";
  s.shape = row_shape(C) + " → " + row_shape(C);
  return s;
}

// The MLP's first half: GPT-2's expansion and GELU, or Llama's SwiGLU gate and up projections.
BlockStage mlp_stage(const PathReader& r) {
  const int C = r.c.n_embd, F = r.c.mlp_size(), l = r.l;
  const Activations& a = r.a;
  BlockStage s;
  s.id = BlockStageId::kMlp;
  if (r.llama) {
    s.title = "SwiGLU";
    s.weights = llama_name(".mlp.{gate,up}_proj", l);
    s.formula = "silu(norm(x)·W_gateᵀ) ⊙ (norm(x)·W_upᵀ),  silu(z) = z / (1 + e^−z)";
    s.shape = row_shape(C) + " → 2 × " + row_shape(F) + " → " + row_shape(F);
    s.vectors.push_back(r.vec("gate", r.row(a.fch, F), F));
    s.vectors.push_back(r.vec("up", r.row(a.fc_up, F), F));
    s.vectors.push_back(r.vec("silu(gate) ⊙ up", r.row(a.fch_gelu, F), F));
  } else {
    s.title = "MLP: expand, GELU";
    s.weights = gpt2_name(".mlp.c_fc", l);
    s.formula = "h = norm(x)·W + b, then GELU(h)";
    s.shape = row_shape(C) + " → " + row_shape(F);
    s.vectors.push_back(r.vec("h", r.row(a.fch, F), F));
    s.vectors.push_back(r.vec("GELU(h)", r.row(a.fch_gelu, F), F));
  }
  const float* act = r.row(a.fch_gelu, F);
  int positive = 0;
  for (int i = 0; i < F; ++i) positive += act[i] > 0 ? 1 : 0;
  s.stats.emplace_back("positive", positive);
  return s;
}

// The MLP's second half: the projection back down to the residual width.
BlockStage mlp_down_stage(const PathReader& r) {
  const int C = r.c.n_embd, F = r.c.mlp_size(), l = r.l;
  BlockStage d;
  d.id = BlockStageId::kMlpDown;
  d.title = "MLP: project down";
  d.weights = r.llama ? llama_name(".mlp.down_proj", l) : gpt2_name(".mlp.c_proj", l);
  d.formula = r.llama ? "mlp = (silu(gate) ⊙ up)·W_downᵀ" : "mlp = GELU(h)·W + b";
  d.shape = row_shape(F) + " → " + row_shape(C);
  d.vectors.push_back(r.vec("mlp", r.row(r.a.fcproj, C), C));
  return d;
}

// After the last block: the logits over the vocabulary and the likeliest next tokens.
BlockStage next_token_stage(const PathReader& r, const BlockPathOptions& o) {
  const bool llama = r.llama;
  BlockStage s;
  s.id = BlockStageId::kNextToken;
  s.title = "Next token";
  const bool tied = !llama || r.m.llama.head.rows == 0;
  s.weights = !llama ? "wte (tied)" : tied ? "model.embed_tokens (tied)" : "lm_head";
  s.formula = std::string("p = softmax(norm(x) · ") +
              (!llama ? "wteᵀ"
               : tied ? "embed_tokensᵀ"
                      : "lm_headᵀ") +
              (o.temperature != 1.0 ? " / " + num(o.temperature) : "") + ")";
  s.shape = row_shape(r.c.n_embd) + " → " + row_shape(r.c.vocab_size) + " logits → probabilities";
  s.top = top_tokens_at(r.m, r.a, r.position, o.top_tokens, o.temperature);
  return s;
}

}  // namespace

BlockPath block_path(const Model& m, const Activations& a, int layer, int head, int position,
                     const BlockPathOptions& o) {
  const Config& c = m.config;
  const int L = c.n_layer, C = c.n_embd;
  assert(layer >= 0 && layer < L && head >= 0 && head < c.n_head && position >= 0 &&
         position < a.T);
  const int l = layer;
  const PathReader r{m, a, c, c.llama_family(), position, o.values, l};
  BlockPath p;
  p.layer = l;
  p.head = head;
  p.kv_head = head / c.group();
  p.position = position;
  p.token = a.tokens[static_cast<size_t>(position)];
  p.last_block = l == L - 1;

  p.stages.push_back(embedding_stage(r, p.token));
  if (l > 0) p.stages.push_back(input_stage(r));
  p.stages.push_back(norm_stage(r, BlockStageId::kNorm1, ".ln_1", ".input_layernorm",
                                r.row(a.ln1, C), a.ln1_mean, a.ln1_rstd, l));
  p.stages.push_back(qkv_stage(r, head, p.kv_head));
  p.stages.push_back(attention_stage(r, head, p.kv_head, o.top_keys));
  p.stages.push_back(out_proj_stage(r));
  p.stages.push_back(
      residual_stage(r, BlockStageId::kResidual1, "x + attention", "x", r.row(a.residual2, C)));
  if (a.fch.empty()) {
    p.stages.push_back(skipped_mlp_stage(C));
  } else {
    p.stages.push_back(norm_stage(r, BlockStageId::kNorm2, ".ln_2", ".post_attention_layernorm",
                                  r.row(a.ln2, C), a.ln2_mean, a.ln2_rstd, l));
    p.stages.push_back(mlp_stage(r));
    p.stages.push_back(mlp_down_stage(r));
  }
  p.stages.push_back(residual_stage(
      r, BlockStageId::kResidual2, a.fch.empty() ? "x (+ 0)" : "x + mlp",
      p.last_block ? "x" : "block " + std::to_string(l) + "'s output", r.row(a.residual3, C)));
  if (p.last_block) {
    p.stages.push_back(norm_stage(r, BlockStageId::kFinalNorm, "", "",
                                  a.lnf.data() + static_cast<size_t>(position) * C, a.lnf_mean,
                                  a.lnf_rstd, -1));
    p.stages.push_back(next_token_stage(r, o));
  }
  return p;
}

std::vector<BlockDifference> block_differences(const Config& c) {
  const std::string C = std::to_string(c.n_embd), NH = std::to_string(c.n_head),
                    NKV = std::to_string(c.kv_heads()), hs = std::to_string(c.head_size()),
                    F = std::to_string(c.mlp_size()), maxT = std::to_string(c.n_positions);
  const auto thousands = [](double x) {
    char b[32];
    if (x >= 1e6)
      std::snprintf(b, sizeof b, "%.1f M", x / 1e6);
    else if (x >= 1e4)
      std::snprintf(b, sizeof b, "%.0f k", x / 1e3);
    else if (x >= 1e3)
      std::snprintf(b, sizeof b, "%.1f k", x / 1e3);
    else
      std::snprintf(b, sizeof b, "%.0f", x);
    return std::string(b);
  };
  const double cf = static_cast<double>(c.n_embd) * c.mlp_size();
  std::vector<BlockDifference> d;
  d.push_back({"Norm",
               "LayerNorm over the " + C +
                   " channels: subtract the mean, divide by the standard deviation, then "
                   "scale by γ and shift by β (2 × " +
                   C + " weights).",
               "RMSNorm over the " + C +
                   " channels: divide by the root mean square, then scale by g. No mean, no "
                   "shift (" +
                   C + " weights)."});
  d.push_back({"Positions",
               "Learned: a table wpe of " + maxT + " × " + C +
                   " added to the token's embedding before block 0.",
               "RoPE: nothing is added. Inside every block, q and k are rotated by angles that "
               "grow with the position (θ = " +
                   num(c.rope_theta) + "), so q·k depends on how far apart the two tokens are."});
  std::string gqa;
  if (c.kv_heads() < c.n_head)
    gqa = std::string(c.kv_heads() == 1 ? "Multi-query (MQA)" : "Grouped-query (GQA)") + ": " + NH +
          " query heads share " + NKV + " K/V head" + (c.kv_heads() == 1 ? "" : "s") + ", " +
          std::to_string(c.group()) + " per K/V head; K, V and the cache are " +
          std::to_string(c.group()) + "× smaller.";
  else if (c.llama_family())
    gqa =
        "Grouped-query (GQA): query heads may share K/V heads (Llama 3 8B: 32 share 8), "
        "shrinking K, V and the cache; this model keeps " +
        NH + " K/V heads, one per query head.";
  else {
    // What sharing would do to this model: its query heads over the fewest groups that divide.
    int d = 2;
    while (d < c.n_head && c.n_head % d != 0) ++d;
    const int kv = std::max(1, c.n_head / d);
    gqa = "Grouped-query (GQA): query heads share K/V heads; this model's " + NH +
          " query heads could share " + std::to_string(kv) + " K/V head" + (kv == 1 ? "" : "s") +
          ", " + std::to_string(c.n_head / kv) + " each, making K, V and the cache " +
          std::to_string(c.n_head / kv) + "× smaller.";
  }
  d.push_back({"Attention heads",
               "Multi-head (MHA): " + NH + " heads of " + hs +
                   ", each with its own q, k and v; the cache keeps 2 × " + NH + " × " + hs +
                   " values per token and block.",
               gqa});
  d.push_back({"MLP",
               "GELU MLP: " + C + " → " + F + " → " + C + ", two matrices (c_fc, c_proj; " +
                   thousands(2 * cf) + " weights).",
               "SwiGLU: silu(x·W_gate) ⊙ (x·W_up), then W_down: " + C + " → " + F + " → " + C +
                   ", three matrices (" + thousands(3 * cf) + " weights)."});
  const std::string vocab = std::to_string(c.vocab_size);
  d.push_back(
      {"Output head", "Tied: the logits are norm(x) · wteᵀ, the embedding table read backwards.",
       c.llama_family()
           ? (c.tied ? "Tied here (tie_word_embeddings): the logits are norm(x) · embed_tokensᵀ."
                     : "Untied here: lm_head, its own " + vocab + " × " + C +
                           " matrix, next to the embedding.")
           : "Tied or untied (tie_word_embeddings): a separate lm_head of " + vocab + " × " + C +
                 " when untied."});
  d.push_back(
      {"Biases", "Every linear layer and norm has a bias.",
       c.qkv_bias ? "None, except here on q, k and v (Qwen2)." : "None (Qwen2 keeps q, k, v's)."});
  return d;
}

}  // namespace attn::lm
