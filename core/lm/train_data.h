// What `lm train` learns from: (a) the induction task — sequences of random letters in which a
// segment occurs twice, so the second occurrence can only be predicted by copying — and (b) text,
// tokenised with byte-level BPE merges learned from it. Batches come from a seeded generator; the
// held-out batch and the repeat probes (a segment, then the same segment again) are fixed.
#pragma once

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lm/tokenizer.h"

namespace attn::lm {

// Uniform draws from a 64-bit Mersenne Twister, whose output the C++ standard fixes: the same
// numbers on every platform (the standard distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int below(int n) { return static_cast<int>(g_() % static_cast<uint64_t>(n)); }  // [0, n)
  double unit() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }           // [0, 1)
  // The generator's state as text (the standard's stream form), and back: a resumed training run
  // draws the same batches as one that never stopped. False when `text` is not such a state.
  std::string state() const {
    std::ostringstream s;
    s << g_;
    return s.str();
  }
  bool set_state(const std::string& text) {
    std::istringstream s(text);
    std::mt19937_64 g;
    if (!(s >> g)) return false;
    g_ = g;
    return true;
  }

 private:
  std::mt19937_64 g_;
};

// The letters of the induction task, each one token: " a" … " z" (GPT-2's byte-level form of a
// space and a letter, made by 26 merges), so "q x m q x m" typed by a student is one token per
// letter. Ids 0–255 are the bytes, 256–281 the letters, 282 <|endoftext|>.
Tokenizer letter_tokenizer();

// B sequences of T tokens and their next-token targets (−1: no loss at that position).
struct TokenBatch {
  int B = 0, T = 0;
  std::vector<int> tokens, targets;  // (B, T) each
};

enum class DataKind { kInduction, kText };

struct TrainSet {
  DataKind kind = DataKind::kInduction;
  Tokenizer tokenizer;
  std::vector<int> letters;       // induction: the ids of " a" … " z"
  std::vector<int> bare_letters;  // induction: "a" … "z" (a sentence's first letter has no space)
  std::vector<int> train, heldout;  // text: the token stream, split 90 / 10
  // Induction: the repeated segment's length range in tokens; 0 takes the defaults, (T+1)/8 and
  // (T+1)/3 (at least 2). Longer segments make more of each sequence predictable by copying.
  int repeat_min = 0, repeat_max = 0;
  // Text: the share of training windows in which a span of the window is written again later in
  // it (repeat_span), so copying pays on real words: induction heads form. 0 = plain windows.
  double repeat_share = 0;
  // Text: the share of training windows made of tokens drawn one by one from random places in the
  // training text (so no sentence predicts the next token), with segments written again at varied
  // distances: only copying what followed the earlier occurrence predicts the copies, the pure
  // induction signal (scramble_window). 0 = none.
  double copy_share = 0;
  // Text: the tokens scrambled windows draw from, each as likely as the next; empty = the training
  // text itself (each token as often as it occurs there).
  std::vector<int> copy_pool;
};

// The `n` tokens that occur most often in `ids` (fewer when there are fewer distinct ones), most
// frequent first, ties by id.
std::vector<int> most_frequent_tokens(const std::vector<int>& ids, int n);

// An error naming the option when the repeat range does not fit a context of T, else "".
std::string check_repeat_range(int repeat_min, int repeat_max, int T);

// The induction task's data set.
TrainSet induction_set();
// Text: learns up to `merges` BPE merges from `corpus` (UTF-8), encodes it, keeps the last tenth
// for held-out figures. False with an error when the text is too short for `context` tokens.
bool text_set(const std::string& corpus, int merges, int context, TrainSet& out,
              std::string& error);

// One induction sequence of T + 1 tokens: random letters in which a segment of n letters
// (repeat_min ≤ n ≤ repeat_max, by default (T+1)/8 ≤ n ≤ (T+1)/3) occurs twice, the copy after the
// original at a distance drawn uniformly from those that fit; the first token is a letter without
// its space half of the time. Returns the copy's start and sets n.
int induction_sequence(const TrainSet& set, Rng& rng, int T, std::vector<int>& out, int& n);

// Writes a span of `seq` again later in it: n tokens, (size)/16 ≤ n ≤ (size)/4 (at least 2), copied
// over the tokens at a distance drawn uniformly from those that fit (from n to size − n), so no
// fixed look-back predicts the copy. Returns the copy's start.
int repeat_span(std::vector<int>& seq, Rng& rng);

// A window of `size` tokens each drawn from a random place in `train`, cut into pieces of a
// segment (size/32 ≤ n ≤ size/4 tokens, at least 2), a gap of 0 to n tokens and the segment again:
// the words are real, their order is noise, and the copies — about two fifths of the window, at
// distances that vary — can only be predicted by induction. Returns the first copy's start, or −1
// when the window is too short for one.
int scramble_window(const std::vector<int>& train, Rng& rng, int size, std::vector<int>& out);

// A training batch: induction sequences, or windows of T + 1 tokens of the training text (a
// copy_share of them scrambled windows, a repeat_share of the rest with a span repeated).
void sample_batch(const TrainSet& set, Rng& rng, int B, int T, TokenBatch& out);

// The fixed held-out batch (its own seed): fresh induction sequences, or windows of held-out text.
TokenBatch heldout_batch(const TrainSet& set, int B, int T);

// Repeat probes, B sequences of T tokens: a segment of n = T/4 tokens (for the induction task
// distinct random letters, at most 13; otherwise a window of held-out text), a gap of filler, and
// the same segment again, ending the sequence (the rest of the filler comes first). The gap grows
// evenly from 0 in the first probe to T − 2n in the last, so the copy's distance varies from n to
// T − n and no head that looks a fixed number of tokens back can predict most copies; only one
// that looks up what followed the earlier occurrence can. The induction task's filler uses
// letters not in the segment, so every copy is unambiguous. Targets are set only on the copy (−1
// elsewhere; its first token, after the filler, cannot be predicted): what copying can predict.
// Fixed seed.
TokenBatch repeat_probes(const TrainSet& set, int B, int T);

// The fixed sentence the live view draws: the first repeat probe.
std::vector<int> probe_tokens(const TrainSet& set, int T);

}  // namespace attn::lm
