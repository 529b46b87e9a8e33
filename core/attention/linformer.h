// Linformer (Wang et al., 2020): projections E and F of shape (k, n_k) map
// the keys and values to k rows, K̃ = E·K and Ṽ = F·V, and every query attends to those k
// "virtual keys": O(n·k) cells instead of O(n²).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

// "" or a message naming the field, head and shape: E and F together, 1 or H_kv matrices of one
// shape (k, n_k) with k >= 1 and n_k the problem's, finite; no mask that names key positions.
std::string validate_linformer(const AttentionProblem& p);

// The label of virtual key j: "k̃0", "k̃1", …
std::string virtual_key_token(int j);

// `heads` random projections (k, n_k) with entries N(0, 1/k), as the Linformer paper draws them,
// the same for the same seed on every machine.
HeadStack random_linformer_projection(int heads, int k, int n_k, uint64_t seed);

// The mean |O_full − O_linformer| over every output cell of every head, for `full` (a problem
// without variants) against the same Q, K, V with random E and F (one pair shared by the key/value
// heads, drawn from `seed`) projecting to each k of `ks` in turn: how much accuracy k buys.
// `keep_going` (when given) is told how many ks are done after each; false stops there, and the
// errors of those done are returned.
std::vector<double> linformer_error_by_k(
    const AttentionProblem& full, const std::vector<int>& ks, uint64_t seed,
    const std::function<bool(size_t done)>& keep_going = nullptr);

}  // namespace attn
