// Backward nodes of matrix products and softmax.
#pragma once

#include "autograd/node.h"
#include "core/op_table.h"

namespace wick {

// out = a @ b (batched): d(a) = grad @ b^T, d(b) = a^T @ grad.
// See Note [gradients in their input's layout].
struct BmmBackward : Node {
  SavedTensor a, b;
  bool a_column_major = false, b_column_major = false;
  const char* name() const override { return op_info(OpKey::bmm).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { a.reset(), b.reset(); }
};

// y = softmax(x): d(x) = y * (grad - sum(grad * y)); y = log_softmax(x): d(x) = grad - exp(y) *
// sum(grad), both sums along `dim`.
struct SoftmaxBackward : Node {
  SavedTensor result;
  int64_t dim = 0;
  bool is_log = false;
  const char* name() const override {
    return op_info(is_log ? OpKey::log_softmax : OpKey::softmax).backward;
  }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { result.reset(); }
};

}  // namespace wick
