#include "autograd/functions/linalg.h"

#include "core/ops.h"

namespace wick {

TensorList BmmBackward::apply(const Tensor& grad) {
  Tensor ga, gb;
  if (next[0]) ga = bmm(grad, b.unpack(*this).transpose(1, 2));
  if (next[1]) gb = bmm(a.unpack(*this).transpose(1, 2), grad);
  return {ga, gb};
}

TensorList SoftmaxBackward::apply(const Tensor& grad) {
  Tensor y = result.unpack(*this);
  if (is_log) return {grad - exp(y) * grad.sum({dim}, /*keepdim=*/true)};
  return {y * (grad - (grad * y).sum({dim}, /*keepdim=*/true))};
}

}  // namespace wick
