// Scaled dot-product attention: softmax(scale q k^T + mask) v, computed by a blocked kernel that
// never materialises the L x S scores (Note [blocked attention] in core/cpu/attention_kernels.cpp),
// and the explicit formula, which does (for dropout, the attention weights, and create_graph).
#pragma once

#include <optional>

#include "core/tensor.h"

namespace wick {

// query [..., L, E], key [..., S, E], value [..., S, Ev] with equal leading dims; returns
// [..., L, Ev]. attn_mask is undefined or broadcastable to [..., L, S]: bool (true = attend) or
// floating (added to the scores). is_causal hides key j from query i when j > i (it excludes
// attn_mask, as in PyTorch). scale defaults to 1 / sqrt(E). No dropout here: see
// nn::functional::scaled_dot_product_attention.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// The same attention by the explicit formula, returning the probabilities softmax(scale q k^T +
// mask) [..., L, S] too. Every step is a differentiable op.
struct AttentionResult {
  Tensor output, weights;
};
AttentionResult scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                                  const Tensor& value,
                                                  const Tensor& attn_mask = Tensor(),
                                                  bool is_causal = false,
                                                  std::optional<double> scale = std::nullopt);

// The checks both paths share, and the additive form of a mask: a bool mask becomes 0 where it
// attends and -inf elsewhere, a floating one is cast to `dtype`. Returns an undefined tensor for
// an undefined mask.
void check_attention_inputs(const char* op, const Tensor& query, const Tensor& key,
                            const Tensor& value, const Tensor& attn_mask, bool is_causal);
Tensor additive_attention_mask(const Tensor& attn_mask, DType dtype);

}  // namespace wick
