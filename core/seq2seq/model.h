// Encoder–decoder models for the date task: a bidirectional GRU encoder and a GRU decoder with one
// of Bahdanau's or Luong's attention scores, or none (the fixed-context bottleneck). Forward
// passes keep every intermediate (the trace the UI reads); backward is hand-written BPTT.
//
// Variants, with B = batch, S = input length, H = decoder size (= annotation size), h = H/2:
// - encoder: embedding (E), forward GRU f_j and backward GRU b_j of size h; annotation
//   h_j = [f_j; b_j] (size H, so Luong's dot score needs no projection); summary
//   h_T = [f_last; b_first]; s_0 = tanh(h_T W_init + b_init).
// - "none" (Cho et al.'s RNN encoder–decoder, Bahdanau's RNNencdec baseline): one forward GRU
//   of size H reads the input; c = h_T = its last state, the only thing the decoder ever sees,
//   at every step: s_i = GRU([y_{i-1}; c], s_{i-1}).
// - "bahdanau": e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j) scored with the previous state, then
//   s_i = GRU([y_{i-1}; c_i], s_{i-1}) (the context conditions the new state, as in the paper).
// - Luong ("dot", "general", "concat", "local-p", "local-m"): s_t = GRU([y_{t-1}; h̃_{t-1}],
// s_{t-1})
//   (input feeding), then e_tj = score(s_t, h_j) with the current state.
//     dot: s_tᵀ h_j; general: s_tᵀ W_g h_j; concat: v_aᵀ tanh(W_a s_t + U_a h_j) (W_a[s;h] split);
//     local-p: general score in the window |j − p_t| ≤ D, p_t = S·σ(v_pᵀ tanh(W_p s_t)),
//       α = softmax(e) · exp(−(j − p_t)² / (2σ²)), σ = D/2;
//     local-m: general score in the window |j − p_t| ≤ D with p_t = min(t, S − 1), no Gaussian.
// - readout for every variant (Luong's attentional hidden state): h̃ = tanh([s; c] W_c + b_c),
//   p(y) = softmax(h̃ W_s + b_s). Bahdanau's maxout readout is replaced by this one tanh layer
//   so every variant differs only in how it attends.
#pragma once

#include <string>
#include <vector>

#include "seq2seq/gru.h"
#include "seq2seq/tensor.h"

namespace attn::s2s {

enum class Score { kNone, kBahdanau, kDot, kGeneral, kConcat, kLocalP, kLocalM };

const std::vector<std::string>& score_names();  // "none", "bahdanau", "dot", …, in enum order
bool parse_score(const std::string& name, Score& out);
std::string score_name(Score s);
// The score written out, e.g. "e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)".
std::string score_formula(Score s);
bool uses_window(Score s);

struct ModelConfig {
  Score score = Score::kBahdanau;
  int in_vocab = 0;
  int out_vocab = 0;
  int embed = 16;   // E
  int hidden = 64;  // H, even
  int window = 8;   // D for local-p / local-m
};

template <typename T>
struct Params {
  Mat<T> emb_in, emb_out;          // (V_in, E), (V_out, E)
  GruParams<T> enc_f, enc_b, dec;  // encoder halves (E → h; "none": enc_f E → H only); decoder
  Mat<T> w_init, b_init;           // (H, H), (1, H)
  Mat<T> att_w, att_u, att_v;      // additive: (H, H), (H, H), (1, H)
  Mat<T> att_g;                    // general: (H, H)
  Mat<T> pos_w, pos_v;             // local-p: (H, H), (1, H)
  Mat<T> w_c, b_c;                 // (2H, H), (1, H)
  Mat<T> w_s, b_s;                 // (H, V_out), (1, V_out)

  // Calls f(name, matrix) for every parameter the variant uses (non-empty), in a fixed order.
  template <typename F>
  void visit(F&& f) {
    visit_all(*this, f);
  }
  template <typename F>
  void visit(F&& f) const {
    visit_all(*this, f);
  }
  // Calls f(name, matrix) for every member, used by the variant or not (empty), in that order.
  template <typename F>
  void visit_members(F&& f) {
    visit_members_of(*this, f);
  }
  // Same-shaped zeros.
  Params zeros_like() const;
  template <typename U>
  Params<U> cast() const;

 private:
  template <typename Self, typename F>
  static void visit_all(Self& s, F& f) {
    visit_members_of(s, [&f](const char* name, auto& m) {
      if (m.size() > 0) f(name, m);
    });
  }
  template <typename Self, typename F>
  static void visit_members_of(Self& s, F&& g) {
    g("emb_in", s.emb_in);
    g("enc_f.wx", s.enc_f.wx);
    g("enc_f.wh", s.enc_f.wh);
    g("enc_f.b", s.enc_f.b);
    g("enc_b.wx", s.enc_b.wx);
    g("enc_b.wh", s.enc_b.wh);
    g("enc_b.b", s.enc_b.b);
    g("w_init", s.w_init);
    g("b_init", s.b_init);
    g("emb_out", s.emb_out);
    g("dec.wx", s.dec.wx);
    g("dec.wh", s.dec.wh);
    g("dec.b", s.dec.b);
    g("att_w", s.att_w);
    g("att_u", s.att_u);
    g("att_v", s.att_v);
    g("att_g", s.att_g);
    g("pos_w", s.pos_w);
    g("pos_v", s.pos_v);
    g("w_c", s.w_c);
    g("b_c", s.b_c);
    g("w_s", s.w_s);
    g("b_s", s.b_s);
  }
};

// The name and shape of every parameter the variant uses, in visit() order (the model file's
// order). Sizes are 64-bit so a loader can check a file's declared configuration against its
// real size before allocating anything.
struct ParamShape {
  const char* name;
  int64_t rows, cols;
};
std::vector<ParamShape> param_shapes(const ModelConfig& c);

// Allocates every parameter of param_shapes(c) (zeros).
template <typename T>
Params<T> make_params(const ModelConfig& c);
// Seeded uniform initialisation in ±1/√fan_in, biases zero.
Params<float> init_params(const ModelConfig& c, uint64_t seed);

// A batch: sources padded with kPad to the longest (B, S); targets (B, Ty) end with kEos and all
// have the same length (every ISO date is 10 characters + </s>).
struct Batch {
  std::vector<std::vector<int>> src;
  std::vector<std::vector<int>> tgt;  // empty for greedy decoding
};

// One decoder step of the forward pass, over the batch.
template <typename T>
struct StepCache {
  Mat<T> y_prev;  // (B, 1) token ids fed in (as T for uniformity)
  GruCache<T> gru;
  Mat<T> s;                    // state after this step (B, H)
  Mat<T> query;                // state the score used: s_{i-1} (Bahdanau) or s_t (Luong)
  Mat<T> e;                    // scores (B, S); meaningful where valid
  Mat<T> valid;                // (B, S) 1 where the position may be attended (length and window)
  Mat<T> a;                    // softmax over valid positions (B, S)
  Mat<T> gauss;                // local-p Gaussian factor (B, S)
  Mat<T> alpha;                // attention weights (B, S)
  Mat<T> pos;                  // p_t (B, 1) for local scores
  Mat<T> pos_u, pos_t;         // local-p: u = v_pᵀ tanh(W_p s) (B, 1); tanh(W_p s) (B, H)
  Mat<T> key;                  // general: q W_g (B, H)
  Mat<T> qw;                   // additive: q W_a (B, H)
  std::vector<Mat<T>> tanh_j;  // additive: tanh(q W_a + h_j U_a) per j (B, H)
  Mat<T> c;                    // context (B, H)
  Mat<T> sc;                   // [s; c] (B, 2H)
  Mat<T> ht;                   // attentional hidden h̃ (B, H)
  Mat<T> probs;                // (B, V_out)
  std::vector<int> out;        // argmax per row
};

// The whole forward pass: the trace the UI reads (with B = 1) and what backward needs.
template <typename T>
struct ForwardCache {
  int batch = 0, src_len = 0;
  std::vector<int> lens;
  std::vector<std::vector<int>> src;
  std::vector<std::vector<int>> tgt;
  Mat<T> src_mask;  // (B, S)
  std::vector<GruCache<T>> gru_f, gru_b;
  std::vector<Mat<T>> f, b;  // encoder halves per position (B, h)
  std::vector<Mat<T>> hs;    // annotations per position (B, H)
  std::vector<Mat<T>> hu;    // additive: h_j U_a per position (B, H)
  Mat<T> h_last;             // [f_last; b_first] (B, H)
  Mat<T> s0;                 // initial decoder state (B, H)
  std::vector<StepCache<T>> steps;
  double loss_sum = 0;  // Σ −log p(target) over rows and steps (teacher forcing)
};

// Runs the model. With targets: teacher forcing, loss_sum filled. Without: greedy decoding for
// `max_steps` steps (rows stop being meaningful after their </s>).
template <typename T>
void forward(const ModelConfig& c, const Params<T>& p, const Batch& batch, ForwardCache<T>& fc,
             int max_steps = 11);

// Back-propagation through time for loss = scale · loss_sum; accumulates into `grad`.
template <typename T>
void backward(const ModelConfig& c, const Params<T>& p, const ForwardCache<T>& fc, T scale,
              Params<T>& grad);

// Greedy output ids per row, cut at the first </s> (which is not included).
template <typename T>
std::vector<std::vector<int>> decoded(const ForwardCache<T>& fc);

}  // namespace attn::s2s
