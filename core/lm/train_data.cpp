// The induction task and text data for lm train (see train_data.h).
#include "lm/train_data.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace attn::lm {
namespace {

constexpr uint64_t kHeldOutSeed = 20261123, kProbeSeed = 1123;

// The probes' segment: a quarter of the context, so the gap before its copy can vary by up to half
// of it; for the induction task at most half the letters, so the filler has letters of its own.
int probe_segment(const TrainSet& set, int T) {
  const int cap =
      set.kind == DataKind::kInduction ? static_cast<int>(set.letters.size()) / 2 : T / 4;
  return std::max(2, std::min(T / 4, cap));
}

}  // namespace

Tokenizer letter_tokenizer() {
  std::vector<std::string> tokens;
  for (int pass = 0; pass < 2; ++pass)  // GPT-2's order: printable bytes first
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      if (printable == (pass == 0)) tokens.push_back(byte_to_unicode()[static_cast<size_t>(b)]);
    }
  std::vector<Merge> merges;
  const std::string space = byte_to_unicode()[' '];  // "Ġ"
  for (char c = 'a'; c <= 'z'; ++c) {
    merges.emplace_back(space, std::string(1, c));
    tokens.push_back(space + c);
  }
  tokens.push_back("<|endoftext|>");
  Tokenizer t;
  std::string error;
  const bool ok = t.build(std::move(tokens), std::move(merges), error);
  assert(ok);
  (void)ok;
  return t;
}

TrainSet induction_set() {
  TrainSet s;
  s.kind = DataKind::kInduction;
  s.tokenizer = letter_tokenizer();
  const std::string space = byte_to_unicode()[' '];
  for (char c = 'a'; c <= 'z'; ++c) {
    s.letters.push_back(s.tokenizer.find(space + c));
    s.bare_letters.push_back(s.tokenizer.find(std::string(1, c)));
  }
  return s;
}

bool text_set(const std::string& corpus, int merges, int context, TrainSet& out,
              std::string& error) {
  TrainSet s;
  s.kind = DataKind::kText;
  s.tokenizer = learn_bpe(corpus, merges);
  std::vector<int> ids = s.tokenizer.encode(corpus);
  const size_t held = ids.size() / 10;
  // Both parts need windows of context + 1 tokens.
  if (held < static_cast<size_t>(context) + 1) {
    error = "the text has " + std::to_string(ids.size()) + " tokens; at least " +
            std::to_string(10 * (context + 1)) + " are needed for a context of " +
            std::to_string(context) + " (a tenth is held out)";
    return false;
  }
  s.heldout.assign(ids.end() - static_cast<long>(held), ids.end());
  ids.resize(ids.size() - held);
  s.train = std::move(ids);
  out = std::move(s);
  return true;
}

std::string check_repeat_range(int repeat_min, int repeat_max, int T) {
  const int lo = repeat_min > 0 ? repeat_min : std::max(2, (T + 1) / 8);
  const int hi = repeat_max > 0 ? repeat_max : std::max(lo, (T + 1) / 3);
  if (repeat_min < 0 || repeat_max < 0) return "repeat_min/repeat_max: not negative";
  if (hi < lo)
    return "repeat_max: " + std::to_string(hi) + " is below repeat_min " + std::to_string(lo);
  if (2 * hi > T + 1)
    return "repeat_max: a segment of " + std::to_string(hi) +
           " tokens and its copy do not fit in a sequence of " + std::to_string(T + 1) +
           " (context " + std::to_string(T) + " + 1)";
  return "";
}

int induction_sequence(const TrainSet& set, Rng& rng, int T, std::vector<int>& out, int& n) {
  const int A = static_cast<int>(set.letters.size());
  const int len = T + 1;
  out.resize(static_cast<size_t>(len));
  for (int& t : out) t = set.letters[static_cast<size_t>(rng.below(A))];
  const int lo = set.repeat_min > 0 ? set.repeat_min : std::max(2, len / 8);
  const int hi = set.repeat_max > 0 ? set.repeat_max : std::max(lo, len / 3);
  assert(lo >= 1 && hi >= lo && 2 * hi <= len);
  n = lo + rng.below(hi - lo + 1);
  // The distance from the original to the copy is uniform over every distance that fits, so no
  // fixed look-back predicts the copy (a head that always reads 15 tokens back would learn a
  // shortcut): only looking at what followed the earlier occurrence does.
  const int distance = n + rng.below(len - 2 * n + 1);
  const int first = rng.below(len - n - distance + 1);
  const int second = first + distance;
  std::copy(out.begin() + first, out.begin() + first + n, out.begin() + second);
  if (rng.below(2) == 0) {
    const auto it = std::find(set.letters.begin(), set.letters.end(), out[0]);
    out[0] = set.bare_letters[static_cast<size_t>(it - set.letters.begin())];
  }
  return second;
}

int repeat_span(std::vector<int>& seq, Rng& rng) {
  const int size = static_cast<int>(seq.size());
  const int lo = std::max(2, size / 16), hi = std::max(lo, size / 4);
  if (size < 2 * lo) return -1;
  const int n = std::min(lo + rng.below(hi - lo + 1), size / 2);
  const int from = rng.below(size - 2 * n + 1);
  const int to = from + n + rng.below(size - (from + 2 * n) + 1);
  std::copy(seq.begin() + from, seq.begin() + from + n, seq.begin() + to);
  return to;
}

int scramble_window(const std::vector<int>& train, Rng& rng, int size, std::vector<int>& out) {
  out.resize(static_cast<size_t>(size));
  const int n_train = static_cast<int>(train.size());
  for (int& t : out) t = train[static_cast<size_t>(rng.below(n_train))];
  // Pieces of segment, gap, copy: the segment's length and the gap vary, so the copy's distance
  // does (from lo to 2·hi), and about two fifths of the window is predictable by copying.
  const int lo = std::max(2, size / 32), hi = std::max(lo, size / 4);
  int first_copy = -1;
  for (int at = 0;;) {
    const int n = lo + rng.below(hi - lo + 1);
    const int gap = rng.below(n + 1);
    const int to = at + n + gap;
    if (to >= size) break;
    const int copied = std::min(n, size - to);
    std::copy(out.begin() + at, out.begin() + at + copied, out.begin() + to);
    if (first_copy < 0) first_copy = to;
    at = to + copied;
  }
  return first_copy;
}

std::vector<int> most_frequent_tokens(const std::vector<int>& ids, int n) {
  std::map<int, long> count;
  for (int t : ids) ++count[t];
  std::vector<std::pair<long, int>> order;
  for (const auto& [t, c] : count) order.push_back({-c, t});
  std::sort(order.begin(), order.end());
  std::vector<int> out;
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < n; ++i)
    out.push_back(order[i].second);
  return out;
}

void sample_batch(const TrainSet& set, Rng& rng, int B, int T, TokenBatch& out) {
  out.B = B;
  out.T = T;
  out.tokens.resize(static_cast<size_t>(B) * T);
  out.targets.resize(static_cast<size_t>(B) * T);
  std::vector<int> seq;
  for (int b = 0; b < B; ++b) {
    if (set.kind == DataKind::kInduction) {
      int n = 0;
      induction_sequence(set, rng, T, seq, n);
    } else if (set.copy_share > 0 && rng.unit() < set.copy_share) {
      scramble_window(set.copy_pool.empty() ? set.train : set.copy_pool, rng, T + 1, seq);
    } else {
      const int start = rng.below(static_cast<int>(set.train.size()) - T);
      seq.assign(set.train.begin() + start, set.train.begin() + start + T + 1);
      // No draw without a share: runs without it keep their batches.
      if (set.repeat_share > 0 && rng.unit() < set.repeat_share) repeat_span(seq, rng);
    }
    std::copy(seq.begin(), seq.begin() + T, out.tokens.begin() + static_cast<long>(b) * T);
    std::copy(seq.begin() + 1, seq.end(), out.targets.begin() + static_cast<long>(b) * T);
  }
}

TokenBatch heldout_batch(const TrainSet& set, int B, int T) {
  TokenBatch out;
  if (set.kind == DataKind::kInduction) {
    Rng rng(kHeldOutSeed);
    sample_batch(set, rng, B, T, out);
    return out;
  }
  // Evenly spaced windows of the held-out text.
  out.B = B;
  out.T = T;
  const size_t span = set.heldout.size() - static_cast<size_t>(T) - 1;
  for (int b = 0; b < B; ++b) {
    const size_t start = B > 1 ? span * static_cast<size_t>(b) / static_cast<size_t>(B - 1) : 0;
    out.tokens.insert(out.tokens.end(), set.heldout.begin() + static_cast<long>(start),
                      set.heldout.begin() + static_cast<long>(start) + T);
    out.targets.insert(out.targets.end(), set.heldout.begin() + static_cast<long>(start) + 1,
                       set.heldout.begin() + static_cast<long>(start) + T + 1);
  }
  return out;
}

TokenBatch repeat_probes(const TrainSet& set, int B, int T) {
  const int n = probe_segment(set, T);
  TokenBatch out;
  out.B = B;
  out.T = T;
  Rng rng(kProbeSeed);
  std::vector<int> seg(static_cast<size_t>(n)), filler(static_cast<size_t>(T - 2 * n));
  for (int b = 0; b < B; ++b) {
    if (set.kind == DataKind::kInduction) {
      std::vector<int> pool = set.letters;  // distinct letters: every copy is unambiguous
      for (int i = 0; i < n; ++i) {
        const int k = i + rng.below(static_cast<int>(pool.size()) - i);
        std::swap(pool[static_cast<size_t>(i)], pool[static_cast<size_t>(k)]);
        seg[static_cast<size_t>(i)] = pool[static_cast<size_t>(i)];
      }
      // The filler uses the other letters only, so the copy's letters occur once before it.
      for (int& f : filler)
        f = pool[static_cast<size_t>(n + rng.below(static_cast<int>(pool.size()) - n))];
    } else {
      const int span = static_cast<int>(set.heldout.size()) - n;
      const int start = rng.below(span);
      seg.assign(set.heldout.begin() + start, set.heldout.begin() + start + n);
      const int other = rng.below(static_cast<int>(set.heldout.size()) - (T - 2 * n));
      filler.assign(set.heldout.begin() + other, set.heldout.begin() + other + (T - 2 * n));
    }
    // The gap between the segment and its copy, spread evenly over the probes from 0 to T − 2n;
    // the rest of the filler comes before the segment, so the copy ends the sequence.
    const int gap = B > 1 ? (T - 2 * n) * b / (B - 1) : 0;
    const int first = T - 2 * n - gap, copy = first + n + gap;
    const size_t row = out.tokens.size();
    out.tokens.insert(out.tokens.end(), filler.begin(), filler.begin() + first);
    out.tokens.insert(out.tokens.end(), seg.begin(), seg.end());
    out.tokens.insert(out.tokens.end(), filler.begin() + first, filler.end());
    out.tokens.insert(out.tokens.end(), seg.begin(), seg.end());
    for (int t = 0; t < T; ++t)
      out.targets.push_back(t >= copy && t + 1 < T ? out.tokens[row + static_cast<size_t>(t) + 1]
                                                   : -1);
  }
  return out;
}

std::vector<int> probe_tokens(const TrainSet& set, int T) {
  const TokenBatch p = repeat_probes(set, 1, T);
  return p.tokens;
}

}  // namespace attn::lm
