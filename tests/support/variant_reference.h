// Double-precision reference for the variants of cli.md's "Variants beyond masks" (Linformer, the
// key–query convolution, head mixing), written as plain loops from the contract's formulas; the
// masks' visibility comes from reference_attention (its −∞ cells).
#pragma once

#include "reference.h"

namespace attn::test {

struct VariantRef {
  std::vector<RefMat> k_proj, v_proj;  // per key/value head (Linformer), else empty
  std::vector<RefMat> scores, scaled;  // per query head
  std::vector<RefMat> pre_conv;        // S with −∞ where hidden (with a convolution)
  std::vector<RefMat> masked;          // the stage softmax reads
  std::vector<RefMat> pre_mix;         // softmax weights before head mixing (with mixing)
  std::vector<RefMat> weights, output;
};

VariantRef reference_variants(const AttentionProblem& p);

}  // namespace attn::test
