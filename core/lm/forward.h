// GPT-2's forward pass in float32 with Eigen, one function per layer kind as in llm.c's
// train_gpt2.c, every intermediate kept in one Activations struct so that a backward pass can be
// written beside each function. Shape letters: B batch, T tokens, C channels, NH heads,
// hs = C/NH, F MLP width, V vocabulary, L layers.
#pragma once

#include <vector>

#include "lm/model.h"

namespace attn::lm {

// Everything the forward pass computes, for B sequences of T tokens (row-major, b outermost).
struct Activations {
  int B = 0, T = 0;
  int logits_T = 0;              // T, or 1 when only the last position's logits were asked for
  std::vector<int> tokens;       // (B, T)
  std::vector<float> encoded;    // (B, T, C)   wte[token] + wpe[t]
  std::vector<float> ln1;        // (L, B, T, C)
  std::vector<float> ln1_mean;   // (L, B, T)
  std::vector<float> ln1_rstd;   // (L, B, T)
  std::vector<float> qkv;        // (L, B, T, 3C)  Q | K | V, head h at columns h·hs of each
  std::vector<float> att;        // (L, B, NH, T, T) softmax weights (0 above the diagonal)
  std::vector<float> atty;       // (L, B, T, C)   the heads' outputs side by side
  std::vector<float> attproj;    // (L, B, T, C)
  std::vector<float> residual2;  // (L, B, T, C)   residual after attention
  std::vector<float> ln2;        // (L, B, T, C)
  std::vector<float> ln2_mean;   // (L, B, T)
  std::vector<float> ln2_rstd;   // (L, B, T)
  std::vector<float> fch;        // (L, B, T, F)
  std::vector<float> fch_gelu;   // (L, B, T, F)
  std::vector<float> fcproj;     // (L, B, T, C)
  std::vector<float> residual3;  // (L, B, T, C)   residual after the MLP: the layer's output
  std::vector<float> lnf;        // (B, T, C)
  std::vector<float> lnf_mean;   // (B, T)
  std::vector<float> lnf_rstd;   // (B, T)
  std::vector<float> logits;     // (B, logits_T, V)

  // Attention weights of layer l, sequence b, head h: a (T, T) row-major block.
  const float* att_at(const Config& c, int l, int b, int h) const {
    return att.data() + ((static_cast<size_t>(l) * B + b) * c.n_head + h) * T * T;
  }
  // Q, K and V of layer l, sequence b: (T, 3C) rows.
  const float* qkv_at(const Config& c, int l, int b) const {
    return qkv.data() + (static_cast<size_t>(l) * B + b) * T * 3 * c.n_embd;
  }
};

struct ForwardOptions {
  bool all_logits = true;  // false: logits of the last position of each sequence only
  int threads = 0;         // 0: every core
};

// ---- one function per layer kind (inputs first, outputs last; sizes in the shape letters) ----
// out (B,T,C) = wte[tokens] + wpe[0..T)
void encoder_forward(const float* wte, const float* wpe, const int* tokens, int B, int T, int C,
                     float* out);
// out (N,C) = (inp − mean)·rstd·weight + bias over each row; keeps mean and rstd (N) for backward.
void layernorm_forward(const float* inp, const float* weight, const float* bias, int N, int C,
                       float eps, float* out, float* mean, float* rstd);
// out (N,OC) = inp (N,C) · weight (C,OC) + bias (OC) (bias may be null), on `threads` cores.
void matmul_forward(const float* inp, const float* weight, const float* bias, int N, int C, int OC,
                    float* out, int threads = 0);
// Causal multi-head attention over qkv (B,T,3C): the weights att (B,NH,T,T) and out (B,T,C).
// The softmax's backward needs only att, so the scaled scores are not kept (a head's scores are
// in its trace, lm/head_trace.h).
void attention_forward(const float* qkv, int B, int T, int C, int NH, float* att, float* out,
                       int threads = 0);
// GPT-2's tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void gelu_forward(const float* inp, size_t N, float* out, int threads = 0);
// out = a + b
void residual_forward(const float* a, const float* b, size_t N, float* out);
// out (N,V) = inp (N,C) · wteᵀ
void logits_forward(const float* inp, const float* wte, int N, int C, int V, float* out,
                    int threads = 0);

// The whole network on `tokens` (B·T ids, each in [0, V), T ≤ n_positions; asserted).
void gpt_forward(const Model& model, const std::vector<int>& tokens, int B, int T,
                 Activations& acts, const ForwardOptions& options = {});

// Softmax of logits / temperature in double precision, as probabilities (temperature > 0).
std::vector<double> softmax_probabilities(const float* logits, int V, double temperature = 1.0);

}  // namespace attn::lm
