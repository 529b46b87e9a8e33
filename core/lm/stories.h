// Short stories for young children, written by a small grammar: the corpus the project writes
// itself (no text needs to be downloaded), so that a small model trained for a few minutes makes
// sentences that make sense. Names come back within a story, as in real text, which is what an
// induction head copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::lm {

// `count` stories (each a paragraph ending in "The end.", separated by blank lines), the same text
// for the same seed on every platform.
std::string write_stories(int count, uint64_t seed);
// The bytes write_stories(count, seed) returns, counted one story at a time without keeping the
// text: a run's corpus is checked against the limits before it is written.
size_t stories_bytes(int count, uint64_t seed);

}  // namespace attn::lm
