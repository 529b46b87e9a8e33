// The Narrator behind explain(): its shared state and small helpers; each stage's narration is
// defined in its own file (narrate_inputs.cpp, narrate_projection.cpp, narrate_scores.cpp,
// narrate_mask.cpp, narrate_softmax.cpp, narrate_weighted_sum.cpp, narrate_output_projection.cpp)
// and explain.cpp runs them in order. Internal to core/explain/: nothing else includes this.
//
// To add a stage: add a Stage value, declare its member function below, define it in a new
// narrate_<stage>.cpp (the CMake glob picks it up), and add it to Narrator::run and stages_for in
// explain.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "attention/attention.h"
#include "attention/format.h"
#include "explain/explain.h"
#include "explain/explain_text.h"
#include "explain/online_softmax.h"

namespace attn::narration {

using namespace explain_text;  // the narration's text layout: symbols, numbers, columns, equations

// Longer rows narrate the 12 keys with the largest weights; wider dot products show the first 3
// and last 2 terms; wider outputs narrate the first 4 and last 2 components.
inline constexpr int kMaxDetailKeys = 12;
inline constexpr int kMaxDims = 8;
inline constexpr int kMaxComponents = 6;

// Stages in narration order; a --step id maps onto one of them.
enum Stage {
  kProjection,
  kScores,
  kScaled,
  kMasked,
  kWeights,
  kOutput,
  kOutProjection,
  kInputs,
  kLinformer,    // the projected keys and values (narrate_variants.cpp)
  kConvolution,  // the key–query convolution
  kHeadMix,      // head mixing
  kRope,         // RoPE's rotation of q and k (narrate_rope.cpp)
};

// The first n code points of UTF-8 text.
std::string first_code_points(const std::string& s, size_t n);
// "3" or "3..7".
std::string range_text(int lo, int hi);
// "keys 3..7", "key 3" or "no key" (an empty range, hi < lo).
std::string keys_text(int lo, int hi);

// Narrates one query row (or one cell) of one head, stage by stage, into a string.
class Narrator {
 public:
  Narrator(const AttentionTrace& t, const ExplainRequest& r);

  std::string run(const std::vector<Stage>& stages);  // explain.cpp
  // Stages 4 and 5 as FlashAttention's online softmax, keys in blocks of `block`
  // (narrate_online_softmax.cpp).
  std::string run_online(int block);

 private:
  // ---- numbers and names (narrator.cpp) ----------------------------------------------------

  std::string num(double x) const { return compact(x, p_, r_.unicode); }
  // Tokens and names come from files: control characters are escaped (attention/format.h).
  std::string tok(const std::string& s) const {
    return printable_text(r_.unicode ? s : ascii_only(s));
  }

  std::string label(const std::vector<std::string>& tokens, int idx) const;
  std::string qn() const { return label(t_.query_tokens, i_); }
  std::string kn(int j) const { return label(t_.key_tokens, j); }
  std::string quoted_query() const;

  std::string row_text(const Matrix& m, int row) const;

  bool hidden(int j) const;
  uint8_t reason(int j) const;
  bool empty_row() const;
  int visible_count() const;

  void choose_detail_keys();
  bool is_detail(int j) const;
  // Queries and keys are different sequences (an encoder–decoder's cross-attention).
  bool cross() const { return t_.query_tokens != t_.key_tokens; }
  int rest_count() const { return t_.n_k - static_cast<int>(detail_.size()); }
  int rest_visible() const;
  size_t key_label_width() const;

  void heading(int number, const std::string& text);
  void heading(const std::string& number, const std::string& text);
  void line(const std::string& text) { out_ << "   " << text << "\n"; }

  // ---- header and inputs (narrate_inputs.cpp) ----------------------------------------------

  void header(bool full);
  void key_value_table(bool with_query);
  void inputs();

  // ---- 0. projection (narrate_projection.cpp) ----------------------------------------------

  void projection();

  // ---- 1. scores and 2. scaling (narrate_scores.cpp) ---------------------------------------

  std::vector<Segment> dot_segments(int j) const;
  void scores();
  void additive_scores();
  void scaling();

  // ---- 3. mask (narrate_mask.cpp) ----------------------------------------------------------

  std::string reason_text(uint8_t bits, int j) const;
  void mask_rules();
  bool relaxed_by_global(int j) const;
  std::string masked_value_text(int j) const;
  void mask_key_line(int j, size_t w);
  void mask_groups();
  void mask();

  // ---- 4. softmax (narrate_softmax.cpp) ----------------------------------------------------

  void softmax();

  // ---- 4+5. online softmax (narrate_online_softmax.cpp) -----------------------------------

  std::string vec_text(const std::vector<double>& v) const;
  std::string block_keys_text(int first, int last) const;
  void online_block(const OnlineSoftmaxWalk& w, size_t index);
  void online_block_summary(const OnlineBlock& b, size_t index);

  // ---- 5. weighted sum (narrate_weighted_sum.cpp) ------------------------------------------

  void weighted_sum();
  void blend();

  // ---- 6. output projection (narrate_output_projection.cpp) --------------------------------

  void output_projection();

  // ---- variants: Linformer, key–query convolution, head mixing (narrate_variants.cpp) -------

  int focus_key() const;  // the requested key, else the visible key of largest weight
  void linformer();
  void convolution();
  void head_mixing();
  // ---- RoPE (narrate_rope.cpp) -------------------------------------------------------------
  void rope();

  const AttentionTrace& t_;
  const ExplainRequest& r_;
  const Symbols& s_;
  // Precision, query row, its row in the trace's stages (i_ − t_.first_row), query head, its
  // key/value head. q, k, v, x and the masks are whole: they are read at i_.
  const int p_, i_, row_, h_, g_;
  const bool cell_;  // one cell (i, j) rather than the whole row
  const Matrix *q_, *k_, *v_, *scores_, *scaled_, *masked_, *weights_, *output_;
  // With a key–query convolution, the scores before it (what the mask stage shows; masked_ is
  // the convolved); with head mixing, this head's softmax before mixing (weights_ is mixed).
  // Else the same as masked_ and weights_.
  const Matrix *before_conv_, *softmax_weights_;
  std::vector<int> detail_;  // keys narrated in full
  std::ostringstream out_;
};

}  // namespace attn::narration
