// Backward nodes of views, copies and joins.
#pragma once

#include <string>
#include <vector>

#include "autograd/node.h"

namespace wick {

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
