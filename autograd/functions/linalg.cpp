#include "autograd/functions/linalg.h"

#include "core/ops.h"

namespace wick {

// Note [gradients in their input's layout]: a Linear layer multiplies by weight.t(), a
// column-major view. Its gradient computed as a^T @ grad is row-major in the view's shape, so the
// transpose back to the weight's shape is column-major, and accumulating it into .grad costs a
// strided copy of the whole weight (in the MNIST MLP's step, a tenth of the time). Computed as
// (grad^T @ a)^T instead - the same product, operands swapped - the gradient comes out in its
// input's layout and the transpose back is contiguous. PyTorch's mm_mat2_backward does the same.
TensorList BmmBackward::apply(const Tensor& grad) {
  Tensor ga, gb;
  if (next[0]) {
    ga = a_column_major ? bmm(b.unpack(*this), grad.transpose(1, 2)).transpose(1, 2)
                        : bmm(grad, b.unpack(*this).transpose(1, 2));
  }
  if (next[1]) {
    gb = b_column_major ? bmm(grad.transpose(1, 2), a.unpack(*this)).transpose(1, 2)
                        : bmm(a.unpack(*this).transpose(1, 2), grad);
  }
  return {ga, gb};
}

TensorList SoftmaxBackward::apply(const Tensor& grad) {
  Tensor y = result.unpack(*this);
  if (is_log) return {grad - exp(y) * grad.sum({dim}, /*keepdim=*/true)};
  return {y * (grad - (grad * y).sum({dim}, /*keepdim=*/true))};
}

}  // namespace wick
