// tokenizer.json's BPE model on one pre-tokenized word: characters to ids (byte fallback, unk),
// then merges by rank, as the tokenizers library's BPE::merge_word and Word::merge_all.
#include <unicode/utf8.h>

#include <queue>

#include "lm/hf_pipeline.h"

namespace attn::lm::hf {
namespace {

struct Symbol {
  int id;
  int prev, next;  // neighbours in the word, -1 at the ends
  bool gone = false;
};

struct Candidate {
  int rank, pos, new_id;
  // std::priority_queue pops the largest: the lowest rank, then the leftmost, is the largest.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

uint64_t pair_key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

void Bpe::tokenize(const std::string& word, std::vector<int>& ids) const {
  if (word.empty()) return;
  if (ignore_merges) {
    const auto it = vocab.find(word);
    if (it != vocab.end()) {
      ids.push_back(it->second);
      return;
    }
  }
  // Characters to ids.
  std::vector<Symbol> sym;
  int unk_run = -1;  // a pending unk (fuse_unk joins consecutive ones)
  auto add = [&](int id) { sym.push_back({id, static_cast<int>(sym.size()) - 1, -1}); };
  const auto* s = reinterpret_cast<const uint8_t*>(word.data());
  const auto n = static_cast<int32_t>(word.size());
  for (int32_t i = 0; i < n;) {
    const int32_t at = i;
    UChar32 c;
    U8_NEXT(s, i, n, c);
    (void)c;
    std::string piece = word.substr(static_cast<size_t>(at), static_cast<size_t>(i - at));
    if (at > 0) piece = continuing_subword_prefix + piece;
    if (i == n) piece += end_of_word_suffix;
    const auto it = vocab.find(piece);
    if (it != vocab.end()) {
      if (unk_run >= 0) add(unk_run);
      unk_run = -1;
      add(it->second);
      continue;
    }
    if (byte_fallback) {
      bool all = true;
      for (unsigned char b : piece) all = all && byte_ids[b] >= 0;
      if (all) {
        // As the library, a pending unk stays pending across the bytes.
        for (unsigned char b : piece) add(byte_ids[b]);
        continue;
      }
    }
    if (unk >= 0) {
      if (unk_run >= 0 && !fuse_unk) add(unk_run);
      unk_run = unk;
    }
    // No unk_token: the character is dropped, as the library does.
  }
  if (unk_run >= 0) add(unk_run);
  for (size_t k = 0; k + 1 < sym.size(); ++k) sym[k].next = static_cast<int>(k + 1);
  if (sym.size() < 2 || merges.empty()) {
    for (const Symbol& x : sym) ids.push_back(x.id);
    return;
  }

  std::priority_queue<Candidate> queue;
  auto push_pair = [&](int pos) {
    const int next = sym[static_cast<size_t>(pos)].next;
    if (next < 0) return;
    const auto m =
        merges.find(pair_key(sym[static_cast<size_t>(pos)].id, sym[static_cast<size_t>(next)].id));
    if (m != merges.end()) queue.push({m->second.first, pos, m->second.second});
  };
  for (size_t k = 0; k + 1 < sym.size(); ++k) push_pair(static_cast<int>(k));
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = sym[static_cast<size_t>(top.pos)];
    if (left.gone || left.next < 0) continue;
    Symbol& right = sym[static_cast<size_t>(left.next)];
    // A stale entry: the pair at this position has changed since it was queued (checked by the
    // merged id alone, as the library does).
    const auto m = merges.find(pair_key(left.id, right.id));
    if (m == merges.end() || m->second.second != top.new_id) continue;
    left.id = top.new_id;
    right.gone = true;
    left.next = right.next;
    if (right.next >= 0) sym[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }
  for (const Symbol& x : sym)
    if (!x.gone) ids.push_back(x.id);
}

}  // namespace attn::lm::hf
