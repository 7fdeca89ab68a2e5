#include "autograd/functions/view.h"

#include "core/ops.h"

namespace wick {

TensorList ReshapeBackward::apply(const Tensor& grad) {
  return {grad.reshape(input_meta[0].shape)};
}

TensorList PermuteBackward::apply(const Tensor& grad) {
  DimList inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
  return {grad.permute(inverse)};
}

TensorList ExpandBackward::apply(const Tensor& grad) { return {sum_to(grad, input_meta[0].shape)}; }

TensorList SliceBackward::apply(const Tensor& grad) {
  Tensor result = zeros(input_meta[0].shape, options_of(grad));
  result.slice(dim, start, end, step).copy_(grad);
  return {result};
}

TensorList SelectBackward::apply(const Tensor& grad) {
  Tensor result = zeros(input_meta[0].shape, options_of(grad));
  result.select(dim, index).copy_(grad);
  return {result};
}

TensorList AsStridedBackward::apply(const Tensor& grad) {
  const Shape& input_shape = input_meta[0].shape;
  // Positions are relative to the input's first element, with the input read contiguously.
  int64_t input_numel = numel(input_shape);
  Tensor positions = arange(input_numel, TensorOptions(kInt64).with_device(grad.device()))
                         .as_strided(shape, strides, offset);
  Tensor flat = zeros(Shape{input_numel}, options_of(grad));
  flat = flat.scatter_add(0, positions.reshape(Shape{-1}), grad.reshape(Shape{-1}));
  return {flat.reshape(input_shape)};
}

TensorList CopyBackward::apply(const Tensor& grad) { return {grad.to(input_meta[0].device)}; }

TensorList CatBackward::apply(const Tensor& grad) {
  TensorList grads;
  int64_t start = 0;
  for (const InputMeta& meta : input_meta) {
    int64_t length = meta.shape.size() == 0 ? 0 : meta.shape[dim];
    grads.push_back(grad.narrow(dim, start, length));
    start += length;
  }
  return grads;
}

}  // namespace wick
