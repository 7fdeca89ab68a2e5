// Backward nodes of views, copies and joins.
#pragma once

#include <string>
#include <vector>

#include "autograd/node.h"
#include "core/ops.h"

namespace wick {

// Scatters `grad` into a zero tensor of `input_shape` at the positions `view_of` selects from it,
// adding where positions repeat. Made of differentiable ops (scatter_add is linear in its
// source), so it serves the create_graph backward of every view op.
template <class View>
Tensor scatter_into_zeros(const Tensor& grad, const Shape& input_shape, View view_of) {
  int64_t input_numel = numel(input_shape);
  Tensor positions = view_of(
      arange(input_numel, TensorOptions(kInt64).with_device(grad.device())).reshape(input_shape));
  Tensor flat = zeros(Shape{input_numel}, options_of(grad));
  flat = flat.scatter_add(0, positions.reshape(Shape{-1}), grad.reshape(Shape{-1}));
  return flat.reshape(input_shape);
}

// reshape, view, flatten, squeeze, unsqueeze: the gradient takes the input's shape back.
struct ReshapeBackward : Node {
  const char* op_name = "ReshapeBackward";
  const char* name() const override { return op_name; }
  TensorList apply(const Tensor& grad) override;
};

struct PermuteBackward : Node {
  DimList dims;
  const char* name() const override { return "PermuteBackward"; }
  TensorList apply(const Tensor& grad) override;
};

struct ExpandBackward : Node {
  const char* name() const override { return "ExpandBackward"; }
  TensorList apply(const Tensor& grad) override;
};

// slice and narrow: the gradient lands in the sliced positions of a zero tensor.
struct SliceBackward : Node {
  int64_t dim = 0, start = 0, end = 0, step = 1;
  const char* name() const override { return "SliceBackward"; }
  TensorList apply(const Tensor& grad) override;
};

struct SelectBackward : Node {
  int64_t dim = 0, index = 0;
  const char* name() const override { return "SelectBackward"; }
  TensorList apply(const Tensor& grad) override;
};

// as_strided: element i of the output is element positions[i] of the input's memory, so the
// gradient is scattered back to those positions (adding where they repeat).
struct AsStridedBackward : Node {
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // relative to the input's own offset
  const char* name() const override { return "AsStridedBackward"; }
  TensorList apply(const Tensor& grad) override;
};

// clone, contiguous and to(): the gradient is copied back to the input's device (the engine
// converts it to the input's dtype).
struct CopyBackward : Node {
  const char* op_name = "CloneBackward";
  const char* name() const override { return op_name; }
  TensorList apply(const Tensor& grad) override;
};

struct CatBackward : Node {
  int64_t dim = 0;
  const char* name() const override { return "CatBackward"; }
  TensorList apply(const Tensor& grad) override;
};

}  // namespace wick
