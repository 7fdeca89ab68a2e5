#include "autograd/functions/view.h"

#include "core/grad_mode.h"
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
  if (GradMode::is_enabled()) {  // copy_ into a view is not recorded; scatter instead
    return {scatter_into_zeros(grad, input_meta[0].shape,
                               [&](const Tensor& p) { return p.slice(dim, start, end, step); })};
  }
  Tensor result = zeros(input_meta[0].shape, options_of(grad));
  result.slice(dim, start, end, step).copy_(grad);
  return {result};
}

TensorList SelectBackward::apply(const Tensor& grad) {
  if (GradMode::is_enabled()) {
    return {scatter_into_zeros(grad, input_meta[0].shape,
                               [&](const Tensor& p) { return p.select(dim, index); })};
  }
  Tensor result = zeros(input_meta[0].shape, options_of(grad));
  result.select(dim, index).copy_(grad);
  return {result};
}

TensorList AsStridedBackward::apply(const Tensor& grad) {
  // Positions are relative to the input's first element, with the input read contiguously.
  return {scatter_into_zeros(grad, input_meta[0].shape, [&](const Tensor& p) {
    return p.as_strided(shape, strides, offset);
  })};
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
