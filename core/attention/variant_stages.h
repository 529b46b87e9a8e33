// The staged CPU computation of a problem with variants (attention/variants.h): Linformer's
// projected keys and values, the key–query convolution and head mixing, every stage stored in the
// trace (none derived: AttentionTrace::head would recompute Q·Kᵀ, which these variants change).
// The engine's entry points call these when p.options.variants.any().
#pragma once

#include <string>

#include "attention/attention.h"

namespace attn {

// validate_linformer and validate_multi_token, then the logits bound of the variant's scores.
std::string validate_variants(const AttentionProblem& p);

// begin_trace's part: records the variants; with Linformer n_k = k, key_tokens the virtual keys
// and input_key_tokens the n_k keys of the k and v steps.
void begin_variant_trace(const AttentionProblem& p, AttentionTrace& t);

// Appends [k_proj, v_proj,] scores, scaled, [pre_conv,] masked, [pre_mix,] weights, output, all
// stored, and fills hidden and empty_row. The problem must be whole (not a slice of rows).
void compute_variant_stages_cpu(const AttentionProblem& p, AttentionTrace& t);

// label_stages' part: titles and formulas of the variant's own stages and of those it changes.
void label_variant_stages(const AttentionProblem& p, AttentionTrace& t);

}  // namespace attn
