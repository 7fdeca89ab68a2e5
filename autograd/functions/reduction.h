// Backward nodes of the reductions.
#pragma once

#include "autograd/node.h"
#include "core/op_table.h"

namespace wick {

// sum and mean: the gradient is broadcast back over the reduced dims (times 1/n for mean).
struct SumBackward : Node {
  DimVec dims;  // reduced dims, sorted; all dims when the input was reduced to a scalar
  bool keepdim = false;
  double scale = 1.0;
  const char* name() const override {
    return scale == 1.0 ? op_info(OpKey::sum).backward : "MeanBackward";
  }
  TensorList apply(const Tensor& grad) override;
};

// max(dim) / min(dim): the gradient goes to the element each index chose.
struct MaxDimBackward : Node {
  SavedTensor indices;  // keepdim form
  int64_t dim = 0;
  bool keepdim = false;
  OpKey op = OpKey::max_dim;  // or min_dim
  const char* name() const override { return op_info(op).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { indices.reset(); }
};

// cumsum: the gradient of x_k is the sum of the output gradients from k on (a reversed cumsum).
// cumprod: the same sum weighted by d y_j / d x_k = prod_{i <= j, i != k} x_i.
struct ScanBackward : Node {
  OpKey op = OpKey::cumsum;
  int64_t dim = 0;
  SavedTensor input, result;  // cumprod only
  const char* name() const override { return op_info(op).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), result.reset(); }
};

// max() / min() of all elements: shared evenly among the elements equal to the result.
struct MaxAllBackward : Node {
  SavedTensor input, result;
  const char* name() const override { return "MaxAllBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), result.reset(); }
};

// amax / amin over dims: shared evenly among the elements equal to the result.
struct AmaxBackward : Node {
  SavedTensor input, result;  // result in keepdim form
  DimVec dims;
  bool is_max = true;
  const char* name() const override { return op_info(is_max ? OpKey::amax : OpKey::amin).backward; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), result.reset(); }
};

// The 2-norm: x / norm, and 0 where the norm is 0 (where x / norm would be 0 / 0).
struct Norm2Backward : Node {
  SavedTensor input, result;  // result in keepdim form
  DimVec dims;
  const char* name() const override { return "NormBackward"; }
  TensorList apply(const Tensor& grad) override;
  void release_saved() override { input.reset(), result.reset(); }
};

// The shape a reduction's result has with keepdim: the input's shape with `dims` set to 1.
Shape keepdim_shape(const Shape& input, const DimVec& dims);

}  // namespace wick
