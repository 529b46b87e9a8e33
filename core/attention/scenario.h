// A scenario: tokens, Q/K/V (or embeddings X with projection weights), masks, scale and
// temperature; validated here, read and written as JSON by io/scenario_json.h, and run on a
// backend by backends/compute.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.h"

namespace attn {

// Multi-head attention from token embeddings (Q = X·W_Q; in index notation Q^{hia} = X^{ib}
// W_Q^{hba}).
struct ProjectionSpec {
  Matrix x;       // (n_q, d_model): the query-side tokens
  Matrix x_kv;    // (n_k, d_model): the key/value-side tokens; empty (0x0) = self-attention on x
  HeadStack w_q;  // H    x (d_model, d_k)
  HeadStack w_k;  // H_kv x (d_model, d_k)
  HeadStack w_v;  // H_kv x (d_model, d_v)
  Matrix w_o;     // (H·d_v, d_out); empty = no output projection
  RowVector b_o;  // (d_out); empty = zero bias
};

struct Scenario {
  std::string name;
  std::string description;
  std::vector<std::string> query_tokens;
  std::vector<std::string> key_tokens;  // empty = the query tokens (self-attention)
  bool use_projection = false;
  AttentionInput qkv;         // used when !use_projection
  ProjectionSpec projection;  // used when use_projection
  AttentionOptions options;
  // Q and K before RoPE (a head of a RoPE model; qkv holds them after): the trace then has a
  // `rope` step. Not read from or written to scenario files.
  RopeInputs rope;

  const std::vector<std::string>& keys() const {
    return key_tokens.empty() ? query_tokens : key_tokens;
  }
};

// Checks everything a user can get wrong; returns "" or a message naming the field and index.
std::string validate_scenario(const Scenario& s);

// Q, K, V (projected when use_projection) and the options. The scenario must be valid.
AttentionProblem to_problem(const Scenario& s);

// The same tokens, shapes, masks, scale and temperature with fresh Q, K and V drawn from `seed`:
// one decimal each, in [0.1, 0.9] when the scenario's own inputs are never negative, else in
// [−0.9, 0.9] — numbers a student can work with by hand (a worksheet per student). A scenario
// with projections becomes a plain one with Q, K and V of the projected shapes.
Scenario with_random_inputs(const Scenario& s, uint64_t seed);

// The angles RoPE turns each pair by, (rows, d_k/2): row p at position position0 + p.
Matrix rope_angles(const RopeInputs& r, int rows, int position0);
// Row `row` of m turned by RoPE at position `pos` (rotate-half form: pair (i, i + d/2) by
// pos · inv_freq[i]), in double.
std::vector<double> rope_rotated(const Matrix& m, int row, int pos,
                                 const std::vector<double>& inv_freq);
// Whether the scenario's Q and K, head by head, are its rope's q_before and k_before turned by
// RoPE (to float rounding): false once Q or K has been edited — the trace then has no rope step.
bool rope_matches(const Scenario& s);
// Adds the `rope` step (the angles of the query positions) after v, and keeps `r` in the trace.
void add_rope_step(const RopeInputs& r, AttentionTrace& trace);

// With projection: adds the steps x (and x_kv) before q, k, v, and concat, projected
// (concat·W_O + b_O) and head_contrib (each head's O_h·W_O^(h), whose sum plus b_O is the same
// result) after the attention stages of `trace`; sets its name and tokens from the scenario.
void add_scenario_steps(const Scenario& s, AttentionTrace& trace);

}  // namespace attn
