// The backward node of scaled dot-product attention (core/ops/attention.cpp).
#pragma once

#include "autograd/node.h"
#include "core/kernels.h"
#include "core/op_table.h"

namespace wick {

// inputs: query, key, value ([B, L, E], [B, S, E], [B, S, Ev], contiguous). The backward kernel
// recomputes the probabilities from the saved log-sum-exp, tile by tile (Note [blocked attention]
// in core/cpu/attention_kernels.cpp). A create_graph backward uses the explicit formula instead,
// whose ops are differentiable again.
struct ScaledDotProductAttentionBackward : Node {
  SavedTensor query, key, value, output, logsumexp;
  Tensor mask;  // additive [B, L, S] view, or undefined; a constant (never requires grad)
  AttentionParams params;
  const char* name() const override {
    return op_info(OpKey::scaled_dot_product_attention).backward;
  }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override {
    query.reset(), key.reset(), value.reset(), output.reset(), logsumexp.reset();
    mask = Tensor();
  }
};

}  // namespace wick
