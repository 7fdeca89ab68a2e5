#include "autograd/functions/nn.h"

#include "core/dispatch.h"
#include "core/ops.h"

namespace wick {

namespace {
Tensor empty_if(bool needed, const Shape& shape, const Tensor& like) {
  return needed ? empty(shape, options_of(like)) : Tensor();
}
}  // namespace

TensorList Conv2dBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), w = weight.unpack(*this);
  Tensor g = grad.contiguous();
  Tensor grad_input = empty_if(next[0] != nullptr, x.shape(), g);
  Tensor grad_weight = empty_if(next[1] != nullptr, w.shape(), g);
  Tensor grad_bias = empty_if(next.size() > 2 && next[2] != nullptr, Shape{w.size(0)}, g);
  dispatch<Conv2dBackwardKernel>(OpKey::conv2d_backward, g.device(), g, x, w, grad_input,
                                 grad_weight, grad_bias, params);
  return {grad_input, grad_weight, grad_bias};
}

TensorList MaxPool2dBackward::apply(const Tensor& grad) {
  Tensor grad_input = empty(input_meta[0].shape, options_of(grad));
  dispatch<MaxPool2dBackwardKernel>(OpKey::max_pool2d_backward, grad.device(), grad.contiguous(),
                                    indices.unpack(*this), grad_input, params);
  return {grad_input};
}

TensorList AvgPool2dBackward::apply(const Tensor& grad) {
  Tensor grad_input = empty(input_meta[0].shape, options_of(grad));
  OpKey op = adaptive ? OpKey::adaptive_avg_pool2d_backward : OpKey::avg_pool2d_backward;
  dispatch<AvgPool2dBackwardKernel>(op, grad.device(), grad.contiguous(), grad_input, params);
  return {grad_input};
}

TensorList BatchNormBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), w = weight.unpack(*this);
  Tensor g = grad.to(x.dtype()).contiguous();
  Tensor grad_input = empty_if(next[0] != nullptr, x.shape(), x);
  Tensor grad_weight = empty_if(next[1] != nullptr, Shape{x.size(1)}, x);
  Tensor grad_bias = empty_if(next[2] != nullptr, Shape{x.size(1)}, x);
  dispatch<BatchNormBackwardKernel>(OpKey::batch_norm_backward, g.device(), g, x, w,
                                    save_mean.unpack(*this), save_invstd.unpack(*this), grad_input,
                                    grad_weight, grad_bias);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace wick
