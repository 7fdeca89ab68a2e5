#include "autograd/functions/reduction.h"

#include "autograd/grad_mode.h"
#include "core/ops.h"

namespace wick {

Shape keepdim_shape(const Shape& input, const DimVec& dims) {
  Shape shape = input;
  for (int64_t d : dims) shape[d] = 1;
  return shape;
}

TensorList SumBackward::apply(const Tensor& grad) {
  const Shape& input = input_meta[0].shape;
  Tensor g = grad.reshape(keepdim_shape(input, dims)).expand(input);
  return {scale == 1.0 ? g : g * scale};
}

TensorList MaxDimBackward::apply(const Tensor& grad) {
  const Shape& input = input_meta[0].shape;
  Tensor idx = indices.unpack(*this);
  Tensor g = keepdim ? grad : grad.unsqueeze(dim);
  return {zeros(input, options_of(grad)).scatter_add(dim, idx, g)};
}

TensorList MaxAllBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  Tensor mask = (x == y).to(grad.dtype());
  return {mask * (grad / mask.sum())};
}

TensorList AmaxBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  Tensor g = grad.reshape(y.shape());
  Tensor mask = (x == y).to(grad.dtype());
  return {mask * (g / sum(mask, dims.vec(), /*keepdim=*/true))};
}

TensorList Norm2Backward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  // The saved norm has no history (the output is its reshape); recompute it for create_graph.
  if (GradMode::is_enabled()) y = sqrt(sum(x * x, dims.vec(), /*keepdim=*/true));
  Tensor scale = grad.reshape(y.shape()) / y;
  return {x * masked_fill(scale, y == 0, 0.0)};
}

}  // namespace wick
